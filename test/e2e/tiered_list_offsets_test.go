package e2e

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTieredListOffsetsMaxTimestamp: ListOffsets -3 (max timestamp, v7+)
// covers the whole log. The record with the largest timestamp, and an
// earlier one tying with a local record, live only in the remote tier
// once local retention removed their segments; -3 answers the earliest
// offset carrying the max, as Kafka does (KIP-734), and a newer local
// maximum wins over it.
func TestTieredListOffsetsMaxTimestamp(t *testing.T) {
	t.Parallel()
	b := startTieredBroker(t, t.TempDir())
	const topic = "tiered-max-ts"
	createTieredTopic(t, b.Addr, topic)
	// The records carry timestamps an hour old; kgo times a delivery from
	// the record's timestamp, so its delivery timeout is turned off.
	cl := newProducer(t, b.Addr, topic, kgo.RecordDeliveryTimeout(0))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	maxTs := base.Add(30 * time.Minute)
	produceAt := func(n int, ts func(i int) time.Time) {
		for i := range n {
			v := make([]byte, 1000)
			rand.Read(v)
			produceSync(t, cl, &kgo.Record{Value: v, Timestamp: ts(i)})
		}
	}
	// Offsets 0-9 rising, 10 the maximum, 11-199 lower again.
	produceAt(10, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) })
	produceAt(1, func(int) time.Time { return maxTs })
	produceAt(189, func(i int) time.Time { return base.Add(time.Minute + time.Duration(i)*time.Millisecond) })
	waitLocalStartPast(t, b.Addr, topic, 11)

	if o, ts := listOffsetWithTs(t, b.Addr, topic, -3); o != 10 || ts != maxTs.UnixMilli() {
		t.Fatalf("-3 = offset %d at %d, want 10 at %d (the maximum is only in the remote tier)", o, ts, maxTs.UnixMilli())
	}

	// A tie with a new local record: the earliest offset, the remote one.
	produceAt(1, func(int) time.Time { return maxTs })
	if o, ts := listOffsetWithTs(t, b.Addr, topic, -3); o != 10 || ts != maxTs.UnixMilli() {
		t.Fatalf("-3 after a local tie = offset %d at %d, want 10 at %d", o, ts, maxTs.UnixMilli())
	}
	// A larger local timestamp wins.
	produceAt(1, func(int) time.Time { return maxTs.Add(time.Second) })
	if o, ts := listOffsetWithTs(t, b.Addr, topic, -3); o != 201 || ts != maxTs.Add(time.Second).UnixMilli() {
		t.Fatalf("-3 after a larger local timestamp = offset %d at %d, want 201", o, ts)
	}

	// After a restart the answer comes from the quorum's metadata again.
	b.Stop()
	b.Restart()
	if o, _ := listOffsetWithTs(t, b.Addr, topic, -3); o != 201 {
		t.Fatalf("-3 after restart = %d, want 201", o)
	}
}
