package tier

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// stampedBatch is a v2 batch at baseOffset whose records carry the
// timestamps ts, in order, and a valid CRC.
func stampedBatch(baseOffset base.Offset, ts []int64) []byte {
	var records []byte
	maxTs := ts[0]
	for i, t := range ts {
		r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: t - ts[0], Value: []byte{byte(i), byte(baseOffset)}}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
		maxTs = max(maxTs, t)
	}
	b := kmsg.RecordBatch{
		FirstOffset: int64(baseOffset), Magic: 2, LastOffsetDelta: int32(len(ts) - 1),
		FirstTimestamp: ts[0], MaxTimestamp: maxTs, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(ts)), Records: records,
	}
	out := b.AppendTo(nil)
	out[8], out[9], out[10], out[11] = byte((len(out)-12)>>24), byte((len(out)-12)>>16), byte((len(out)-12)>>8), byte(len(out)-12)
	record.WriteCRC(out)
	return out
}

// TestRemoteOffsetForTimestampNamesTheRecord: the remote tier answers a
// timestamp search as the local log does (the first record at or after
// from whose timestamp reaches ts, inside its batch), for every target and
// for a from at each segment's start or inside it.
func TestRemoteOffsetForTimestampNamesTheRecord(t *testing.T) {
	o := log.DefaultOptions(t.TempDir(), testClock)
	o.SegmentBytes = 2 << 10
	l, err := log.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := range 60 {
		ts := make([]int64, 1+rnd.IntN(6))
		for j := range ts {
			ts[j] = 1_000 + int64(i)*10 + rnd.Int64N(40) - 20 // overlapping, out of order
		}
		if err := l.Append(stampedBatch(l.End(), ts)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	if len(segs) < 3 {
		t.Fatalf("%d segments copied, want several", len(segs))
	}
	for _, s := range segs {
		for _, from := range []base.Offset{s.Range.Start, s.Range.Start + (s.Range.End-s.Range.Start)/2} {
			for ts := int64(950); ts <= 1_650; ts += 7 {
				got, gotTs, ok, err := r.reader.OffsetForTimestamp(t.Context(), s, ts, from)
				if err != nil {
					t.Fatalf("segment %v from %d ts %d: %v", s.Range, from, ts, err)
				}
				want, wantTs, wantOK := l.OffsetForTimestamp(ts, from)
				if wantOK && want >= s.Range.End {
					wantOK = false // in a later segment
				}
				if ok != wantOK || ok && (got != want || gotTs != wantTs) {
					t.Fatalf("segment %v from %d ts %d: remote %d, %d, %v; local %d, %d, %v", s.Range, from, ts, got, gotTs, ok, want, wantTs, wantOK)
				}
			}
		}
	}
}

// TestRemoteOffsetForTimestampWithoutTimeIndexEntries: a time index with
// no entry (the decoder takes one that stops short of the segment's max
// timestamp) sends the search through the whole .log, which still finds
// the first record at or after from reaching ts. Metadata that claims a
// max timestamp no record reaches makes the segment corrupt when the
// search started at the segment's start (it looked at every record);
// from inside the segment, every match may lie below from: none.
func TestRemoteOffsetForTimestampWithoutTimeIndexEntries(t *testing.T) {
	var obj []byte
	next := base.Offset(0)
	for _, ts := range [][]int64{{100, 130}, {120}, {150, 140, 110}} { // offsets 0-1, 2, 3-5
		obj = append(obj, stampedBatch(next, ts)...)
		next += base.Offset(len(ts))
	}
	seg := rseg(1, 0, next, int64(len(obj)), remotemeta.CopyFinished)
	seg.TopicID, seg.MaxTimestampMs = testTopicID, 150
	r := newRig(t, objstore.NewMem())
	putLogOnly(t, r.inner, seg, obj)
	for _, tc := range []struct {
		ts     int64
		from   base.Offset
		want   base.Offset
		wantTs int64
		ok     bool
	}{
		{90, 0, 0, 100, true},
		{125, 0, 1, 130, true},
		{125, 2, 3, 150, true},
		{150, 0, 3, 150, true},
		{141, 4, 0, 0, false},
		{151, 0, 0, 0, false}, // above the metadata's max: no read
	} {
		got, gotTs, ok, err := r.reader.OffsetForTimestamp(t.Context(), seg, tc.ts, tc.from)
		if err != nil || ok != tc.ok || got != tc.want || gotTs != tc.wantTs {
			t.Errorf("OffsetForTimestamp(%d, from %d) = %d, %d, %v, %v; want %d, %d, %v",
				tc.ts, tc.from, got, gotTs, ok, err, tc.want, tc.wantTs, tc.ok)
		}
	}
	seg.MaxTimestampMs = 200
	if _, _, _, err := r.reader.OffsetForTimestamp(t.Context(), seg, 160, 0); !errors.Is(err, ErrCorruptObject) {
		t.Errorf("a search from the start for 160 under a claimed max of 200 = %v, want ErrCorruptObject", err)
	}
	if _, _, ok, err := r.reader.OffsetForTimestamp(t.Context(), seg, 160, 1); ok || err != nil {
		t.Errorf("a search from 1 for 160 under a claimed max of 200 = %v, %v; want none", ok, err)
	}
}
