package broker

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// TestDeletedTopicTierCountsAreDropped: the tier counts of a deleted
// topic's partitions go with them, through the path DeleteTopics takes
// (the quorum deletes the topic, the broker reconciles), while another
// topic's stay; the deleted topic's remote data, deleted afterwards,
// counts nowhere; and a topic created again under the same name counts
// from zero.
func TestDeletedTopicTierCountsAreDropped(t *testing.T) {
	ctx := t.Context()
	meta := openTestMeta(t)
	stats := &tier.Stats{}
	b := newTieredTestBroker(t, meta, stats)
	gone := createTopic(t, meta, "gone", 2)
	kept := createTopic(t, meta, "kept", 1)
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	readMissing := func(seg remotemeta.RemoteSegment) {
		t.Helper()
		p, ok := b.Partition(seg.TP)
		if !ok {
			t.Fatalf("%v is not hosted", seg.TP)
		}
		if _, err := b.ReadRemote(ctx, p, seg.Range.Start, 1<<10); err == nil {
			t.Fatalf("read of %v found objects that were never uploaded", seg.TP)
		}
	}
	for i, seg := range []remotemeta.RemoteSegment{fixtureSeg(1, gone, 0), fixtureSeg(2, gone, 1), fixtureSeg(3, kept, 0)} {
		finishCopy(t, meta, seg)
		for range i + 1 {
			readMissing(seg)
		}
	}
	failedReads := func(tp base.TopicPartition, n int64) tier.PartitionStats {
		return tier.PartitionStats{TP: tp, FetchRequests: n, FetchErrors: n}
	}
	keptStats := failedReads(base.TopicPartition{Topic: "kept", Partition: 0}, 3)
	want := []tier.PartitionStats{
		failedReads(base.TopicPartition{Topic: "gone", Partition: 0}, 1),
		failedReads(base.TopicPartition{Topic: "gone", Partition: 1}, 2),
		keptStats,
	}
	if got := stats.Snapshot(); !slices.Equal(got, want) {
		t.Fatalf("before the delete, Snapshot =\n %+v, want\n %+v", got, want)
	}

	if err := meta.DeleteTopic(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if got, want := stats.Snapshot(), []tier.PartitionStats{keptStats}; !slices.Equal(got, want) {
		t.Fatalf("after the delete, Snapshot =\n %+v, want\n %+v", got, want)
	}
	for _, g := range b.TierGauges() {
		if g.TP.Topic == "gone" {
			t.Fatalf("the deleted topic still has tier gauges: %+v", g)
		}
	}

	again := createTopic(t, meta, "gone", 1)
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	b.remoteDeletePass()
	if pending := meta.Image().PendingRemoteDeletes(); len(pending) != 0 {
		t.Fatalf("the deleted topic's remote data is still pending: %+v", pending)
	}
	seg := fixtureSeg(4, again, 0)
	finishCopy(t, meta, seg)
	readMissing(seg)
	want = []tier.PartitionStats{failedReads(seg.TP, 1), keptStats}
	if got := stats.Snapshot(); !slices.Equal(got, want) {
		t.Fatalf("after the topic came back, Snapshot =\n %+v, want\n %+v", got, want)
	}
}

func openTestMeta(t *testing.T) *metadata.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	meta, err := metadata.Open(ctx, metadata.Options{Dir: t.TempDir(), NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = meta.Close() })
	return meta
}

// newTieredTestBroker is a broker on node 1 of meta whose every topic is
// tiered, into an in-memory bucket, and whose tier executors count into
// stats. Its loops are idle for the test's length: the test runs what it
// needs itself.
func newTieredTestBroker(t *testing.T, meta *metadata.Store, stats *tier.Stats) *Broker {
	t.Helper()
	const idle = time.Hour
	store := objstore.NewMem()
	o := idleTestOptions(t, meta, partition.Config{SegmentBytes: 1 << 20, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, Tiered: true})
	o.Tier = &TierDeps{
		Copier:             &tier.Copier{Store: store, Meta: meta, Random: rand.Reader, Clock: clock.Real{}, Stats: stats},
		Deleter:            &tier.Deleter{Store: store, Meta: meta, Stats: stats},
		Reader:             &tier.Reader{Store: store, Stats: stats},
		Interval:           idle,
		RetryBackoff:       idle,
		RetryBackoffMax:    idle,
		Jitter:             func() float64 { return 0 },
		ListOffsetsTimeout: time.Minute,
	}
	return startTestBroker(t, o)
}

func createTopic(t *testing.T, meta *metadata.Store, name string, partitions int32) *metadata.Topic {
	t.Helper()
	topic, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: name, Partitions: partitions, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	return topic
}

// finishCopy records seg as COPY_FINISHED in meta, with no object in the
// bucket.
func finishCopy(t *testing.T, meta *metadata.Store, seg remotemeta.RemoteSegment) {
	t.Helper()
	for _, st := range []remotemeta.State{remotemeta.CopyStarted, remotemeta.CopyFinished} {
		seg.State = st
		if err := meta.UpdateRemoteSegment(t.Context(), seg, 0); err != nil {
			t.Fatal(err)
		}
	}
}
