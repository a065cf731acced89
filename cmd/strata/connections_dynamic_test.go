package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/server"
)

// The applier takes each image's connection limits; a change it cannot
// apply (a host that does not resolve) leaves the limits in force, is
// logged once however many images repeat it, and applies once it can.
func TestConnLimitsApplier(t *testing.T) {
	cfg, err := config.LoadBroker("", nil, map[string]string{"node.id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	static, err := cfg.ConnectionLimits()
	if err != nil {
		t.Fatal(err)
	}
	limits, err := server.NewConnLimits(server.ConnLimitsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	resolvable := false
	resolve := func(context.Context, string) ([]netip.Addr, error) {
		if !resolvable {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.9")}, nil
	}
	var log bytes.Buffer
	a := &connLimitsApplier{cfg: cfg, limits: limits, applied: static, resolve: resolve, logger: slog.New(slog.NewTextHandler(&log, nil))}
	image := func(cluster map[string]string) *metadata.Image {
		return &metadata.Image{BrokerConfigs: cluster, NodeConfigs: map[int32]map[string]string{}}
	}

	a.apply(t.Context(), image(map[string]string{"max.connections": "40"}))
	if a.applied.Max != 40 {
		t.Fatalf("applied max.connections %d, want 40", a.applied.Max)
	}
	unresolved := image(map[string]string{"max.connections": "50", "max.connections.per.ip.overrides": "app-9:3"})
	for range 3 {
		a.apply(t.Context(), unresolved)
	}
	if a.applied.Max != 40 {
		t.Fatalf("an unresolvable override changed the limits to %+v", a.applied)
	}
	if n := strings.Count(log.String(), "not applied"); n != 1 {
		t.Fatalf("the failure was logged %d times, want once:\n%s", n, log.String())
	}
	resolvable = true
	a.apply(t.Context(), unresolved)
	if a.applied.Max != 50 || len(a.applied.PerIPOverrides) != 1 {
		t.Fatalf("once the host resolves: %+v", a.applied)
	}

	// An ip entity's quota is applied once, not again at every image, and
	// again when its rate changes.
	meta := openTestQuorum(t)
	ip := quota.NamedPart("10.0.0.5")
	for i, rate := range []float64{3, 5} {
		if err := meta.AlterClientQuotas(t.Context(), []metadata.ClientQuotaAlteration{{Entity: quota.Entity{IP: ip},
			Set: map[string]float64{quota.ConnectionCreationRate: rate}}}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			a.apply(t.Context(), meta.Image())
		}
		if n := strings.Count(log.String(), "changed connection limits"); n != 3+i || a.appliedIP[ip] != int(rate) {
			t.Fatalf("limits changed %d times (want %d), ip quotas applied %v:\n%s", n, 3+i, a.appliedIP, log.String())
		}
	}
}
