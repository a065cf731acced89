package main

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/metrics"
)

// Every group.consumer.migration.policy the config accepts reaches the
// coordinator as its policy.
func TestMigrationPolicyReachesTheCoordinator(t *testing.T) {
	for value, want := range map[string]group.MigrationPolicy{"disabled": group.MigrationDisabled, "UPGRADE": group.MigrationUpgrade,
		"downgrade": group.MigrationDowngrade, "bidirectional": group.MigrationBidirectional} {
		cfg, err := config.LoadBroker("", nil, map[string]string{"group.consumer.migration.policy": value})
		if err != nil {
			t.Fatal(err)
		}
		if got := groupOptions(cfg, nil).MigrationPolicy; got != want {
			t.Errorf("%s: policy %v, want %v", value, got, want)
		}
	}
}

// Members' hosts read as Kafka reports them, and their addresses unmapped.
func TestClientHostAndAddr(t *testing.T) {
	mapped := &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 5} // 16 bytes: IPv4-mapped
	if got, want := clientAddr(mapped), netip.MustParseAddrPort("10.0.0.1:5"); got != want {
		t.Errorf("clientAddr(%v) = %v, want %v", mapped, got, want)
	}
	unix := &net.UnixAddr{Name: "sock", Net: "unix"}
	if got := clientAddr(unix); got.IsValid() {
		t.Errorf("clientAddr of a unix socket = %v, want none", got)
	}
	for addr, want := range map[net.Addr]string{mapped: "/10.0.0.1", unix: "/sock", nil: ""} {
		if got := clientHost(addr); got != want {
			t.Errorf("clientHost(%v) = %q, want %q", addr, got, want)
		}
	}
}

// The census sums every coordinated partition's, by type then state.
func TestGroupCensusTotal(t *testing.T) {
	c := newGroupCensus()
	c.set(0, []group.GroupCount{{Type: "consumer", State: "Stable", Groups: 2}, {Type: "classic", State: "Stable", Groups: 1}})
	c.set(1, []group.GroupCount{{Type: "consumer", State: "Stable", Groups: 3}, {Type: "consumer", State: "Empty", Groups: 1}})
	c.set(2, []group.GroupCount{{Type: "share", State: "Empty", Groups: 9}})
	c.drop(2)
	want := []metrics.GroupCount{{Type: "classic", State: "Stable", Groups: 1}, {Type: "consumer", State: "Empty", Groups: 1},
		{Type: "consumer", State: "Stable", Groups: 5}}
	if got := c.total(); !slices.Equal(got, want) {
		t.Errorf("total = %v, want %v", got, want)
	}
}
