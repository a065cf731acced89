package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func stores(t *testing.T) map[string]objstore.Store {
	dir, err := objstore.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]objstore.Store{"mem": objstore.NewMem(), "dir": dir}
}

// Every offset of the tiered segments reads back remotely as the local log
// reads it: the same whole batches, for every byte limit.
func TestCopyThenReadEveryOffsetMatchesLocal(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l := newTestLog(t, 300, 32<<10)
			r := newRig(t, store)
			segs := r.copyAll(l)
			if len(segs) < 3 {
				t.Fatalf("copied %d segments, want several", len(segs))
			}
			for i, s := range segs {
				local := l.Segments()[i]
				if s.State != remotemeta.CopyFinished || s.Range != (base.Range{Start: local.BaseOffset, End: local.NextOffset}) ||
					s.SizeBytes != local.SizeBytes || s.MaxTimestampMs != local.MaxTimestamp {
					t.Fatalf("segment %d = %+v, local %+v", i, s, local)
				}
			}
			end := segs[len(segs)-1].Range.End
			for o := base.Offset(0); o < end; o++ {
				for _, maxBytes := range []int{0, 100, 1000, 5000, 1 << 20} {
					want, err := l.Read(o, maxBytes, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, err := r.reader.Read(t.Context(), segmentFor(t, segs, o), o, maxBytes)
					if err != nil {
						t.Fatalf("remote Read(%d, %d): %v", o, maxBytes, err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("Read(%d, %d): remote %s, local %s", o, maxBytes, batchRanges(got), batchRanges(want))
					}
				}
			}
		})
	}
}

// A partial task (the tier ends mid-segment) uploads only the batches from
// its start; its indexes are relative to its object, so reads work.
func TestPartialCopyFromMidSegment(t *testing.T) {
	l := newTestLog(t, 200, 64<<10)
	local := LocalSegmentsOf(l.Segments())[0]
	all, err := l.Read(0, 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Start at the 40th batch's base offset: a batch boundary mid-segment.
	it := record.SplitBatches(all)
	var start base.Offset
	var skipped int64
	for range 40 {
		b, h, _ := it.Next()
		start, skipped = h.NextOffset(), skipped+int64(len(b))
	}
	r := newRig(t, objstore.NewMem())
	rg := base.Range{Start: start, End: local.NextOffset}
	epochs, _ := remotemeta.EpochsFor(epoch0, rg)
	task := CopyTask{Segment: local, Range: rg, LeaderEpochs: epochs}
	seg, err := r.copier.Copy(t.Context(), task, LogSource{Log: l}, testTopicID, testTP, 0)
	if err != nil {
		t.Fatal(err)
	}
	if seg.Range != rg || seg.SizeBytes != local.SizeBytes-skipped {
		t.Fatalf("partial segment %v of %d bytes, want %v of %d", seg.Range, seg.SizeBytes, rg, local.SizeBytes-skipped)
	}
	for o := start; o < rg.End; o++ {
		want, _ := l.Read(o, 3000, nil)
		got, err := r.reader.Read(t.Context(), seg, o, 3000)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Read(%d) = %s, %v; want %s", o, batchRanges(got), err, batchRanges(want))
		}
	}
	if _, err := r.reader.Read(t.Context(), seg, start-1, 100); !errors.Is(err, ErrNotReadable) {
		t.Fatalf("Read below the partial segment: %v", err)
	}
	// A start inside a batch is refused before any metadata is written.
	task.Range.Start++
	task.LeaderEpochs, _ = remotemeta.EpochsFor(epoch0, task.Range)
	if _, err := r.copier.Copy(t.Context(), task, LogSource{Log: l}, testTopicID, testTP, 0); err == nil ||
		!strings.Contains(err.Error(), "batch boundary") {
		t.Fatalf("Copy from inside a batch: %v", err)
	}
	if n := len(r.meta.view().Segments()); n != 1 {
		t.Fatalf("%d segments in metadata, want 1", n)
	}
}

// fullSource is a source of l's first segment with every optional object:
// a producer snapshot and one aborted transaction.
func fullSource(l *log.Log) LogSource {
	return LogSource{Log: l, Snapshots: func(at base.Offset) ([]byte, bool) {
		return []byte(fmt.Sprintf("snapshot at %d", at)), true
	}, Aborted: overlapping([]AbortedTxn{{ProducerID: 1, FirstOffset: 1, LastOffset: 2, LastStableOffset: 3}})}
}

// COPY_STARTED is recorded before the first object, the .log goes last,
// then COPY_FINISHED; the checkpoint and the snapshot are uploaded.
func TestCopyOrderAndObjects(t *testing.T) {
	l := newTestLog(t, 30, 1<<20)
	r := newRig(t, objstore.NewMem())
	local := LocalSegmentsOf(l.Segments())[0]
	epochs := []base.EpochStart{{Epoch: 3, Start: 0}, {Epoch: 5, Start: 10}}
	task := CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epochs}
	src := fullSource(l)
	seg, err := r.copier.Copy(t.Context(), task, src, testTopicID, testTP, 5)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	want = append(want, "meta COPY_STARTED")
	for _, s := range Suffixes {
		want = append(want, "put "+SegmentKey(seg, s))
	}
	want = append(want, "meta COPY_FINISHED")
	if got := r.events.all(); !slices.Equal(got, want) {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for suffix, body := range map[Suffix]string{
		SuffixLeaderEpoch: "0\n2\n3 0\n5 10\n",
		SuffixSnapshot:    fmt.Sprintf("snapshot at %d", local.NextOffset),
	} {
		if got := getObject(t, r.inner, SegmentKey(seg, suffix)); string(got) != body {
			t.Errorf("%v object = %q, want %q", suffix, got, body)
		}
	}
}

// The upload reads through a duplicated descriptor: retention deleting the
// local segment while it is open does not break it.
func TestCopySurvivesLocalDeletion(t *testing.T) {
	l := newTestLog(t, 100, 16<<10)
	want, _ := l.Read(0, 1<<30, nil)
	r := newRig(t, objstore.NewMem())
	local := LocalSegmentsOf(l.Segments())[0]
	task := CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epoch0}
	seg, err := r.copier.Copy(t.Context(), task, deletingSource{LogSource{Log: l}}, testTopicID, testTP, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.Start() == 0 {
		t.Fatal("the local segment was not deleted")
	}
	got, err := r.reader.Read(t.Context(), seg, 0, 1<<30)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("remote read after local deletion: %s, %v", batchRanges(got), err)
	}
}

// deletingSource deletes the segment it has just opened, as retention
// would while an upload runs.
type deletingSource struct{ LogSource }

func (d deletingSource) OpenSegment(b base.Offset) (SegmentReader, int64, error) {
	sr, size, err := d.LogSource.OpenSegment(b)
	if err == nil {
		err = d.Log.DeleteSegmentsBefore(d.Log.Segments()[0].NextOffset)
	}
	return sr, size, err
}

// A failure at each step of an upload (refused, or landed but reported
// failed) leaves the segment DANGLING, and one delete pass removes every
// object: no orphan.
func TestCopyFailureAtEachStepLeavesNoOrphan(t *testing.T) {
	steps := append(slices.Clone(Suffixes), 0) // 0: the COPY_FINISHED write
	for _, step := range steps {
		for _, landed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/landed=%v", step, landed), func(t *testing.T) {
				l := newTestLog(t, 30, 1<<20)
				r := newRig(t, objstore.NewMem())
				failure := fmt.Errorf("injected: %w", objstore.ErrTransient)
				if step == 0 {
					r.meta.setFail(func(s remotemeta.RemoteSegment) error {
						if s.State == remotemeta.CopyFinished {
							return failure
						}
						return nil
					})
				} else {
					r.setInject(func(op objstore.Op, key string) error {
						if op == objstore.OpPut && strings.HasSuffix(key, "."+step.String()) {
							if landed {
								return objstore.After(failure)
							}
							return failure
						}
						return nil
					})
				}
				local := LocalSegmentsOf(l.Segments())[0]
				src := fullSource(l)
				_, err := r.copier.Copy(t.Context(), CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epoch0}, src, testTopicID, testTP, 0)
				if !objstore.IsTransient(err) {
					t.Fatalf("Copy error %v, want a transient one", err)
				}
				if d := r.meta.view().Dangling(); len(d) != 1 {
					t.Fatalf("dangling segments %v, want 1", d)
				}
				r.setInject(nil)
				r.meta.setFail(nil)
				if err := r.deletePass(); err != nil {
					t.Fatal(err)
				}
				if keys := r.keys(); len(keys) != 0 {
					t.Fatalf("orphans after the delete pass: %v", keys)
				}
				if s := r.meta.view().Segments(); len(s) != 1 || s[0].State != remotemeta.DeleteFinished {
					t.Fatalf("segments after the delete pass: %+v", s)
				}
			})
		}
	}
}

// A failed COPY_STARTED write uploads nothing.
func TestCopyStartedRefusedUploadsNothing(t *testing.T) {
	l := newTestLog(t, 30, 1<<20)
	r := newRig(t, objstore.NewMem())
	r.meta.setFail(func(remotemeta.RemoteSegment) error { return errors.New("fenced") })
	local := LocalSegmentsOf(l.Segments())[0]
	if _, err := r.copier.Copy(t.Context(), CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epoch0},
		LogSource{Log: l}, testTopicID, testTP, 0); err == nil {
		t.Fatal("Copy succeeded")
	}
	if keys := r.keys(); len(keys) != 0 {
		t.Fatalf("objects written without COPY_STARTED: %v", keys)
	}
}

// The active segment is never uploaded.
func TestCopyRefusesActiveSegment(t *testing.T) {
	l := newTestLog(t, 30, 1<<20)
	r := newRig(t, objstore.NewMem())
	segs := LocalSegmentsOf(l.Segments())
	act := segs[len(segs)-1]
	_, err := r.copier.Copy(t.Context(), CopyTask{Segment: act, Range: act.Range(), LeaderEpochs: []base.EpochStart{{Start: act.BaseOffset}}},
		LogSource{Log: l}, testTopicID, testTP, 0)
	if !errors.Is(err, log.ErrNotSealed) || len(r.meta.view().Segments()) != 0 {
		t.Fatalf("Copy of the active segment: %v", err)
	}
}

// deadlineMeta records how long each DANGLING write was given.
type deadlineMeta struct {
	*memMeta
	budgets []time.Duration
}

func (m *deadlineMeta) UpdateRemoteSegment(ctx context.Context, seg remotemeta.RemoteSegment, e base.Epoch) error {
	if seg.State == remotemeta.Dangling {
		deadline, _ := ctx.Deadline()
		m.budgets = append(m.budgets, time.Until(deadline))
	}
	return m.memMeta.UpdateRemoteSegment(ctx, seg, e)
}

// A copy that fails gives its DANGLING write danglingWriteTimeout; one
// whose pass was stopped meanwhile (a broker stopping, maybe with no
// quorum to answer) gives it only danglingWriteStoppedTimeout, so that the
// stop is not held. Either way the write is made.
func TestCopyStoppedGivesTheDanglingWriteLittleTime(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		t.Run(fmt.Sprintf("stopped=%v", stopped), func(t *testing.T) {
			l := newTestLog(t, 30, 1<<20)
			r := newRig(t, objstore.NewMem())
			meta := &deadlineMeta{memMeta: r.meta}
			r.copier.Meta = meta
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			r.setInject(func(op objstore.Op, _ string) error {
				if op != objstore.OpPut {
					return nil
				}
				if stopped {
					cancel()
				}
				return fmt.Errorf("injected: %w", objstore.ErrTransient)
			})
			local := LocalSegmentsOf(l.Segments())[0]
			if _, err := r.copier.Copy(ctx, CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epoch0}, fullSource(l), testTopicID, testTP, 0); err == nil {
				t.Fatal("Copy succeeded")
			}
			want := danglingWriteBudget(stopped)
			if len(meta.budgets) != 1 || meta.budgets[0] > want || meta.budgets[0] < want-time.Second/2 {
				t.Fatalf("DANGLING writes given %v, want one given about %v", meta.budgets, want)
			}
			if d := r.meta.view().Dangling(); len(d) != 1 {
				t.Fatalf("dangling segments %v, want 1", d)
			}
		})
	}
}

// A task that does not match its segment's bytes uploads nothing and
// records nothing: metadata that claimed offsets the object does not hold
// would move tieredNext past them, and local retention could then delete
// the only copy.
func TestCopyRefusesATaskItsSegmentDoesNotMatch(t *testing.T) {
	l := newTestLog(t, 30, 1<<20)
	seg := LocalSegmentsOf(l.Segments())[0]
	epochs := []base.EpochStart{{Start: seg.BaseOffset}}
	past := seg
	past.NextOffset++ // a description of the segment that claims one offset more
	first, err := l.Read(seg.BaseOffset, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := record.SplitBatches(first)
	_, h, _ := it.Next()
	for name, task := range map[string]CopyTask{
		"range ends past the batches":   {Segment: past, Range: past.Range(), LeaderEpochs: epochs},
		"range ends before the batches": {Segment: seg, Range: rng(seg.BaseOffset, seg.NextOffset-1), LeaderEpochs: epochs},
		"range starts inside a batch": {Segment: seg, Range: rng(h.BaseOffset+1, seg.NextOffset),
			LeaderEpochs: []base.EpochStart{{Start: h.BaseOffset + 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			if h.LastOffsetDelta == 0 && name == "range starts inside a batch" {
				t.Skip("the first batch holds one record")
			}
			r := newRig(t, objstore.NewMem())
			if _, err := r.copier.Copy(t.Context(), task, LogSource{Log: l}, testTopicID, testTP, 0); err == nil {
				t.Fatal("Copy succeeded")
			}
			if segs := r.meta.view().Segments(); len(segs) != 0 {
				t.Errorf("recorded %v", segs)
			}
			if keys := r.keys(); len(keys) != 0 {
				t.Errorf("uploaded %v", keys)
			}
		})
	}
}
