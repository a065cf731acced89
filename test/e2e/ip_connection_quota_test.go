package e2e

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// alterIPQuotas sets (value >= 0) or removes (value < 0) the
// connection_creation_rate of ip entities, as kafka-configs --entity-type
// ips does; "" is the default ip.
func alterIPQuotas(t *testing.T, adm *kadm.Client, rates map[string]float64) {
	t.Helper()
	var entries []kadm.AlterClientQuotaEntry
	for ip, v := range rates {
		entity := kadm.ClientQuotaEntity{{Type: "ip"}}
		if ip != "" {
			entity[0].Name = &ip
		}
		entries = append(entries, kadm.AlterClientQuotaEntry{Entity: entity,
			Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: v, Remove: v < 0}}})
	}
	results, err := adm.AlterClientQuotas(testContext(t, 30*time.Second), entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("altering %v: %v (%s)", r.Entity, r.Err, r.ErrMessage)
		}
	}
}

// describeIPQuotas lists the ip entities' quotas as "ip=... k=v" lines.
func describeIPQuotas(t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	described, err := adm.DescribeClientQuotas(testContext(t, 30*time.Second), true,
		[]kadm.DescribeClientQuotaComponent{{Type: "ip", MatchType: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range described {
		for _, v := range d.Values {
			out = append(out, d.Entity[0].String()+" "+v.Key+"="+strconv.FormatFloat(v.Value, 'f', -1, 64))
		}
	}
	sort.Strings(out)
	return out
}

// connection_creation_rate on ip entities (KIP-612): an address over its
// rate has its new connections closed unanswered, other addresses are not
// touched, an address's own quota beats the default (Kafka's unlimited
// rate exempts it), the quotas survive a restart, and removing one lifts
// it.
func TestIPConnectionCreationRate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Two one-second windows: a burst of one second's rate.
	b := startBroker(t, dir, "quota.window.num=2", "strata.metrics.listener=127.0.0.1:0")
	adm := newAdmin(t, b.Addr)
	alterIPQuotas(t, adm, map[string]float64{"": 1, "127.0.0.1": math.MaxInt32, "127.0.0.3": 2})
	waitForAdmission(t, "127.0.0.2", b.Addr, false, "a default ip quota of 1")
	if c, admitted := dialProbe(t, "127.0.0.1", b.Addr); !admitted {
		t.Fatal("127.0.0.1, exempt by its own unlimited quota, was refused")
	} else {
		c.Close()
	}
	want := []string{"ip=127.0.0.1 connection_creation_rate=2147483647", "ip=127.0.0.3 connection_creation_rate=2", "ip=<default> connection_creation_rate=1"}
	if got := describeIPQuotas(t, adm); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("described %q, want %q", got, want)
	}

	// 127.0.0.3 at 2 a second, a burst of 2: of eight connections opened
	// as fast as they are answered or closed, at most the burst and what
	// the rate refilled meanwhile are served, and some are not.
	start := time.Now()
	served := 0
	for range 8 {
		c, admitted := dialProbe(t, "127.0.0.3", b.Addr)
		c.Close()
		if admitted {
			served++
		}
	}
	took := time.Since(start)
	if bound := 2 + int(2*took.Seconds()) + 1; served == 0 || served == 8 || served > bound {
		t.Fatalf("127.0.0.3 at 2/s: %d of 8 connections served in %v; want some, not all, at most %d", served, took, bound)
	}
	m := scrape(t, metricsBase(t, b)+"/metrics")
	if n, secs := m["strata_connections_ip_throttled_total"], m["strata_connection_ip_throttle_seconds_total"]; n < float64(8-served) || secs <= 0 {
		t.Errorf("strata_connections_ip_throttled_total %v, strata_connection_ip_throttle_seconds_total %v; want at least %d and some time", n, secs, 8-served)
	}

	// The quotas are in the metadata quorum.
	b.Stop()
	b = startBroker(t, dir, "quota.window.num=2")
	waitForAdmission(t, "127.0.0.4", b.Addr, false, "a restart with a default ip quota of 1")
	adm = newAdmin(t, b.Addr)
	alterIPQuotas(t, adm, map[string]float64{"": -1})
	waitForAdmission(t, "127.0.0.4", b.Addr, true, "removing the default ip quota")
	want = want[:2]
	if got := describeIPQuotas(t, adm); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after removing the default: described %q, want %q", got, want)
	}
}
