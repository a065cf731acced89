package cleaner

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

const (
	testNow       = testTs + 1_000
	testRetention = int64(500)
)

type cleanCase struct {
	name string
	in   tBatch
	m    *OffsetMap
	last bool // LastBatchOfProducer answers this for the batch
	want Outcome
	keep []int // indexes of the input records written
	// newHorizon: the output gains horizon testNow+testRetention.
	newHorizon bool
	expired    int
	// txnData: the pass kept data of the producer's open transaction.
	txnData bool
	aborted []AbortedTxn
}

func idem(b tBatch) tBatch {
	b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.LeaderEpoch = 7, 3, 40, 9
	return b
}

func withHorizon(b tBatch, horizonMs int64) tBatch {
	b.Horizon, b.BaseTs = true, horizonMs
	for i := range b.Records {
		b.Records[i].TsDelta = testTs - horizonMs + int64(i) // absolute stays testTs+i
	}
	return b
}

func cleanCases() []cleanCase {
	sparse := plain(100, kv("a", "1"), kv("b", "2"), kv("c", "3"))
	sparse.Records[1].OffsetDelta, sparse.Records[2].OffsetDelta = 3, 7
	sparse.LastDelta, sparse.SetLastDelta = 9, true
	withHeaders := plain(100, kv("a", "1"), kv("b", "2"))
	withHeaders.Records[1].Headers = []tHdr{{[]byte("h1"), []byte("v")}, {[]byte("h2"), nil}, {[]byte(""), []byte("")}}
	lat := plain(100, kv("a", "1"), kv("b", "2"), kv("a", "3"))
	lat.LogAppendTime, lat.AppendTs = true, testTs+5_000
	latTomb := plain(100, kv("a", "1"), tomb("b"))
	latTomb.LogAppendTime, latTomb.AppendTs = true, testTs+5_000
	empty := idem(plain(100))
	empty.LastDelta, empty.SetLastDelta = 2, true
	control := idem(plain(100, kv("\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00")))
	control.Control, control.Transactional = true, true
	txn := idem(plain(100, kv("a", "1"), kv("a", "2")))
	txn.Transactional = true
	emptyKey := plain(100, tRec{Key: []byte{}, Value: []byte("v")}, kv("b", "2"))
	twoMarkers := idem(plain(100, kv("\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00"), kv("\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00")))
	twoMarkers.Control, twoMarkers.Transactional = true, true

	return []cleanCase{
		{name: "nothing to remove: copied", in: plain(100, kv("a", "1"), kv("b", "2")), m: mapOf("a", 100, "b", 101),
			want: BatchCopied, keep: []int{0, 1}},
		{name: "keys absent from the map are kept", in: plain(100, kv("a", "1"), kv("b", "2")), m: mapOf("z", 500),
			want: BatchCopied, keep: []int{0, 1}},
		{name: "a key mapped to an earlier offset is kept", in: plain(100, kv("a", "1")), m: mapOf("a", 50),
			want: BatchCopied, keep: []int{0}},
		{name: "nil map: nothing superseded", in: plain(100, kv("a", "1"), kv("a", "2")),
			want: BatchCopied, keep: []int{0, 1}},
		{name: "keyless records are dropped", in: plain(100, kv("a", "1"), keyless("x"), kv("b", "2")), m: mapOf(),
			want: BatchRebuilt, keep: []int{0, 2}},
		{name: "an empty key is a key", in: emptyKey, m: mapOf("b", 101),
			want: BatchCopied, keep: []int{0, 1}},
		{name: "superseded records are dropped", in: plain(100, kv("a", "1"), kv("b", "2"), kv("a", "3")), m: mapOf("a", 102, "b", 101),
			want: BatchRebuilt, keep: []int{1, 2}},
		{name: "superseded by a later batch", in: plain(100, kv("a", "1"), kv("b", "2")), m: mapOf("a", 200, "b", 300),
			want: BatchRemoved},
		{name: "a kept tombstone gets a delete horizon", in: plain(100, kv("a", "1"), tomb("b")), m: mapOf("b", 101),
			want: BatchRebuilt, keep: []int{0, 1}, newHorizon: true},
		{name: "a superseded tombstone goes without a horizon", in: plain(100, tomb("a"), kv("a", "2")), m: mapOf("a", 101),
			want: BatchRebuilt, keep: []int{1}},
		{name: "tombstone before its horizon is kept", in: withHorizon(plain(100, kv("a", "1"), tomb("b")), testNow+1),
			want: BatchCopied, keep: []int{0, 1}},
		{name: "tombstone at its horizon is dropped", in: withHorizon(plain(100, kv("a", "1"), tomb("b")), testNow),
			want: BatchRebuilt, keep: []int{0}, expired: 1},
		{name: "only expired tombstones: removed", in: withHorizon(plain(100, tomb("a"), tomb("b")), testNow-1),
			want: BatchRemoved, expired: 2},
		{name: "all gone, plain batch: removed", in: plain(100, keyless("x"), keyless("y")),
			want: BatchRemoved},
		{name: "all gone, producer's last batch: its last record stays", in: idem(plain(100, kv("a", "1"), kv("b", "2"))), m: mapOf("a", 200, "b", 200), last: true,
			want: BatchRebuilt, keep: []int{1}},
		{name: "producer's last batch: its tombstones do not expire", in: withHorizon(idem(plain(100, tomb("a"))), testNow), last: true,
			want: BatchCopied, keep: []int{0}},
		{name: "all gone, producer's last, a tombstone stays last: it gets a horizon", in: idem(plain(100, kv("a", "1"), tomb("b"))), m: mapOf("a", 200, "b", 200), last: true,
			want: BatchRebuilt, keep: []int{1}, newHorizon: true},
		{name: "all gone, not the producer's last: removed", in: idem(plain(100, kv("a", "1"))), m: mapOf("a", 200),
			want: BatchRemoved},
		{name: "empty batch, producer's last: copied", in: empty, last: true,
			want: BatchCopied},
		{name: "empty batch, no longer the producer's last: removed", in: empty,
			want: BatchRemoved},
		{name: "marker of a transaction with data in the log: copied", in: control, m: mapOf("\x00\x00\x00\x00", 999), txnData: true,
			want: BatchCopied, keep: []int{0}},
		{name: "marker of a transaction with no data left: gets a horizon", in: control,
			want: BatchRebuilt, keep: []int{0}, newHorizon: true},
		{name: "marker before its horizon: copied", in: withHorizon(control, testNow+1),
			want: BatchCopied, keep: []int{0}},
		{name: "marker at its horizon, no data left: removed", in: withHorizon(control, testNow),
			want: BatchRemoved},
		{name: "marker at its horizon with data: copied", in: withHorizon(control, testNow), txnData: true,
			want: BatchCopied, keep: []int{0}},
		{name: "committed transactional data is cleaned like any other", in: txn, m: mapOf("a", 101),
			want: BatchRebuilt, keep: []int{1}},
		{name: "aborted transactional data goes", in: txn, aborted: []AbortedTxn{{ProducerID: 7, First: 90, Last: 150}},
			want: BatchRemoved},
		{name: "another producer's abort does not touch it", in: txn, aborted: []AbortedTxn{{ProducerID: 8, First: 90, Last: 150}},
			want: BatchCopied, keep: []int{0, 1}},
		{name: "an abort that ended before it does not touch it", in: txn, aborted: []AbortedTxn{{ProducerID: 7, First: 90, Last: 99}},
			want: BatchCopied, keep: []int{0, 1}},
		{name: "aborted, but the producer's last batch: its last record stays", in: txn, last: true, aborted: []AbortedTxn{{ProducerID: 7, First: 100, Last: 150}},
			want: BatchRebuilt, keep: []int{1}},
		{name: "a non-transactional batch is never aborted, even inside its producer's aborted range", in: idem(plain(100, kv("a", "1"))),
			aborted: []AbortedTxn{{ProducerID: 7, First: 90, Last: 150}}, want: BatchCopied, keep: []int{0}},
		{name: "a control batch that is not one marker stays as it is", in: twoMarkers,
			want: BatchCopied, keep: []int{0, 1}},
		{name: "offset gaps: span kept", in: sparse, m: mapOf("b", 200),
			want: BatchRebuilt, keep: []int{0, 2}},
		{name: "headers survive a rebuild", in: withHeaders, m: mapOf("a", 200),
			want: BatchRebuilt, keep: []int{1}},
		{name: "idempotent rebuild keeps producer fields", in: idem(plain(100, kv("a", "1"), kv("b", "2"), kv("c", "3"))), m: mapOf("a", 200, "c", 200),
			want: BatchRebuilt, keep: []int{1}},
		{name: "LogAppendTime keeps its max timestamp", in: lat, m: mapOf("a", 102),
			want: BatchRebuilt, keep: []int{1, 2}},
		{name: "LogAppendTime tombstone gets a horizon", in: latTomb,
			want: BatchRebuilt, keep: []int{0, 1}, newHorizon: true},
	}
}

func TestCleanBatchRules(t *testing.T) {
	for _, codec := range allCodecs {
		for _, tc := range cleanCases() {
			t.Run(tc.name+"/"+codecName(codec), func(t *testing.T) {
				tc.in.Codec = codec
				in := build(t, tc.in)
				var asked []base.Offset
				r := Rules{Map: tc.m, NowMs: testNow, DeleteRetentionMs: testRetention,
					LastBatchOfProducer: func(pid int64, last base.Offset) bool {
						if pid != tc.in.ProducerID {
							t.Errorf("asked about producer %d", pid)
						}
						asked = append(asked, last)
						return tc.last
					}, Pass: NewPass(), Aborted: NewAbortedTxns(tc.aborted, 0)}
				if tc.txnData {
					r.Pass.keptTxnData(tc.in.ProducerID)
				}
				dst := []byte("prefix")
				out, res, err := CleanBatch(dst, in, r)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out[:len(dst)], dst) {
					t.Fatal("dst prefix clobbered")
				}
				if res.Outcome != tc.want {
					t.Fatalf("outcome %v, want %v", res.Outcome, tc.want)
				}
				checkResult(t, tc, in, out[len(dst):], res)
				for _, a := range asked {
					if want := tc.in.Base + base.Offset(lastDelta(tc.in)); a != want {
						t.Errorf("asked about last offset %d, want %d", a, want)
					}
				}
			})
		}
	}
}

func lastDelta(s tBatch) int32 {
	if s.SetLastDelta {
		return s.LastDelta
	}
	return s.Records[len(s.Records)-1].OffsetDelta
}

func checkResult(t *testing.T, tc cleanCase, in, out []byte, res BatchResult) {
	t.Helper()
	if res.BytesRead != int64(len(in)) || res.BytesWritten != int64(len(out)) {
		t.Errorf("bytes read/written %d/%d, want %d/%d", res.BytesRead, res.BytesWritten, len(in), len(out))
	}
	if res.RecordsKept != len(tc.keep) || res.RecordsDropped != len(tc.in.Records)-len(tc.keep) || res.TombstonesExpired != tc.expired {
		t.Errorf("kept/dropped/expired %d/%d/%d, want %d/%d/%d", res.RecordsKept, res.RecordsDropped, res.TombstonesExpired,
			len(tc.keep), len(tc.in.Records)-len(tc.keep), tc.expired)
	}
	if (res.HorizonsSet == 1) != tc.newHorizon || res.HorizonsSet > 1 {
		t.Errorf("HorizonsSet %d, want a new horizon: %v", res.HorizonsSet, tc.newHorizon)
	}
	if (res.BatchesRemoved == 1) != (res.Outcome == BatchRemoved) || res.BatchesRemoved > 1 {
		t.Errorf("BatchesRemoved %d for outcome %v", res.BatchesRemoved, res.Outcome)
	}
	checkNextHorizon(t, out, res)
	switch res.Outcome {
	case BatchRemoved:
		if len(out) != 0 {
			t.Fatalf("removed batch wrote %d bytes", len(out))
		}
		return
	case BatchCopied:
		if !bytes.Equal(out, in) {
			t.Fatal("copied batch differs from its input")
		}
		return
	}
	ih, _ := record.ParseHeader(in)
	oh, recs := readBatch(t, out)
	if oh.BaseOffset != ih.BaseOffset || oh.LastOffsetDelta != ih.LastOffsetDelta ||
		oh.PartitionLeaderEpoch != ih.PartitionLeaderEpoch || oh.ProducerID != ih.ProducerID ||
		oh.ProducerEpoch != ih.ProducerEpoch || oh.BaseSequence != ih.BaseSequence ||
		oh.LogAppendTime() != ih.LogAppendTime() || oh.Transactional() != ih.Transactional() || oh.Control() != ih.Control() {
		t.Errorf("header fields changed:\n in %+v\nout %+v", ih, oh)
	}
	if oh.Codec() != ih.Codec() {
		t.Errorf("codec %d, want %d", oh.Codec(), ih.Codec())
	}
	if int(oh.NumRecords) != len(tc.keep) || len(recs) != len(tc.keep) {
		t.Fatalf("%d records (header %d), want %d", len(recs), oh.NumRecords, len(tc.keep))
	}
	maxTs := recs[0].Ts
	for i, k := range tc.keep {
		if want := expected(tc.in, k); !equalRec(recs[i], want) {
			t.Errorf("record %d: %v, want %v", i, recs[i], want)
		}
		maxTs = max(maxTs, recs[i].Ts)
	}
	if ih.LogAppendTime() {
		maxTs = ih.MaxTimestamp
	}
	if oh.MaxTimestamp != maxTs {
		t.Errorf("max timestamp %d, want %d", oh.MaxTimestamp, maxTs)
	}
	hz, ok := oh.DeleteHorizon()
	ihz, iok := ih.DeleteHorizon()
	switch {
	case tc.newHorizon && (!ok || hz != testNow+testRetention):
		t.Errorf("horizon %d (%v), want %d", hz, ok, testNow+testRetention)
	case !tc.newHorizon && (ok != iok || hz != ihz):
		t.Errorf("horizon %d (%v), want the input's %d (%v)", hz, ok, ihz, iok)
	}
}

// checkNextHorizon: the result names a next horizon exactly when the
// written batch holds a tombstone whose horizon is still ahead, and it is
// that batch's horizon.
func checkNextHorizon(t *testing.T, out []byte, res BatchResult) {
	t.Helper()
	holdsTombstone, horizon, hasHorizon := false, int64(0), false
	if len(out) > 0 {
		oh, recs := readBatch(t, out)
		horizon, hasHorizon = oh.DeleteHorizon()
		for _, r := range recs {
			holdsTombstone = holdsTombstone || (r.Value == nil && !oh.Control())
		}
		if hasHorizon && horizon <= testNow {
			holdsTombstone = false // past its horizon: kept whole or pinned
		}
		if oh.Control() && hasHorizon && horizon > testNow {
			holdsTombstone = true // a marker waiting for its horizon
		}
	}
	switch {
	case res.HasNextHorizon != holdsTombstone:
		t.Errorf("HasNextHorizon %v, but the written batch holds a tombstone: %v", res.HasNextHorizon, holdsTombstone)
	case holdsTombstone && (!hasHorizon || res.NextHorizonMs != horizon):
		t.Errorf("NextHorizonMs %d, written batch's horizon %d (%v)", res.NextHorizonMs, horizon, hasHorizon)
	}
}

// A producer's last batch pins its keys for the rest of the pass: a later
// tombstone of one of them stays past its horizon, since removing it would
// bring the kept record's superseded value back. Without the pin it goes.
func TestPinnedKeysKeepTombstones(t *testing.T) {
	last := build(t, idem(plain(100, kv("a", "old"), kv("b", "old"))))
	tombstone := build(t, withHorizon(plain(200, tomb("a")), testNow-1))
	other := build(t, withHorizon(plain(300, tomb("c")), testNow-1))
	for _, kept := range []bool{true, false} {
		r := Rules{Map: mapOf("a", 200, "b", 400), NowMs: testNow, DeleteRetentionMs: testRetention,
			LastBatchOfProducer: func(int64, base.Offset) bool { return kept }, Pass: NewPass()}
		out, res, err := CleanBatch(nil, last, r)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]Outcome{true: BatchRebuilt, false: BatchRemoved}[kept]; res.Outcome != want || kept != (len(out) > 0) {
			t.Fatalf("kept=%v: producer's last batch %v, want %v", kept, res.Outcome, want)
		}
		_, res, _ = CleanBatch(nil, tombstone, r)
		if want := map[bool]Outcome{true: BatchCopied, false: BatchRemoved}[kept]; res.Outcome != want {
			t.Fatalf("kept=%v: tombstone of a after its horizon %v, want %v", kept, res.Outcome, want)
		}
		if kept && (res.TombstonesPinned != 1 || res.HasNextHorizon) {
			t.Fatalf("pinned tombstone: %+v; it must not ask for another pass", res)
		}
		if _, res, _ = CleanBatch(nil, other, r); res.Outcome != BatchRemoved {
			t.Fatalf("kept=%v: tombstone of an unpinned key %v, want removed", kept, res.Outcome)
		}
	}
}

func TestBatchResultAdd(t *testing.T) {
	var sum BatchResult
	sum.Add(BatchResult{Outcome: BatchRebuilt, RecordsKept: 2, RecordsDropped: 3, TombstonesExpired: 1, HorizonsSet: 1, BytesRead: 100, BytesWritten: 60})
	sum.Add(BatchResult{Outcome: BatchRemoved, RecordsDropped: 4, BatchesRemoved: 1, BytesRead: 80})
	sum.Add(BatchResult{Outcome: BatchCopied, HasNextHorizon: true, NextHorizonMs: 900})
	sum.Add(BatchResult{Outcome: BatchCopied, HasNextHorizon: true, NextHorizonMs: 700})
	sum.Add(BatchResult{Outcome: BatchCopied, HasNextHorizon: true, NextHorizonMs: 800})
	want := BatchResult{RecordsKept: 2, RecordsDropped: 7, TombstonesExpired: 1, HorizonsSet: 1, BatchesRemoved: 1, BytesRead: 180, BytesWritten: 60,
		HasNextHorizon: true, NextHorizonMs: 700}
	if sum != want {
		t.Fatalf("sum %+v, want %+v", sum, want)
	}
}

func codecName(c record.Codec) string {
	return [...]string{"none", "gzip", "snappy", "lz4", "zstd"}[c]
}

// A horizon is set by the first pass that writes the tombstone, never moved
// by later ones, and the tombstone goes at the first pass at or after it.
func TestCleanBatchHorizonSetOnceThenExpires(t *testing.T) {
	for _, codec := range allCodecs {
		s := plain(100, kv("a", "1"), tomb("b"), kv("c", "3"))
		s.Codec = codec
		b := build(t, s)
		rules := func(now int64) Rules {
			return Rules{NowMs: now, DeleteRetentionMs: testRetention, LastBatchOfProducer: neverLast, Pass: NewPass()}
		}
		horizon := testNow + testRetention
		steps := []struct {
			now     int64
			want    Outcome
			records int
		}{
			{testNow, BatchRebuilt, 3},      // gains the horizon
			{testNow + 1, BatchCopied, 3},   // horizon stays put
			{horizon - 1, BatchCopied, 3},   // still before it
			{horizon, BatchRebuilt, 2},      // tombstone expires
			{horizon + 100, BatchCopied, 2}, // nothing left to do
		}
		for i, st := range steps {
			out, res, err := CleanBatch(nil, b, rules(st.now))
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != st.want {
				t.Fatalf("%s step %d: outcome %v, want %v", codecName(codec), i, res.Outcome, st.want)
			}
			h, recs := readBatch(t, out)
			if hz, ok := h.DeleteHorizon(); !ok || hz != horizon {
				t.Fatalf("%s step %d: horizon %d (%v), want %d", codecName(codec), i, hz, ok, horizon)
			}
			if len(recs) != st.records {
				t.Fatalf("%s step %d: %d records, want %d", codecName(codec), i, len(recs), st.records)
			}
			for _, r := range recs {
				idx := int(r.Offset - 100)
				if want := expected(s, idx); !equalRec(r, want) {
					t.Fatalf("%s step %d: %v, want %v", codecName(codec), i, r, want)
				}
			}
			b = out
		}
	}
}

func TestCleanBatchCorrupt(t *testing.T) {
	good := build(t, plain(100, kv("a", "1"), kv("b", "2")))
	reCRC := func(b []byte) []byte { record.WriteCRC(b); return b }
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	badDeltas := plain(100, kv("a", "1"), kv("b", "2"))
	badDeltas.Records[1].OffsetDelta = 0
	beyondLast := plain(100, kv("a", "1"), kv("b", "2"))
	beyondLast.LastDelta, beyondLast.SetLastDelta = 0, true
	// Each of these is caught by one check only: the CRC, the strict rise
	// of offset deltas, their bound by the last offset delta, and the
	// record count's bound by the span (before AddBatch sizes anything by it).
	repeatedDelta := plain(100, kv("a", "1"), kv("b", "2"))
	repeatedDelta.Records[1].OffsetDelta = 0
	repeatedDelta.LastDelta, repeatedDelta.SetLastDelta = 1, true
	pastSpan := plain(100, kv("a", "1"), kv("b", "2"))
	pastSpan.Records[1].OffsetDelta = 2
	pastSpan.LastDelta, pastSpan.SetLastDelta = 1, true
	countHuge := func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:61], math.MaxInt32); return reCRC(b) }
	garbageZstd := build(t, plain(100, kv("a", "1")))
	garbageZstd[22] |= byte(record.CodecZstd) // attributes low byte
	record.WriteCRC(garbageZstd)

	cases := map[string][]byte{
		"empty":               nil,
		"short header":        good[:40],
		"truncated":           good[:len(good)-1],
		"trailing byte":       append(append([]byte{}, good...), 0),
		"bad CRC":             mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }),
		"magic 1":             mutate(func(b []byte) []byte { b[16] = 1; return reCRC(b) }),
		"count too high":      mutate(func(b []byte) []byte { b[60] = 3; return reCRC(b) }),
		"count too low":       mutate(func(b []byte) []byte { b[60] = 1; return reCRC(b) }),
		"codec 6":             mutate(func(b []byte) []byte { b[22] |= 6; return reCRC(b) }),
		"negative last delta": mutate(func(b []byte) []byte { b[23] = 0xff; return reCRC(b) }),
		"record cut short":    mutate(func(b []byte) []byte { b[record.HeaderSize] = 0x7f; return reCRC(b) }),
		"deltas not rising":   build(t, badDeltas),
		"delta past the span": build(t, beyondLast),
		"garbage zstd":        garbageZstd,
		"bad CRC only":        mutate(func(b []byte) []byte { b[len(b)-2] ^= 1; return b }), // a value byte
		"repeated delta":      build(t, repeatedDelta),
		"delta past last":     build(t, pastSpan),
		"count far too high":  mutate(countHuge),
	}
	for name, b := range cases {
		r := Rules{Map: mapOf("a", 200), NowMs: testNow, LastBatchOfProducer: neverLast, Pass: NewPass()}
		dst := []byte("keep")
		out, _, err := CleanBatch(dst, b, r)
		if !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("%s: error %v, want ErrCorruptBatch", name, err)
		}
		if !bytes.Equal(out, dst) {
			t.Errorf("%s: dst changed on error", name)
		}
		m := NewOffsetMap(1 << 12)
		if _, err := m.AddBatch(b, nil); !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("%s: AddBatch error %v, want ErrCorruptBatch", name, err)
		}
		if m.Len() != 0 {
			t.Errorf("%s: AddBatch of a corrupt batch added %d keys", name, m.Len())
		}
	}
}

// Cleaning reuses its buffers: once warm, a rebuild of an uncompressed batch
// (decode, decide, re-encode with a new horizon) allocates nothing.
func TestCleanBatchDoesNotAllocatePerRecord(t *testing.T) {
	var recs []tRec
	for i := range 200 {
		recs = append(recs, kv(string(rune('a'+i%26)), "value"), tomb("gone"))
	}
	in := build(t, plain(100, recs...))
	m := NewOffsetMap(1 << 16)
	if ok, err := m.AddBatch(in, nil); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var c Cleaner
	dst := make([]byte, 0, 2*len(in))
	r := Rules{Map: m, NowMs: testNow, DeleteRetentionMs: testRetention, LastBatchOfProducer: neverLast, Pass: NewPass()}
	allocs := testing.AllocsPerRun(20, func() {
		_, res, err := c.CleanBatch(dst, in, r)
		if err != nil || res.Outcome != BatchRebuilt || res.RecordsKept != 27 {
			t.Fatal(res, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per batch, want 0", allocs)
	}
}

func FuzzCleanBatch(f *testing.F) {
	for _, codec := range allCodecs {
		s := plain(5, kv("a", "1"), tomb("b"), keyless("c"), kv("a", "2"))
		s.Codec = codec
		f.Add(build(f, s), int64(0), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, now int64, fixFrame bool) {
		if fixFrame && len(b) >= record.HeaderSize {
			// Let the fuzzer past the length and CRC checks, into the
			// header fields and the records.
			b = append([]byte{}, b...)
			if err := record.FinishBatch(b); err != nil {
				t.Skip()
			}
		}
		m := NewOffsetMap(1 << 10)
		if _, err := m.AddBatch(b, nil); err != nil && !errors.Is(err, ErrCorruptBatch) && !errors.Is(err, ErrMapTooSmall) {
			t.Fatalf("AddBatch: unexpected error %v", err)
		}
		r := Rules{Map: m, NowMs: now, DeleteRetentionMs: 10, LastBatchOfProducer: func(int64, base.Offset) bool { return true }, Pass: NewPass()}
		out, res, err := CleanBatch(nil, b, r)
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if res.Outcome == BatchRemoved {
			return
		}
		// Whatever was accepted must come out as one valid batch.
		if n, err := record.ValidPrefix(out); err != nil || n != len(out) {
			t.Fatalf("output not a valid batch: %d of %d, %v", n, len(out), err)
		}
		if _, _, err := CleanBatch(nil, out, r); err != nil {
			t.Fatalf("output does not clean again: %v", err)
		}
	})
}

// A delete.retention.ms so large that now + it overflows means "never": the
// horizon saturates at the largest time, and the tombstone survives any
// later pass instead of getting a horizon in the past.
func TestCleanBatchHugeDeleteRetentionNeverExpires(t *testing.T) {
	in := build(t, plain(100, kv("a", "1"), tomb("b")))
	r := Rules{NowMs: testNow, DeleteRetentionMs: math.MaxInt64, LastBatchOfProducer: neverLast, Pass: NewPass()}
	out, res, err := CleanBatch(nil, in, r)
	if err != nil {
		t.Fatal(err)
	}
	oh, _ := readBatch(t, out)
	if hz, ok := oh.DeleteHorizon(); !ok || hz != math.MaxInt64 || res.NextHorizonMs != math.MaxInt64 {
		t.Fatalf("horizon %d (%v), next %d; want %d", hz, ok, res.NextHorizonMs, int64(math.MaxInt64))
	}
	r.NowMs, r.Pass = testNow+testRetention, NewPass()
	if _, res, err = CleanBatch(nil, out, r); err != nil || res.Outcome != BatchCopied || res.TombstonesExpired != 0 {
		t.Fatalf("next pass: %+v, %v; want the tombstone kept", res, err)
	}
}
