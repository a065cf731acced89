package partition

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/retention"
)

// compacted makes the partition's topic compacted, cleaning at any ratio.
func compacted(o *Options) {
	o.Config.SegmentBytes = 1024
	o.Config.Compact = true
	o.Config.Compaction = Compaction{MinCleanableRatio: 0.01, DeleteRetention: time.Hour}
}

// keyedRecord is one record as a consumer from the start reads it.
type keyedRecord struct {
	offset base.Offset
	key    string
	value  []byte // nil for a tombstone
}

// readRecords reads every record from the log start to the high watermark.
func readRecords(t *testing.T, p *Partition) []keyedRecord {
	t.Helper()
	var out []keyedRecord
	var rr record.RecordReader
	for from := p.Offsets().LogStart; ; {
		res, err := p.Read(from, 1<<16, nil)
		if err != nil {
			t.Fatalf("Read(%d): %v", from, err)
		}
		if len(res.Records) == 0 {
			return out
		}
		for it := record.SplitBatches(res.Records); ; {
			b, h, ok := it.Next()
			if !ok {
				break
			}
			if err := rr.Reset(b); err != nil {
				t.Fatalf("batch at %d: %v", h.BaseOffset, err)
			}
			for r, ok := rr.Next(); ok; r, ok = rr.Next() {
				o := h.BaseOffset + base.Offset(r.OffsetDelta)
				if o >= from {
					out = append(out, keyedRecord{o, string(r.Key), bytes.Clone(r.Value)})
				}
			}
			if err := rr.Err(); err != nil {
				t.Fatal(err)
			}
			from = h.NextOffset()
		}
	}
}

// lastValues is the state a consumer from the start ends with.
func lastValues(recs []keyedRecord) (map[string][]byte, map[string]int) {
	last, count := map[string][]byte{}, map[string]int{}
	for _, r := range recs {
		last[r.key] = r.value
		count[r.key]++
	}
	return last, count
}

func requireSameState(t *testing.T, got, want []keyedRecord) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		if got[i].offset <= got[i-1].offset {
			t.Fatalf("offsets not ascending: %d then %d", got[i-1].offset, got[i].offset)
		}
	}
	g, _ := lastValues(got)
	w, _ := lastValues(want)
	if len(g) != len(w) {
		t.Fatalf("%d keys after cleaning, %d before", len(g), len(w))
	}
	for k, v := range w {
		if gv, ok := g[k]; !ok || !bytes.Equal(gv, v) || (gv == nil) != (v == nil) {
			t.Fatalf("key %q ends as %q (%v), want %q", k, gv, ok, v)
		}
	}
}

// cleanUntilDone runs passes like the broker's cleaner until none is due.
func cleanUntilDone(t *testing.T, p *Partition, cm *CleanerMap, nowMs int64) int {
	t.Helper()
	passes := 0
	for ; passes < 100; passes++ {
		d, err := p.PlanCleaning(nowMs)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Clean {
			return passes
		}
		st, err := p.Clean(d, cm, nowMs, nil)
		if err != nil {
			t.Fatalf("Clean: %v", err)
		}
		if st.Stale || st.MapEnd <= st.FirstDirty && !d.Clean {
			t.Fatalf("pass made no progress: %+v", st)
		}
	}
	t.Fatal("cleaning never finished")
	return passes
}

func keyOf(i int) string { return fmt.Sprintf("key-%02d", i) }

// TestCleanKeepsTheLastRecordOfEachKey: after cleaning, every key of the
// sealed segments appears once with its last value, offsets unchanged and
// ascending, codecs kept; the cleaned log survives a reopen and a crash
// copy; an idempotent producer goes on in sequence after it.
func TestCleanKeepsTheLastRecordOfEachKey(t *testing.T) {
	e := newEnv(t, compacted)
	p := e.open(t)
	codecs := []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}
	const batches = 60
	for i := range batches {
		s := spec{keys: []string{keyOf(i % 7), keyOf((i + 3) % 7)}, valueBytes: 40, seq: int32(i), codec: codecs[i%len(codecs)]}
		if i%4 == 0 { // an idempotent producer writes every fourth batch
			s.pid, s.seq = 9, int32(i/4*2)
		}
		mustAppend(t, p, batch(t, s), AcksAll)
	}
	if err := p.log.Roll(); err != nil {
		t.Fatal(err)
	}
	before := readRecords(t, p)
	sizeBefore := p.SizeBytes()

	if n := cleanUntilDone(t, p, NewCleanerMap(1<<20), e.clock.Now().UnixMilli()); n == 0 {
		t.Fatal("no pass was due")
	}
	after := readRecords(t, p)
	requireSameState(t, after, before)
	if _, count := lastValues(after); len(after) != 7 {
		t.Fatalf("%d records after cleaning (per key %v), want one per key", len(after), count)
	}
	if p.SizeBytes() >= sizeBefore {
		t.Fatalf("cleaning left %d bytes of %d", p.SizeBytes(), sizeBefore)
	}

	// The idempotent producer's next batch is in sequence.
	mustAppend(t, p, batch(t, spec{keys: []string{"after"}, pid: 9, seq: batches / 4 * 2}), AcksAll)

	crash := e.crashCopy(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{"reopened": e.opts, "crash copy": crash} {
		q := openAt(t, o)
		requireSameState(t, readRecords(t, q)[:7], before)
		mustAppend(t, q, batch(t, spec{keys: []string{"after"}, pid: 9, seq: batches/4*2 + 1}), AcksAll)
		d, err := q.PlanCleaning(e.clock.Now().UnixMilli())
		if err != nil || d.FirstDirty < 60*2 {
			t.Fatalf("%s: plan %+v, %v; the checkpoint should have kept the cleaned range", name, d, err)
		}
	}
}

// TestCleanWithASmallMapTakesSeveralPasses: a map that holds a few keys
// stops each pass early; passes go on from where the last stopped until
// the log is clean, with the same result as one big pass.
func TestCleanWithASmallMapTakesSeveralPasses(t *testing.T) {
	e := newEnv(t, compacted)
	p := e.open(t)
	for i := range 80 {
		mustAppend(t, p, batch(t, spec{keys: []string{keyOf(i % 30)}, valueBytes: 30, seq: int32(i)}), AcksAll)
	}
	if err := p.log.Roll(); err != nil {
		t.Fatal(err)
	}
	before := readRecords(t, p)
	passes := cleanUntilDone(t, p, NewCleanerMap(24*12), e.clock.Now().UnixMilli())
	if passes < 3 {
		t.Fatalf("%d passes with a map of 10 keys for 30 keys", passes)
	}
	after := readRecords(t, p)
	requireSameState(t, after, before)
	if len(after) != 30 {
		t.Fatalf("%d records after cleaning, want one for each of 30 keys", len(after))
	}
}

// TestCleanRemovesTombstonesAfterTheirHorizon: a tombstone stays through
// the pass that first cleans it, and goes at the pass due once
// delete.retention.ms has passed since, though nothing new is dirty.
func TestCleanRemovesTombstonesAfterTheirHorizon(t *testing.T) {
	e := newEnv(t, compacted)
	p := e.open(t)
	for i := range 20 {
		mustAppend(t, p, batch(t, spec{keys: []string{keyOf(i % 4)}, seq: int32(i)}), AcksAll)
	}
	mustAppend(t, p, batch(t, spec{keys: []string{keyOf(1)}, tombstone: true}), AcksAll)
	if err := p.log.Roll(); err != nil {
		t.Fatal(err)
	}
	cm := NewCleanerMap(1 << 20)
	now := e.clock.Now()
	cleanUntilDone(t, p, cm, now.UnixMilli())
	last, _ := lastValues(readRecords(t, p))
	if v, ok := last[keyOf(1)]; !ok || v != nil {
		t.Fatalf("the tombstone went before delete.retention.ms: %q, %v", v, ok)
	}
	if n := cleanUntilDone(t, p, cm, now.Add(time.Hour-time.Millisecond).UnixMilli()); n != 0 {
		t.Fatalf("%d passes before the horizon", n)
	}
	if n := cleanUntilDone(t, p, cm, now.Add(time.Hour).UnixMilli()); n != 1 {
		t.Fatalf("%d passes at the horizon, want 1", n)
	}
	last, count := lastValues(readRecords(t, p))
	if _, ok := last[keyOf(1)]; ok || len(last) != 3 {
		t.Fatalf("after the horizon: keys %v", count)
	}
}

// TestCompactedTopicRefusesKeylessRecords: INVALID_RECORD, as Kafka's
// LogValidator answers; a delete-only topic takes them.
func TestCompactedTopicRefusesKeylessRecords(t *testing.T) {
	p := newEnv(t, compacted).open(t)
	for _, codec := range []record.Codec{record.CodecNone, record.CodecZstd} {
		_, _, err := p.Append(batch(t, spec{keyless: true, codec: codec}), AcksAll)
		wantCode(t, err, record.CodeInvalidRecord)
	}
	mustAppend(t, p, batch(t, spec{keys: []string{"k"}}), AcksAll)
	plain := newEnv(t).open(t)
	mustAppend(t, plain, batch(t, spec{keyless: true}), AcksAll)

	// The refusal names each keyless record (KIP-467): clients fail those
	// with INVALID_RECORD and the batch's others as collateral
	// (librdkafka's 0011_produce_batch checks the split).
	for _, codec := range []record.Codec{record.CodecNone, record.CodecLZ4} {
		_, _, err := p.Append(batch(t, spec{records: 10, keylessAt: []int{0, 4, 9}, codec: codec}), AcksAll)
		wantCode(t, err, record.CodeInvalidRecord)
		var recErr *record.Error
		if !errors.As(err, &recErr) {
			t.Fatalf("%v is not a *record.Error", err)
		}
		var named []int32
		for _, r := range recErr.Records {
			named = append(named, r.Index)
		}
		if !slices.Equal(named, []int32{0, 4, 9}) {
			t.Fatalf("codec %v: the refusal names records %v, want [0 4 9]", codec, named)
		}
	}
}

// TestCleanWhileAppendingAndRetaining runs cleaning passes while a
// producer appends and retention (compact,delete) trims the log from
// another goroutine, under -race in CI: no pass fails (those overtaken by
// retention are dropped as Stale), and the log reads ascending with every
// key that was written.
func TestCleanWhileAppendingAndRetaining(t *testing.T) {
	e := newEnv(t, compacted, func(o *Options) {
		o.Config.Retention = retention.Policy{RetentionBytes: retention.LimitOf(16 << 10)}
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	p := e.open(t)
	var wg sync.WaitGroup
	appending := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(appending)
		for i := range 3000 {
			if _, _, err := p.Append(batch(t, spec{keys: []string{keyOf(i % 10)}, valueBytes: 50, seq: int32(i)}), AcksLeader); err != nil {
				t.Errorf("Append: %v", err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-appending:
				return
			default:
			}
			if _, err := p.ApplyRetention(e.clock.Now().UnixMilli()); err != nil {
				t.Errorf("ApplyRetention: %v", err)
				return
			}
		}
	}()
	cm := NewCleanerMap(1 << 20)
	passes, stale := 0, 0
	for running := true; running; {
		select {
		case <-appending:
			running = false
		default:
		}
		now := e.clock.Now().UnixMilli()
		d, err := p.PlanCleaning(now)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Clean {
			continue
		}
		st, err := p.Clean(d, cm, now, nil)
		if err != nil {
			t.Fatalf("Clean: %v", err)
		}
		passes++
		if st.Stale {
			stale++
		}
	}
	wg.Wait()
	got := readRecords(t, p)
	for i := 1; i < len(got); i++ {
		if got[i].offset <= got[i-1].offset {
			t.Fatalf("offsets not ascending: %d then %d", got[i-1].offset, got[i].offset)
		}
	}
	if last, _ := lastValues(got); len(last) != 10 {
		t.Fatalf("keys %v in the log; every one of the 10 was written up to the end", last)
	}
	if passes == 0 {
		t.Fatal("no pass ran while the producer appended")
	}
	t.Logf("%d records remain; %d passes, %d overtaken by retention", len(got), passes, stale)
}

// TestCleanReportsItsIOToTheThrottle: a pass reports every window of the
// log it reads (the dirty range for the key map, then the segments it
// rewrites) and every cleaned group it writes to the CleanerMap's
// throttle, before it goes on.
func TestCleanReportsItsIOToTheThrottle(t *testing.T) {
	e := newEnv(t, compacted)
	p := e.open(t)
	for i := range 60 {
		mustAppend(t, p, batch(t, spec{keys: []string{keyOf(i % 7)}, valueBytes: 40, seq: int32(i)}), AcksAll)
	}
	if err := p.log.Roll(); err != nil {
		t.Fatal(err)
	}
	sizeBefore := p.SizeBytes()
	cm := NewCleanerMap(1 << 20)
	var reported int64
	cm.SetThrottle(func(n int) { reported += int64(n) })
	cleanUntilDone(t, p, cm, e.clock.Now().UnixMilli())
	// The dirty range is read once for the map and once to rewrite it,
	// and what is left is written.
	if want := 2*sizeBefore + p.SizeBytes(); reported < want-sizeBefore/10 || reported > want+sizeBefore/10 {
		t.Fatalf("the throttle heard of %d bytes; want about %d (read twice %d, wrote %d)", reported, want, sizeBefore, p.SizeBytes())
	}
}
