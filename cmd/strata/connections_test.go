package main

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/server"
)

func TestNewConnLimitsResolvesOverrides(t *testing.T) {
	hosts := map[string][]netip.Addr{
		"app-1": {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1")},
		"app-2": {netip.MustParseAddr("10.0.0.1")},
		"empty": nil,
	}
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := hosts[host]; ok {
			return a, nil
		}
		return nil, errors.New("no such host")
	}
	cases := []struct {
		overrides []config.HostLimit
		err       string
	}{
		{[]config.HostLimit{{Host: "127.0.0.1", Count: 3}, {Host: "app-1", Count: 5}}, ""},
		{[]config.HostLimit{{Host: "::ffff:10.0.0.1", Count: 5}, {Host: "app-1", Count: 5}}, ""}, // one address, one count
		{[]config.HostLimit{{Host: "app-1", Count: 5}, {Host: "app-2", Count: 6}}, "two counts"},
		{[]config.HostLimit{{Host: "nowhere", Count: 1}}, "cannot resolve host nowhere"},
		{[]config.HostLimit{{Host: "empty", Count: 1}}, "no address"},
	}
	for _, c := range cases {
		l, err := newConnLimits(context.Background(), config.ConnectionLimits{Max: 10, MaxPerIP: 2, PerIPOverrides: c.overrides}, time.Second, resolve)
		switch {
		case c.err == "" && (err != nil || l == nil):
			t.Errorf("%v: %v", c.overrides, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: err = %v, want one saying %q", c.overrides, err, c.err)
		}
	}
}

// serverConnLimits hands the server the limits as it reads them: override
// addresses unmapped, Kafka's unlimited creation rate as 0, and
// max.connections.per.ip=0 as "only the overrides".
func TestServerConnLimits(t *testing.T) {
	resolve := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("::ffff:10.0.0.1"), netip.MustParseAddr("fd00::1")}, nil
	}
	for _, tc := range []struct {
		name string
		in   config.ConnectionLimits
		want server.ConnLimitsConfig
	}{
		{"Kafka's defaults", config.ConnectionLimits{Max: math.MaxInt32, MaxPerIP: math.MaxInt32, MaxCreationRate: math.MaxInt32},
			server.ConnLimitsConfig{MaxConnections: math.MaxInt32, MaxPerIP: math.MaxInt32, PerIPOverrides: map[netip.Addr]int{}, CreationBurst: time.Second}},
		{"overrides by name, only those", config.ConnectionLimits{Max: 10, MaxCreationRate: math.MaxInt32 - 1, PerIPOverrides: []config.HostLimit{{Host: "app", Count: 3}}},
			server.ConnLimitsConfig{MaxConnections: 10, OnlyOverrides: true, MaxCreationRate: math.MaxInt32 - 1, CreationBurst: time.Second,
				PerIPOverrides: map[netip.Addr]int{netip.MustParseAddr("10.0.0.1"): 3, netip.MustParseAddr("fd00::1"): 3}}},
		{"per listener", config.ConnectionLimits{MaxPerIP: 2, MaxCreationRate: math.MaxInt32,
			PerListener: map[string]config.ListenerLimits{"A": {Max: 4, MaxCreationRate: math.MaxInt32}, "B": {MaxCreationRate: 9}}},
			server.ConnLimitsConfig{MaxPerIP: 2, PerIPOverrides: map[netip.Addr]int{}, CreationBurst: time.Second,
				PerListener: map[string]server.ListenerLimits{"A": {MaxConnections: 4}, "B": {MaxCreationRate: 9}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := serverConnLimits(t.Context(), tc.in, time.Second, resolve)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("serverConnLimits = %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

// The burst is all but one of the quota windows; max.connections spares
// the inter-broker listener only when there are others.
func TestCreationBurstAndProtectedListener(t *testing.T) {
	cfg := &config.Broker{QuotaWindowNum: 11, QuotaWindowSize: time.Second, InterBrokerListener: "INTERNAL",
		Listeners: []config.Listener{{Name: "INTERNAL"}}}
	if got := creationBurst(cfg); got != 10*time.Second {
		t.Errorf("creationBurst = %v, want 10s", got)
	}
	if protectedListener(cfg, "INTERNAL") {
		t.Error("the only listener is spared max.connections")
	}
	cfg.Listeners = append(cfg.Listeners, config.Listener{Name: "EXTERNAL"})
	if !protectedListener(cfg, "INTERNAL") || protectedListener(cfg, "EXTERNAL") {
		t.Errorf("with two listeners: INTERNAL spared %v, EXTERNAL spared %v; want true, false",
			protectedListener(cfg, "INTERNAL"), protectedListener(cfg, "EXTERNAL"))
	}
}
