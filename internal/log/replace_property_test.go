package log

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
)

// TestCompactedLogModel runs random appends, rolls, syncs, replacements
// (random runs of sealed segments, random batches dropped or shrunk),
// truncations at random offsets (batch starts, gaps, inside batches),
// deletions and reopens (clean, unclean, without index files) against a
// model that is the list of batches the log holds. After every step the
// log must read as the model, from every offset.
func TestCompactedLogModel(t *testing.T) {
	root := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp(root, "prop")
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions(dir, clock.NewManual(testEpoch))
		o.SegmentBytes = int64(rapid.IntRange(300, 2000).Draw(t, "segmentBytes"))
		o.IndexIntervalBytes = rapid.IntRange(0, 400).Draw(t, "indexIntervalBytes")
		l := mustOpen(t, o)
		defer func() { l.Close() }()
		var model [][]byte
		gen := int64(0)
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			switch op := rapid.IntRange(0, 11).Draw(t, "op"); op {
			case 0, 1, 2:
				for range rapid.IntRange(1, 4).Draw(t, "batches") {
					gen++
					b := makeBatch(l.End(), rapid.IntRange(1, 4).Draw(t, "records"), rapid.IntRange(0, 120).Draw(t, "valueBytes"), gen%37)
					if err := l.Append(b); err != nil {
						t.Fatal(err)
					}
					model = append(model, b)
				}
			case 3:
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
			case 4:
				if err := l.Sync(); err != nil {
					t.Fatal(err)
				}
			case 5, 6:
				model = replaceRandom(t, l, model)
			case 7:
				start, end := l.Start(), l.End()
				to := start + base.Offset(rapid.Int64Range(0, int64(end-start)).Draw(t, "truncateTo"))
				err := l.TruncateTo(to)
				if k := servingBatch(model, to); k < len(model) && headerOf(model[k]).BaseOffset < to {
					if !errors.Is(err, ErrNotBatchBoundary) {
						t.Fatalf("TruncateTo(%d) inside a batch: %v", to, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("TruncateTo(%d): %v", to, err)
				}
				model = model[:servingBatch(model, to)]
				if l.End() != to {
					t.Fatalf("End %d after TruncateTo(%d)", l.End(), to)
				}
			case 8:
				start, end := l.Start(), l.End()
				to := start + base.Offset(rapid.Int64Range(0, int64(end-start)).Draw(t, "deleteBefore"))
				if err := l.DeleteSegmentsBefore(to); err != nil {
					t.Fatal(err)
				}
				model = model[servingBatch(model, l.Start()):]
			case 9, 10, 11:
				start, end := l.Start(), l.End()
				switch op {
				case 9:
					if err := l.Close(); err != nil {
						t.Fatal(err)
					}
				case 10:
					l.crash()
				case 11:
					l.crash()
					es, err := os.ReadDir(dir)
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range es {
						if _, suffix, ok := parseSegmentName(e.Name()); ok && suffix != logSuffix {
							if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				l = mustOpen(t, o)
				if l.Start() != start || l.End() < end {
					t.Fatalf("reopened as [%d, %d), was [%d, %d)", l.Start(), l.End(), start, end)
				}
			}
			checkModel(t, l, model)
		}
	})
}

// replaceRandom replaces a random run of sealed segments with a random
// compaction of their batches and returns the new model.
func replaceRandom(t *rapid.T, l *Log, model [][]byte) [][]byte {
	segs := l.Segments()
	sealed := segs[:len(segs)-1]
	if len(sealed) == 0 {
		return model
	}
	i := rapid.IntRange(0, len(sealed)-1).Draw(t, "first")
	n := rapid.IntRange(1, min(3, len(sealed)-i)).Draw(t, "segments")
	var bases []base.Offset
	for _, s := range sealed[i : i+n] {
		bases = append(bases, s.BaseOffset)
	}
	r, err := l.BeginReplacement(bases)
	if err != nil {
		t.Fatalf("BeginReplacement(%v): %v", bases, err)
	}
	defer r.Abort()
	rg := r.Range()
	lo, hi := servingBatch(model, rg.Start), servingBatch(model, rg.End)
	var plan keepPlan
	for range model[lo:hi] {
		plan += keepPlan(rapid.SampledFrom([]string{"k", "d", "s"}).Draw(t, "keep"))
	}
	kept := applyPlan(model[lo:hi], plan)
	for _, b := range kept {
		if err := r.Append(b); err != nil {
			t.Fatalf("Replacement.Append: %v", err)
		}
	}
	if err := r.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return append(append(append([][]byte(nil), model[:lo]...), kept...), model[hi:]...)
}

// checkModel checks that l holds model and serves it from every offset.
func checkModel(t *rapid.T, l *Log, model [][]byte) {
	if got := readBatches(t, l); !bytes.Equal(concat(got), concat(model)) {
		t.Fatalf("the log holds %d batches, the model %d", len(got), len(model))
	}
	segs := l.Segments()
	for i := 1; i < len(segs); i++ {
		if segs[i].BaseOffset != segs[i-1].NextOffset {
			t.Fatalf("segments do not tile: %+v", segs)
		}
	}
	if l.DurableEnd() > l.End() {
		t.Fatalf("DurableEnd %d past End %d", l.DurableEnd(), l.End())
	}
	for o := l.Start(); o <= l.End(); o++ {
		k := servingBatch(model, o)
		got, err := l.Read(o, 1, nil)
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if k == len(model) && len(got) != 0 || k < len(model) && !bytes.Equal(got, model[k]) {
			t.Fatalf("Read(%d) does not serve model batch %d", o, k)
		}
		r, err := l.ReadRegion(o, l.End(), 1)
		if err != nil {
			t.Fatalf("ReadRegion(%d): %v", o, err)
		}
		var b []byte
		if r.File != nil {
			b = make([]byte, r.Size)
			_, err = r.File.ReadAt(b, r.Pos)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if k == len(model) && len(b) != 0 || k < len(model) && !bytes.Equal(b, model[k]) {
			t.Fatalf("ReadRegion(%d) does not serve model batch %d", o, k)
		}
	}
	for ts := int64(0); ts <= 37; ts += 6 {
		want, wantOK := base.Offset(0), false
		for _, b := range model {
			if h := headerOf(b); h.MaxTimestamp >= ts {
				want, wantOK = h.BaseOffset, true
				break
			}
		}
		if got, _, ok := l.OffsetForTimestamp(ts, l.Start()); got != want || ok != wantOK {
			t.Fatalf("OffsetForTimestamp(%d) = %d, %v; want %d, %v", ts, got, ok, want, wantOK)
		}
	}
}
