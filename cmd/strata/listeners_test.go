package main

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/sasl"
)

// boundAt is a listener that only has an address: what
// advertisedAddresses reads of a bound one.
type boundAt string

func (a boundAt) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (a boundAt) Close() error              { return nil }
func (a boundAt) Addr() net.Addr            { return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(string(a))) }

// A listener advertises its entry of advertised.listeners when that names
// it with a port, else its bound address, with 127.0.0.1 for every
// interface.
func TestAdvertisedAddresses(t *testing.T) {
	bound := func(name, addr string) boundListener {
		return boundListener{cfg: config.Listener{Name: name}, ln: boundAt(addr)}
	}
	ls := []boundListener{bound("A", "127.0.0.1:40001"), bound("B", "[::]:40002"), bound("C", "0.0.0.0:40003")}
	cfg := &config.Broker{Raw: map[string]string{"advertised.listeners": "A://a.example:9092,C://c.example:0"},
		AdvertisedListeners: []config.Listener{{Name: "A", Host: "a.example", Port: 9092}, {Name: "C", Host: "c.example"}},
		Listeners:           []config.Listener{{Name: "A"}, {Name: "B"}, {Name: "C"}}}
	got, err := advertisedAddresses(cfg, ls)
	want := map[string]api.Address{"A": {Host: "a.example", Port: 9092}, "B": {Host: "127.0.0.1", Port: 40002}, "C": {Host: "127.0.0.1", Port: 40003}}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("advertisedAddresses = %v, %v; want %v", got, err, want)
	}
	// Without advertised.listeners, the listeners' own entries are not
	// advertised: the bound address is.
	cfg = &config.Broker{Raw: map[string]string{}, Listeners: []config.Listener{{Name: "D", Port: 9094}}}
	cfg.AdvertisedListeners = cfg.Listeners
	got, err = advertisedAddresses(cfg, []boundListener{bound("D", "0.0.0.0:9094")})
	if want := map[string]api.Address{"D": {Host: "127.0.0.1", Port: 9094}}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("without advertised.listeners: %v, %v; want %v", got, err, want)
	}
}

// A TLS listener whose keystore cannot be read stops the start, unless the
// metadata on disk may hold a dynamic keystore for it.
func TestCheckSecurity(t *testing.T) {
	metaDir := filepath.Join(t.TempDir(), "__metadata")
	cfg := &config.Broker{MetadataDir: metaDir, Listeners: []config.Listener{{Name: "SSL", Protocol: config.ProtocolSSL}}}
	if err := checkSecurity(cfg); err == nil {
		t.Fatal("a TLS listener without a keystore was let start")
	}
	if err := os.MkdirAll(metaDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkSecurity(cfg); err == nil {
		t.Fatal("an empty metadata dir was taken for one with dynamic configs")
	}
	if err := os.WriteFile(filepath.Join(metaDir, "raft"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkSecurity(cfg); err != nil {
		t.Fatalf("with metadata on disk: %v", err)
	}
}

func TestSessionLifetime(t *testing.T) {
	cfg := &config.Broker{MaxReauth: time.Hour}
	if got := sessionLifetime(cfg, nil); got != 0 {
		t.Errorf("a listener without SASL: %v, want 0", got)
	}
	if got := sessionLifetime(cfg, &sasl.Config{}); got != time.Hour {
		t.Errorf("a SASL listener: %v, want 1h", got)
	}
}
