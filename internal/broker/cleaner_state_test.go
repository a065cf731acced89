package broker

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

// keyedBatch is a producer's batch (base offset 0) of one record per key.
func keyedBatch(keys ...string) []byte {
	var records []byte
	for i, k := range keys {
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(k), Value: []byte("value-of-" + k)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(keys) - 1), ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: int32(len(keys)), Records: records}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	record.WriteCRC(out)
	return out
}

// newCompactingTestBroker hosts compacted topics with 1 KiB segments; its
// loops are idle, the test runs the cleaner itself.
func newCompactingTestBroker(t *testing.T, meta *metadata.Store) *Broker {
	t.Helper()
	o := idleTestOptions(t, meta, partition.Config{SegmentBytes: 1024, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, Compact: true, Compaction: partition.Compaction{MinCleanableRatio: 0.01, DeleteRetention: time.Hour}})
	return startTestBroker(t, o)
}

// idleTestOptions is a broker on node 1 of meta whose every topic gets
// cfg and whose loops stay idle for the test's length.
func idleTestOptions(t *testing.T, meta *metadata.Store, cfg partition.Config) Options {
	const idle = time.Hour
	return Options{
		DataDir:            t.TempDir(),
		NodeID:             1,
		Meta:               meta,
		Resolve:            func(ConfigSources) (partition.Config, error) { return cfg, nil },
		RetentionInterval:  idle,
		FlushCheckInterval: idle,
		ReplicaLagTimeMax:  idle,
		Clock:              clock.Real{},
		Logger:             slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// startTestBroker starts a broker that the test's cleanup closes.
func startTestBroker(t *testing.T, o Options) *Broker {
	t.Helper()
	b, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

func hostedPartition(t *testing.T, b *Broker, topic string) *partition.Partition {
	t.Helper()
	p, ok := b.Partition(base.TopicPartition{Topic: topic, Partition: 0})
	if !ok {
		t.Fatalf("%s-0 not hosted", topic)
	}
	return p
}

// TestCleanerSkipsAnUncleanablePartition: a partition whose pass fails
// (here a batch with more keys than the map holds) is set aside, as
// Kafka's LogCleanerManager marks it uncleanable, so that it does not
// starve the others; the status counts it and the passes that ran.
func TestCleanerSkipsAnUncleanablePartition(t *testing.T) {
	meta := openTestMeta(t)
	b := newCompactingTestBroker(t, meta)
	createTopic(t, meta, "bad", 1)
	createTopic(t, meta, "good", 1)
	bad, good := hostedPartition(t, b, "bad"), hostedPartition(t, b, "good")
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("k%03d", i)
	}
	for _, p := range []*partition.Partition{bad, good} {
		if p == bad {
			if _, _, err := p.Append(keyedBatch(many...), partition.AcksLeader); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 60 {
			if _, _, err := p.Append(keyedBatch(fmt.Sprintf("k%d", i%3)), partition.AcksLeader); err != nil {
				t.Fatal(err)
			}
		}
	}
	goodBefore := good.SizeBytes()
	b.RunCleaner(24 * 20) // 18 keys: the 100-key batch never fits

	st := b.CleanerStatus()
	if st.Uncleanable != 1 || st.Passes < 1 || st.BytesRead == 0 || st.BytesWritten >= st.BytesRead {
		t.Fatalf("status %+v: want one uncleanable partition and the other cleaned", st)
	}
	if good.SizeBytes() >= goodBefore {
		t.Fatalf("good partition %d bytes, %d before: not cleaned", good.SizeBytes(), goodBefore)
	}
	if st.LastRun.IsZero() || st.MaxDirtyRatio != 0 {
		t.Fatalf("status %+v: want a last run, and nothing dirty left", st)
	}
	// Once its topic is deleted, it is no longer counted.
	if err := meta.DeleteTopic(t.Context(), "bad"); err != nil {
		t.Fatal(err)
	}
	if err := b.Reconcile(); err != nil {
		t.Fatal(err)
	}
	b.RunCleaner(24 * 20)
	if st := b.CleanerStatus(); st.Uncleanable != 0 {
		t.Fatalf("%d uncleanable partitions once the bad one is deleted, want 0", st.Uncleanable)
	}
}
