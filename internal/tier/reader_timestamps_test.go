package tier

import (
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
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
