package broker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// orphanFixture is a metadata quorum and a bucket: topic "live" with a
// COPY_FINISHED segment on partition 0 and a COPY_STARTED one on
// partition 1, topic "gone" deleted with its remote data still pending,
// every one of their objects in the bucket, plus an orphan (a valid key
// of an attempt no metadata has) and a foreign key.
type orphanFixture struct {
	meta    *metadata.Store
	store   objstore.Store
	claimed []string
	orphan  string
	foreign string
}

func newOrphanFixture(t *testing.T) orphanFixture {
	t.Helper()
	ctx := t.Context()
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	meta, err := metadata.Open(openCtx, metadata.Options{Dir: t.TempDir(), NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = meta.Close() })
	f := orphanFixture{meta: meta, store: objstore.NewMem(), foreign: "backups/2024.tar"}
	live, err := meta.CreateTopic(ctx, metadata.CreateTopic{Name: "live", Partitions: 2, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := meta.CreateTopic(ctx, metadata.CreateTopic{Name: "gone", Partitions: 1, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.claim(t, fixtureSeg(1, live, 0), remotemeta.CopyStarted, remotemeta.CopyFinished)
	f.claim(t, fixtureSeg(2, live, 1), remotemeta.CopyStarted)
	f.claim(t, fixtureSeg(3, gone, 0), remotemeta.CopyStarted, remotemeta.CopyFinished)
	if err := meta.DeleteTopic(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	f.orphan = tier.SegmentKey(fixtureSeg(4, live, 0), tier.SuffixLog)
	f.put(t, f.orphan)
	f.put(t, f.foreign)
	return f
}

func fixtureSeg(n byte, t *metadata.Topic, p int32) remotemeta.RemoteSegment {
	return remotemeta.RemoteSegment{
		ID: remotemeta.SegmentID{0: 0xAB, 15: n}, TopicID: t.ID, TP: base.TopicPartition{Topic: t.Name, Partition: p},
		Range: base.Range{Start: 0, End: 10}, LeaderEpochs: []base.EpochStart{{Epoch: 0, Start: 0}},
		SizeBytes: 5, State: remotemeta.CopyStarted,
	}
}

// claim records seg through states and puts every object of it.
func (f *orphanFixture) claim(t *testing.T, seg remotemeta.RemoteSegment, states ...remotemeta.State) {
	t.Helper()
	for _, st := range states {
		seg.State = st
		if err := f.meta.UpdateRemoteSegment(t.Context(), seg, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range tier.Suffixes {
		key := tier.SegmentKey(seg, s)
		f.put(t, key)
		f.claimed = append(f.claimed, key)
	}
}

func (f *orphanFixture) put(t *testing.T, key string) {
	t.Helper()
	if err := f.store.Put(t.Context(), key, bytes.NewReader([]byte("12345")), 5); err != nil {
		t.Fatal(err)
	}
}

func (f *orphanFixture) has(t *testing.T, key string) bool {
	t.Helper()
	found := false
	err := f.store.List(t.Context(), key, func(oi objstore.ObjectInfo) error {
		found = found || oi.Key == key
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// testBroker is a Broker with only what orphanPass uses.
func (f *orphanFixture) testBroker(clk clock.Clock, grace time.Duration, dryRun bool, log *bytes.Buffer) *Broker {
	return &Broker{
		opts: Options{Meta: f.meta, Clock: clk, Tier: &TierDeps{
			Orphans: &tier.Reconciler{Store: f.store, Clock: clk, Grace: grace, DryRun: dryRun}, OrphanScanInterval: time.Second,
		}},
		logger: slog.New(slog.NewTextHandler(log, nil)),
	}
}

// TestOrphanPass: the pass claims what the image holds (segments of live
// topics in every state, all of a topic pending remote delete); in dry
// run it logs the orphan and keeps it; for real it deletes it, and only
// once older than the grace; claimed objects and foreign keys stay.
func TestOrphanPass(t *testing.T) {
	f := newOrphanFixture(t)
	const grace = time.Hour
	clk := clock.NewManual(time.Now())
	var log bytes.Buffer
	kept := append([]string{f.foreign, f.orphan}, f.claimed...)
	requireKept := func(when string, keys []string) {
		t.Helper()
		for _, k := range keys {
			if !f.has(t, k) {
				t.Fatalf("%s: %s was deleted", when, k)
			}
		}
	}

	f.testBroker(clk, grace, false, &log).orphanPass(t.Context())
	requireKept("within the grace period", kept)

	clk.Advance(grace + time.Minute)
	f.testBroker(clk, grace, true, &log).orphanPass(t.Context())
	requireKept("dry run", kept)
	if !strings.Contains(log.String(), "orphaned remote object (dry run: kept)") || !strings.Contains(log.String(), f.orphan) {
		t.Fatalf("dry run did not log the orphan %s:\n%s", f.orphan, log.String())
	}

	log.Reset()
	f.testBroker(clk, grace, false, &log).orphanPass(t.Context())
	if f.has(t, f.orphan) {
		t.Fatalf("the orphan %s outlived the grace period", f.orphan)
	}
	requireKept("after the orphan was deleted", append([]string{f.foreign}, f.claimed...))
	for _, want := range []string{"deleted orphaned remote object", f.orphan, "bucket reconciler scan", "orphans=1", "deleted=1", "foreign=1"} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, log.String())
		}
	}
}

func TestTierDepsValidateOrphans(t *testing.T) {
	good := func() TierDeps {
		return TierDeps{
			Orphans:            &tier.Reconciler{Store: objstore.NewMem(), Clock: clock.Real{}, Grace: time.Hour},
			OrphanScanInterval: time.Minute,
		}
	}
	tests := []struct {
		name   string
		mutate func(*TierDeps)
		ok     bool
	}{
		{"valid", func(*TierDeps) {}, true},
		{"no reconciler", func(d *TierDeps) { d.Orphans = nil }, true},
		{"zero grace", func(d *TierDeps) { d.Orphans.Grace = 0 }, false},
		{"zero scan interval", func(d *TierDeps) { d.OrphanScanInterval = 0 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := good()
			tc.mutate(&d)
			if err := d.validateOrphans(); (err == nil) != tc.ok {
				t.Fatalf("validateOrphans() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// notController is a member of the quorum that is not its controller.
type notController struct{ *metadata.Store }

func (notController) IsController() bool { return false }

// TestOrphanPassOnlyOnTheController: a broker that is not the controller
// leaves the bucket alone, orphan and all.
func TestOrphanPassOnlyOnTheController(t *testing.T) {
	f := newOrphanFixture(t)
	const grace = time.Hour
	clk := clock.NewManual(time.Now().Add(grace + time.Minute))
	b := f.testBroker(clk, grace, false, &bytes.Buffer{})
	b.opts.Meta = notController{f.meta}
	b.orphanPass(t.Context())
	if !f.has(t, f.orphan) {
		t.Fatalf("a broker that is not the controller deleted the orphan %s", f.orphan)
	}
}
