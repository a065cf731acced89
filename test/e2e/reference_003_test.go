package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReference003CommittedTombstoneAfterAbortedTransaction is reference
// 003 (KAFKA-21410) end to end: on a compacted topic, a transactional
// producer commits K=v1, aborts a transaction, and later commits a
// tombstone of K, while the cleaner's offset map is so small
// (log.cleaner.dedupe.buffer.size=4096: 170 keys) that its passes stop in
// the middle of the segment that holds the ABORT marker. Kafka seeds the
// next pass with that aborted transaction as if it were still open, takes
// the producer's committed tombstone for aborted data, keeps K=v1, drops
// the tombstone after delete.retention.ms, and the deleted key comes back.
// Here K must end up gone, and never read as v1 once the tombstone is.
func TestReference003CommittedTombstoneAfterAbortedTransaction(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "log.cleaner.dedupe.buffer.size=4096", "log.cleaner.backoff.ms=100")
	const topic, key = "ref003", "K"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("16384"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
		"delete.retention.ms":       kadm.StringPtr("500"),
	})
	writer := txnClient(t, b.Addr, "ref003-writer")
	rec := func(k string, v []byte) *kgo.Record { return &kgo.Record{Topic: topic, Key: []byte(k), Value: v} }
	// Fillers go in batches of ten, each within what the map holds, so
	// that passes stop between batches rather than refuse one.
	plain := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	fill := func(prefix string, n, valueBytes int) {
		t.Helper()
		pad := bytes.Repeat([]byte("f"), valueBytes)
		for i := 0; i < n; i += 10 {
			var recs []*kgo.Record
			for j := i; j < min(i+10, n); j++ {
				recs = append(recs, rec(fmt.Sprintf("%s-%03d", prefix, j), pad))
			}
			produceSync(t, plain, recs...)
		}
	}

	inTxn(t, writer, true, rec(key, []byte("v1")))
	inTxn(t, writer, false, rec(key, []byte("aborted")), rec("X", []byte("aborted")))
	fill("a", 200, 10) // the first pass's map fills up in here, after the ABORT marker
	inTxn(t, writer, true, rec(key, nil))
	// The writer's last batch keeps a record (its sequence survives
	// cleaning, see the README), so it must not be the tombstone's.
	inTxn(t, writer, true, rec("writer-last", []byte("w")))
	fill("b", 200, 10)
	fill("c", 100, 200) // seals the tombstone's segment
	produceSync(t, plain, rec("zz-last", []byte("last")))

	deadline := time.Now().Add(60 * time.Second)
	for {
		state := readCommittedState(t, b.Addr, topic, "zz-last")
		v, present := state[key]
		switch {
		case present && v != nil && string(v) == "v1" && state.tombstoneGone(key):
			t.Fatalf("the deleted key %s came back with its old value %q (KAFKA-21410)", key, v)
		case !present:
			if _, aborted := state["X"]; aborted {
				t.Fatal("the aborted record of X is read by read_committed")
			}
			return // the tombstone did its work and is gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("60 s on, %s is still read as %q (a tombstone is nil); the cleaner did not finish", key, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// committedState is the last value of each key a read_committed consumer
// from the start reads; a key whose records are gone is absent, a
// tombstone is nil.
type committedState map[string][]byte

// tombstoneGone reports whether the key's last record is not a tombstone.
func (s committedState) tombstoneGone(key string) bool { return s[key] != nil }

// readCommittedState reads partition 0 of topic with read_committed from
// the start up to the record keyed last.
func readCommittedState(t *testing.T, addr, topic, last string) committedState {
	t.Helper()
	ctx := testContext(t, consumeTimeout)
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	state := committedState{}
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %q up to %q: %v", topic, last, ctx.Err())
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("reading %s/%d: %v", topic, p, err) })
		done := false
		fetches.EachRecord(func(r *kgo.Record) {
			state[string(r.Key)] = r.Value
			if string(r.Key) == last {
				done = true
			}
		})
		if done {
			return state
		}
	}
}
