package tier

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// overlapping answers as partition.AbortedTxns does over list (ascending
// by LastOffset): every entry with LastOffset >= from and FirstOffset < upTo.
func overlapping(list []AbortedTxn) func(from, upTo base.Offset) []AbortedTxn {
	return func(from, upTo base.Offset) []AbortedTxn {
		var out []AbortedTxn
		for _, t := range list {
			if t.LastOffset >= from && t.FirstOffset < upTo {
				out = append(out, t)
			}
		}
		return out
	}
}

// abortedAcross is a list of aborted transactions over the sealed
// segments s of a log (at least 4, of at least 4 offsets each): one
// inside s[0]; one from s[1] aborted in s[2], so s[1] has no entry of its
// own; one inside s[2]; one from the last sealed segment aborted past it,
// in the active segment.
func abortedAcross(t *testing.T, s []LocalSegment) []AbortedTxn {
	t.Helper()
	if len(s) < 4 {
		t.Fatalf("%d sealed segments, want at least 4", len(s))
	}
	txn := func(pid int64, first, last base.Offset) AbortedTxn {
		return AbortedTxn{ProducerID: base.ProducerID(pid), FirstOffset: first, LastOffset: last, LastStableOffset: last + 1}
	}
	last := s[len(s)-1]
	return []AbortedTxn{
		txn(1, s[0].BaseOffset, s[0].BaseOffset+2),
		txn(2, s[1].BaseOffset+1, s[2].BaseOffset+1),
		txn(3, s[2].BaseOffset+2, s[2].BaseOffset+3),
		txn(4, last.NextOffset-1, last.NextOffset),
	}
}

// sealedOf is l's segments without the active one.
func sealedOf(l *log.Log) []LocalSegment {
	s := LocalSegmentsOf(l.Segments())
	return s[:len(s)-1]
}

// markersIn is the entries of list whose marker is in r.
func markersIn(list []AbortedTxn, r base.Range) []AbortedTxn {
	var out []AbortedTxn
	for _, t := range list {
		if r.Contains(t.LastOffset) {
			out = append(out, t)
		}
	}
	return out
}

// Each uploaded segment's transaction index holds exactly the aborted
// transactions whose ABORT marker is in its range (Kafka's rule), in
// Kafka's layout; a segment with none has no object, and reads as none.
func TestCopyWritesTxnIndexOfMarkersInRange(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l := newTestLog(t, 60, 8<<10)
			aborted := abortedAcross(t, sealedOf(l))
			r := newRig(t, store)
			segs := r.copyAllFrom(LogSource{Log: l, Aborted: overlapping(aborted)})
			withIndex := 0
			for _, seg := range segs {
				want := markersIn(aborted, seg.Range)
				got, err := r.reader.TxnIndex(t.Context(), seg)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("TxnIndex of %v = %+v, %v; want %+v", seg.Range, got, err, want)
				}
				body, err := readObject(t, r.inner, SegmentKey(seg, SuffixTxnIndex))
				if len(want) == 0 {
					if !errors.Is(err, objstore.ErrNotFound) {
						t.Fatalf("segment %v without aborted markers: txnindex object %x, %v; want none", seg.Range, body, err)
					}
					continue
				}
				withIndex++
				if err != nil || !bytes.Equal(body, encodeTxnIndex(want)) {
					t.Fatalf("txnindex object of %v = %x, %v; want %x", seg.Range, body, err, encodeTxnIndex(want))
				}
			}
			if withIndex != 2 {
				t.Fatalf("%d segments with a transaction index, want 2 (s[0] and s[2])", withIndex)
			}
		})
	}
}

// Deleting a remote segment deletes its transaction index; while the
// segment is claimed, the reconciler counts the object as claimed, and
// once nothing claims it, as an orphan (never foreign).
func TestTxnIndexIsDeletedAndClaimed(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAllFrom(LogSource{Log: l, Aborted: overlapping(abortedAcross(t, sealedOf(l)))})
	key := SegmentKey(segs[0], SuffixTxnIndex)
	listing := r.listing()
	if !slices.ContainsFunc(listing, func(oi objstore.ObjectInfo) bool { return oi.Key == key }) {
		t.Fatalf("no %s in the bucket", key)
	}
	nowMs := testClock.Now().UnixMilli() + 1
	claims, err := NewClaims([]PartitionView{r.meta.view()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := PlanOrphans(listing, claims.Claimed, nowMs, 0); p.Claimed.Objects != len(listing) || len(p.Orphans)+len(p.Young)+len(p.Foreign) != 0 {
		t.Fatalf("with the segments claimed: %+v, want all %d objects claimed", p, len(listing))
	}
	unclaimed, err := NewClaims([]PartitionView{mustView()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := PlanOrphans(listing, unclaimed.Claimed, nowMs, 0); len(p.Foreign) != 0 || len(p.Orphans)+len(p.Young) != len(listing) {
		t.Fatalf("with no claims: %d foreign, want every object an unclaimed segment object", len(p.Foreign))
	}

	if err := r.deleter.Delete(t.Context(), DeleteTask{Segment: segs[0], Reason: DeleteRetention}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.inner.Head(t.Context(), key); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Head(%s) after the delete = %v, want ErrNotFound", key, err)
	}
	if !slices.Contains(r.events.all(), "delete "+key) {
		t.Fatalf("the deleter never deleted %s", key)
	}
}

// A segment uploaded before transaction indexes existed (no txnindex
// object) still reads, has no aborted transaction, and deletes cleanly.
func TestSegmentWithoutTxnIndexReadsAndDeletes(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l) // a source without Aborted uploads as older versions did
	seg := segs[0]
	for _, k := range r.keys() {
		if strings.HasSuffix(k, "."+SuffixTxnIndex.String()) {
			t.Fatalf("transaction index %s uploaded without aborted transactions", k)
		}
	}
	want, err := l.Read(seg.Range.Start, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.reader.Read(t.Context(), seg, seg.Range.Start, 1<<20); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Read = %s, %v; want %s", batchRanges(got), err, batchRanges(want))
	}
	if got, err := r.reader.TxnIndex(t.Context(), seg); got != nil || err != nil {
		t.Fatalf("TxnIndex = %+v, %v; want none", got, err)
	}
	if err := r.deleter.Delete(t.Context(), DeleteTask{Segment: seg, Reason: DeleteRetention}, 0); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.meta.view().Segment(seg.ID); s.State != remotemeta.DeleteFinished {
		t.Fatalf("after the delete: %v", s.State)
	}
	for _, k := range r.keys() {
		if o, err := ParseObjectKey(k); err != nil || o.Segment == seg.ID {
			t.Fatalf("object left: %s (%v)", k, err)
		}
	}
}

// Kafka's TransactionIndex entry, byte for byte.
func TestTxnIndexLayoutIsKafkas(t *testing.T) {
	entry := AbortedTxn{ProducerID: 0x0102, FirstOffset: 3, LastOffset: 5, LastStableOffset: 6}
	want, _ := hex.DecodeString("0000" + "0000000000000102" + "0000000000000003" + "0000000000000005" + "0000000000000006")
	got := encodeTxnIndex([]AbortedTxn{entry})
	if !bytes.Equal(got, want) {
		t.Fatalf("entry %x, want %x", got, want)
	}
	back, err := decodeTxnIndex("k", got, rng(5, 6))
	if err != nil || !slices.Equal(back, []AbortedTxn{entry}) {
		t.Fatalf("decode = %+v, %v", back, err)
	}
	if encodeTxnIndex(nil) != nil {
		t.Fatal("an empty index encodes to bytes")
	}
}

// The decode gateway refuses what Kafka's layout or the marker rule
// forbids, as ErrCorruptObject naming the key.
func TestTxnIndexDecodeRejects(t *testing.T) {
	markers := rng(100, 200)
	good := []AbortedTxn{
		{ProducerID: 7, FirstOffset: 90, LastOffset: 110, LastStableOffset: 111},
		{ProducerID: 8, FirstOffset: 120, LastOffset: 130, LastStableOffset: 131},
	}
	// changed is the encoded index of good with its last entry changed.
	changed := func(change func(*AbortedTxn)) []byte {
		ts := slices.Clone(good)
		change(&ts[len(ts)-1])
		return encodeTxnIndex(ts)
	}
	version1 := encodeTxnIndex(good)
	version1[txnEntryBytes+1] = 1
	cases := map[string][]byte{
		"not whole entries":        encodeTxnIndex(good)[:2*txnEntryBytes-1],
		"an entry more than whole": append(encodeTxnIndex(good), 0),
		"version 1":                version1,
		"first offset above last":  changed(func(t *AbortedTxn) { t.FirstOffset = t.LastOffset + 1 }),
		"marker past the segment":  changed(func(t *AbortedTxn) { t.LastOffset = markers.End }),
		"marker before the segment": changed(func(t *AbortedTxn) {
			t.FirstOffset, t.LastOffset = 10, markers.Start-1
		}),
		"a marker at the one before": changed(func(t *AbortedTxn) {
			t.FirstOffset, t.LastOffset = 105, good[0].LastOffset
		}),
		"a marker below the one before": changed(func(t *AbortedTxn) {
			t.FirstOffset, t.LastOffset = 101, good[0].LastOffset-1
		}),
		"negative producer id":        changed(func(t *AbortedTxn) { t.ProducerID = -1 }),
		"negative first offset":       changed(func(t *AbortedTxn) { t.FirstOffset = -1 }),
		"negative last stable offset": changed(func(t *AbortedTxn) { t.LastStableOffset = -1 }),
	}
	if got, err := decodeTxnIndex("k", encodeTxnIndex(good), markers); err != nil || !slices.Equal(got, good) {
		t.Fatalf("the good index: %+v, %v", got, err)
	}
	zeros := []AbortedTxn{{}} // producer id 0, a marker at offset 0
	if got, err := decodeTxnIndex("k", encodeTxnIndex(zeros), rng(0, 10)); err != nil || !slices.Equal(got, zeros) {
		t.Fatalf("an index of an all-zero entry: %+v, %v", got, err)
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeTxnIndex("bucket/key", b, markers); !errors.Is(err, ErrCorruptObject) || !strings.Contains(err.Error(), "bucket/key") {
				t.Fatalf("decode = %v, want ErrCorruptObject naming the key", err)
			}
		})
	}
}

// A corrupt transaction index in the bucket is an error naming its key;
// only a COPY_FINISHED segment's index is read.
func TestReaderTxnIndexRefusesCorruptAndUnfinished(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	seg := r.copyAllFrom(LogSource{Log: l, Aborted: overlapping(abortedAcross(t, sealedOf(l)))})[0]
	key := SegmentKey(seg, SuffixTxnIndex)
	putObject(t, r.inner, key, []byte("not an index"))
	if _, err := r.reader.TxnIndex(t.Context(), seg); !errors.Is(err, ErrCorruptObject) || !strings.Contains(err.Error(), key) {
		t.Fatalf("TxnIndex of a corrupt object = %v, want ErrCorruptObject naming %s", err, key)
	}
	seg.State = remotemeta.CopyStarted
	if _, err := r.reader.TxnIndex(t.Context(), seg); !errors.Is(err, ErrNotReadable) {
		t.Fatalf("TxnIndex of a COPY_STARTED segment = %v, want ErrNotReadable", err)
	}
}

// A source whose aborted transactions break the index's invariants fails
// the copy before COPY_STARTED: nothing is written.
func TestCopyRefusesABadTxnIndex(t *testing.T) {
	l := newTestLog(t, 30, 1<<20)
	r := newRig(t, objstore.NewMem())
	local := LocalSegmentsOf(l.Segments())[0]
	outside := AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: local.NextOffset, LastStableOffset: local.NextOffset + 1}
	src := badAbortedSource{LogSource{Log: l}, []AbortedTxn{outside}}
	_, err := r.copier.Copy(t.Context(), CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epoch0}, src, testTopicID, testTP, 0)
	if err == nil || !strings.Contains(err.Error(), "transaction index") {
		t.Fatalf("Copy = %v, want a transaction index error", err)
	}
	if len(r.events.all()) != 0 {
		t.Fatalf("a refused copy wrote %v", r.events.all())
	}
}

// badAbortedSource answers ts for any upload, whatever its range.
type badAbortedSource struct {
	LogSource
	ts []AbortedTxn
}

func (s badAbortedSource) AbortedTxns(base.Range) []AbortedTxn { return s.ts }

// Whatever decodes re-encodes to the same bytes, and decoding never panics.
func FuzzDecodeTxnIndex(f *testing.F) {
	f.Add(encodeTxnIndex([]AbortedTxn{{ProducerID: 1, FirstOffset: 2, LastOffset: 3, LastStableOffset: 4}}), int64(0), int64(10))
	f.Add([]byte{0, 1}, int64(0), int64(1))
	f.Fuzz(func(t *testing.T, b []byte, start, end int64) {
		ts, err := decodeTxnIndex("k", b, base.Range{Start: base.Offset(start), End: base.Offset(end)})
		if err != nil {
			return
		}
		if len(ts) > 0 && !bytes.Equal(encodeTxnIndex(ts), b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, ts, encodeTxnIndex(ts))
		}
	})
}
