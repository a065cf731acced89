package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTieredSizeRetentionFreshLeaderDoesNotDoubleCount is reference 000
// (Kafka's RLMExpirationTask on a fresh leader, its highest remote offset
// still -1, counts every local segment as local-only and adds them to the
// remote size, so a log sitting at retention.bytes with local retention
// following the total (-2) is seen at twice its size and its whole copied
// window expires). Here the log sits exactly at its cap, local and remote
// overlap over the whole window, and across a clean restart and a crash
// (each a fresh leader) and several tier passes after each, the log start
// moves only as far as keeping >= retention.bytes allows, computed from
// the segment sizes, and every record from it stays readable.
func TestTieredSizeRetentionFreshLeaderDoesNotDoubleCount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "log.segment.bytes=16384", "remote.log.manager.task.interval.ms=200",
		"log.retention.check.interval.ms=200")
	adm := newAdmin(t, b.Addr)
	const topic = "tiered-at-cap"
	createTopic(t, adm, topic, 1, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("-2"), // local mirrors the whole window
		"retention.bytes":       kadm.StringPtr("-1"), // set below, once the sizes are known
	})
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))
	var values [][]byte
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceRandom(t, cl, 160, 1000, &values) // ~10 sealed segments of 16 KiB and an active one
	cl.Close()
	waitRolledTiered(t, b.Addr, topic, segs)

	bases := segs.basesFrom(0)
	if len(bases) < 8 || bases[0] != 0 {
		t.Fatalf("local segments %v: want at least 8, from 0", bases)
	}
	// Every sealed segment is in the remote tier and still local: the two
	// tiers overlap over the whole log.
	if n := len(remoteLogObjects(t, filepath.Join(dir, "remote"))); n != len(bases)-1 {
		t.Fatalf("%d remote segment objects, want %d (every sealed segment)", n, len(bases)-1)
	}
	if got := listOffsetAt(t, b.Addr, topic, -4); got != 0 {
		t.Fatalf("local log start %d before any retention, want 0", got)
	}

	// retention.bytes is exactly the size of the newest half of the log:
	// the log sits at its cap once the older half goes, and not one more
	// segment may go.
	start := bases[len(bases)/2]
	limit := segs.bytesFrom(start)
	setTopicConfig(t, adm, topic, "retention.bytes", fmt.Sprint(limit))
	t.Logf("segments %v, retention.bytes %d, expected log start %d", bases, limit, start)
	waitLogStart(t, b.Addr, topic, segs, start, limit)
	waitLocalStart(t, b.Addr, topic, start)
	checkFrom(t, b.Addr, topic, values, start)

	// One round: a segment's worth more records, then wait until the tier
	// loop has tiered it (so at least one pass ran, planning retention
	// after its copies); the log start must then be exactly where keeping
	// >= retention.bytes puts it.
	round := func(what string) {
		t.Helper()
		cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
		produceRandom(t, cl, 15, 1000, &values)
		cl.Close()
		waitRolledTiered(t, b.Addr, topic, segs)
		want := segs.expectedStart(start, limit)
		waitLogStart(t, b.Addr, topic, segs, want, limit)
		checkFrom(t, b.Addr, topic, values, want)
		t.Logf("%s: log start %d -> %d, %d bytes kept (retention.bytes %d)", what, start, want, segs.bytesFrom(want), limit)
		start = want
	}
	// A fresh leader must not move the log start of a log at its cap:
	// neither in its first passes, on the unchanged log (watched for ten
	// tier intervals; a pass that moved it fails the test, a slow machine
	// only weakens the check), nor later, as records arrive.
	restarted := func(what string) {
		t.Helper()
		holdLogStart(t, b.Addr, topic, segs, start, limit, 10*200*time.Millisecond)
		checkFrom(t, b.Addr, topic, values, start)
		holdLogStart(t, b.Addr, topic, segs, start, limit, 0)
		for i := range 3 {
			round(fmt.Sprintf("%s, round %d", what, i))
		}
	}

	b.Stop()
	b.Restart()
	restarted("after a clean restart")

	b.Kill()
	b.Restart()
	restarted("after a crash")
}

// TestTieredSizeRetentionSingleRecordSegmentsCountedOnce is reference 001
// (KAFKA-17212: a local segment whose base offset equals the highest
// tiered offset, which happens exactly when a segment holds one record,
// is counted as local-only as well as remote, so size retention deletes
// one segment too many). With one record per segment and retention.bytes
// worth exactly N records, the log keeps N records: never fewer.
func TestTieredSizeRetentionSingleRecordSegmentsCountedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200")
	adm := newAdmin(t, b.Addr)
	const topic = "tiered-one-record-segments"
	createTopic(t, adm, topic, 1, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"segment.bytes":         kadm.StringPtr("1100"), // one ~1070-byte batch per segment
		"local.retention.bytes": kadm.StringPtr("-2"),
		"retention.bytes":       kadm.StringPtr("-1"), // set below, once the sizes are known
	})
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))
	var values [][]byte
	const m, n = 30, 10
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceRandom(t, cl, m, 1000, &values)
	waitRolledTiered(t, b.Addr, topic, segs)

	// One record, of one size, per segment.
	bases := segs.basesFrom(0)
	if len(bases) != m {
		t.Fatalf("%d local segments %v, want %d (one record each)", len(bases), bases, m)
	}
	recordBytes := segs.sizes[0]
	for i, base := range bases {
		if base != int64(i) || segs.sizes[base] != recordBytes {
			t.Fatalf("segment %d: base %d, %d bytes; want base %d, %d bytes", i, base, segs.sizes[base], i, recordBytes)
		}
	}
	if recordBytes <= 550 || recordBytes > 1100 {
		t.Fatalf("a one-record segment holds %d bytes; segment.bytes 1100 would not hold exactly one", recordBytes)
	}

	limit := n * recordBytes
	setTopicConfig(t, adm, topic, "retention.bytes", fmt.Sprint(limit))
	t.Logf("%d one-record segments of %d bytes, retention.bytes %d (%d records)", m, recordBytes, limit, n)
	waitKeptRecords(t, b.Addr, topic, n)
	checkFrom(t, b.Addr, topic, values, int64(len(values)-n))

	// Each new record rolls the previous one into a new one-record
	// segment, which is tiered: the newest tiered segment's base is then
	// the last tiered offset, the case KAFKA-17212 counts twice.
	for i := range 4 {
		produceRandom(t, cl, 1, 1000, &values)
		waitRolledTiered(t, b.Addr, topic, segs)
		waitKeptRecords(t, b.Addr, topic, n)
		if i == 1 {
			b.Stop()
			b.Restart()
			waitKeptRecords(t, b.Addr, topic, n)
		}
	}
	checkFrom(t, b.Addr, topic, values, int64(len(values)-n))
}

// waitLogStart polls the earliest offset (-2) until it is want. An
// earliest offset past want fails at once: retention took the log below
// retention.bytes (limit), the bound computed from the segment sizes.
func waitLogStart(t *testing.T, addr, topic string, segs *segmentSizes, want, limit int64) {
	t.Helper()
	deadline := time.Now().Add(tierSettle)
	for {
		got := listOffsetAt(t, addr, topic, -2)
		if got > want {
			t.Fatalf("earliest offset %d, past %d: the log from %d holds %d bytes, below retention.bytes %d "+
				"(from %d it held %d bytes); segment sizes %v", got, want, got, segs.bytesFrom(got), limit,
				want, segs.bytesFrom(want), segs.sizes)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("earliest offset stayed at %d, want %d: from %d the log holds %d bytes, retention.bytes %d",
				got, want, want, segs.bytesFrom(want), limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// holdLogStart checks that the earliest offset (-2) stays at want for d
// (at least once when d is 0).
func holdLogStart(t *testing.T, addr, topic string, segs *segmentSizes, want, limit int64, d time.Duration) {
	t.Helper()
	until := time.Now().Add(d)
	for {
		if got := listOffsetAt(t, addr, topic, -2); got != want {
			t.Fatalf("earliest offset moved from %d to %d with no new record: the log from %d holds %d bytes, retention.bytes %d "+
				"(from %d it held %d bytes)", want, got, got, segs.bytesFrom(got), limit, want, segs.bytesFrom(want))
		}
		if time.Now().After(until) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLocalStart polls the earliest local offset (-4) until it is want,
// failing at once if it passes want.
func waitLocalStart(t *testing.T, addr, topic string, want int64) {
	t.Helper()
	deadline := time.Now().Add(tierSettle)
	for {
		got := listOffsetAt(t, addr, topic, -4)
		if got > want {
			t.Fatalf("earliest local offset %d, past the log start %d", got, want)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("earliest local offset stayed at %d, want %d (local.retention.bytes -2 follows retention.bytes)", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitKeptRecords waits until the log holds n records (latest - earliest).
// Fewer than n fails at once. Size retention at exactly n records' worth
// keeps exactly n; if it is still above n at the deadline, up to n+2 is
// tolerated (logged), more fails.
func waitKeptRecords(t *testing.T, addr, topic string, n int64) {
	t.Helper()
	deadline := time.Now().Add(tierSettle)
	for {
		end := listOffsetAt(t, addr, topic, -1)
		start := listOffsetAt(t, addr, topic, -2)
		kept := end - start
		if kept < n {
			t.Fatalf("the log keeps %d records [%d, %d), fewer than the %d that retention.bytes holds: a one-record segment was counted twice",
				kept, start, end, n)
		}
		if kept == n {
			return
		}
		if time.Now().After(deadline) {
			if kept > n+2 {
				t.Fatalf("the log still keeps %d records [%d, %d), retention.bytes holds %d", kept, start, end, n)
			}
			t.Logf("the log keeps %d records [%d, %d), retention.bytes holds %d", kept, start, end, n)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
