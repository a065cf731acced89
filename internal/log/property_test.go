package log

import (
	"bytes"
	"math"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
)

// TestRecoveryKeepsLongestIntactPrefix: random appends, rolls, syncs and
// truncations, then a crash that damages only unsynced bytes (a torn tail or a
// flipped bit), then Open. The log must hold exactly the batches that lie
// wholly before the damage, and nothing that Sync acknowledged may be lost.
// A flip in a base offset, which the CRC does not cover, that raises it to
// where recovery takes a gap before the batch keeps that batch, at its new
// offsets, and cuts the overlapping one after it (see doc.go).
func TestRecoveryKeepsLongestIntactPrefix(t *testing.T) {
	root := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp(root, "prop")
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions(dir, clock.NewManual(testEpoch))
		o.SegmentBytes = int64(rapid.IntRange(200, 3000).Draw(t, "segmentBytes"))
		o.IndexIntervalBytes = rapid.IntRange(0, 600).Draw(t, "indexIntervalBytes")
		o.SegmentIndexBytes = rapid.IntRange(timeEntrySize, 200).Draw(t, "segmentIndexBytes")
		l := mustOpen(t, o)

		var model [][]byte // batches in order
		durable := 0       // model[:durable] was acknowledged by Sync
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := l.Sync(); err != nil {
					t.Fatal(err)
				}
				durable = len(model)
			case 2:
				if len(model) == 0 {
					continue
				}
				k := rapid.IntRange(0, len(model)-1).Draw(t, "truncateTo")
				if err := l.TruncateTo(batchBase(model, k)); err != nil {
					t.Fatal(err)
				}
				model, durable = model[:k], min(durable, k)
			default:
				b := makeBatch(l.End(), rapid.IntRange(1, 5).Draw(t, "records"),
					rapid.IntRange(0, 300).Draw(t, "valueBytes"), rapid.Int64Range(0, 1000).Draw(t, "ts"))
				if err := l.Append(b); err != nil {
					t.Fatal(err)
				}
				model = append(model, b)
			}
		}
		segs := l.Segments()
		l.crash()

		want := model
		wantEnd := batchBase(model, len(model))
		durableBytes, totalBytes := len(concat(model[:durable])), len(concat(model))
		if durableBytes < totalBytes {
			p := rapid.IntRange(durableBytes, totalBytes-1).Draw(t, "damageAt")
			k, batchStart := batchAt(model, p)
			path, local, seg := locate(t, o, segs, p)
			if rapid.Bool().Draw(t, "torn") {
				if err := os.Truncate(path, int64(local)); err != nil {
					t.Fatal(err)
				}
				want, wantEnd = model[:k], batchBase(model, k) // batch k is torn, or wholly cut if p == batchStart
			} else {
				// The leader epoch is outside the CRC, so a flip there leaves a
				// valid batch; move such a flip onto the magic byte.
				d := p - batchStart
				if d >= 12 && d < 16 {
					local, d = local+16-d, 16
				}
				bit := rapid.IntRange(0, 7).Draw(t, "bit")
				flipBit(t, path, local, bit)
				want, wantEnd = model[:k], batchBase(model, k)
				if flipped, ok := raisedBaseOffset(model[k], d, bit, segs, seg); ok {
					h, _ := record.ParseHeader(flipped)
					want, wantEnd = append(model[:k:k], flipped), h.NextOffset()
				}
			}
		}

		l = mustOpen(t, o)
		defer l.Close()
		if got := readAll(t, l); !bytes.Equal(got, concat(want)) {
			t.Fatalf("recovered %d bytes, want %d (%d of %d batches)", len(got), len(concat(want)), len(want), len(model))
		}
		if l.End() != wantEnd || l.DurableEnd() != wantEnd || len(want) < durable {
			t.Fatalf("End %d DurableEnd %d, want %d (durable batches %d, kept %d)", l.End(), l.DurableEnd(), wantEnd, durable, len(want))
		}
		checkContiguous(t, l.Segments())
		if err := l.Append(makeBatch(wantEnd, 1, 1, 0)); err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
	})
}

// batchBase is the base offset of model[k], or the end of the model.
func batchBase(model [][]byte, k int) base.Offset {
	if k < len(model) {
		h, _ := record.ParseHeader(model[k])
		return h.BaseOffset
	}
	if k == 0 {
		return 0
	}
	h, _ := record.ParseHeader(model[k-1])
	return h.NextOffset()
}

// batchAt returns the index and start of the batch that holds stream byte p.
func batchAt(model [][]byte, p int) (int, int) {
	start := 0
	for k, b := range model {
		if p < start+len(b) {
			return k, start
		}
		start += len(b)
	}
	panic("position past the end of the model")
}

// raisedBaseOffset is batch b of segment segs[i] with bit flipped in its
// byte d, if that byte is in the base offset, the flip raises it, and
// recovery takes the result: a gap before it is allowed, and nothing
// outside the CRC tells, as long as its offsets stay inside the reach of
// the segment's index and below the next segment's base.
func raisedBaseOffset(b []byte, d, bit int, segs []SegmentInfo, i int) ([]byte, bool) {
	if d >= 8 {
		return nil, false
	}
	flipped := slices.Clone(b)
	flipped[d] ^= 1 << bit
	h, _ := record.ParseHeader(flipped)
	orig, _ := record.ParseHeader(b)
	switch {
	case h.BaseOffset <= orig.BaseOffset, h.LastOffset() < h.BaseOffset,
		int64(h.LastOffset()-segs[i].BaseOffset) > math.MaxUint32,
		i < len(segs)-1 && h.NextOffset() > segs[i+1].BaseOffset:
		return nil, false
	}
	return flipped, true
}

// locate maps stream byte p to a segment file, a position in it, and the
// index of the segment in segs.
func locate(t *rapid.T, o Options, segs []SegmentInfo, p int) (string, int, int) {
	for i, s := range segs {
		if p < int(s.SizeBytes) {
			return segFile(o, s.BaseOffset, ".log"), p, i
		}
		p -= int(s.SizeBytes)
	}
	t.Fatalf("position past the end of the segments")
	return "", 0, 0
}

func flipBit(t *rapid.T, path string, pos, bit int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 1 << bit
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkContiguous(t *rapid.T, segs []SegmentInfo) {
	for i := 1; i < len(segs); i++ {
		if segs[i].BaseOffset != segs[i-1].NextOffset {
			t.Fatalf("segments not contiguous: %+v", segs)
		}
	}
}
