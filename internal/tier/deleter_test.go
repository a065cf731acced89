package tier

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Reference 002: a delete that fails leaves the segment DANGLING; the next
// pass retries it and it ends DELETE_FINISHED with no object left.
func TestDeleteFailureIsRetriedUntilFinished(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	fails := 1
	r.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpDelete && strings.HasSuffix(key, ".timeindex") && fails > 0 {
			fails--
			return fmt.Errorf("injected: %w", objstore.ErrTransient)
		}
		return nil
	})
	task := DeleteTask{Segment: segs[0], Reason: DeleteRetention}
	if err := r.deleter.Delete(t.Context(), task, 0); !objstore.IsTransient(err) {
		t.Fatalf("Delete = %v, want a transient error", err)
	}
	if s, _ := r.meta.view().Segment(segs[0].ID); s.State != remotemeta.Dangling {
		t.Fatalf("after a failed delete: %v", s.State)
	}
	if err := r.deletePass(); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.meta.view().Segment(segs[0].ID); s.State != remotemeta.DeleteFinished {
		t.Fatalf("after the retry: %v", s.State)
	}
	for _, k := range r.keys() {
		if o, err := ParseObjectKey(k); err != nil || o.Segment == segs[0].ID {
			t.Fatalf("object left: %s (%v)", k, err)
		}
	}
	if n := len(r.keys()); n != (len(segs)-1)*4 {
		t.Fatalf("%d objects left, want the %d of the other segments", n, (len(segs)-1)*4)
	}
}

// RunDeletes stops at the first failed retention delete (the tier shrinks
// from its oldest end only) but still tries every other task.
func TestRunDeletesStopsRetentionAtFirstFailure(t *testing.T) {
	l := newTestLog(t, 60, 8<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	// Make the last one DANGLING, as a failed copy would.
	last := segs[len(segs)-1]
	mustUpdate(t, r.meta, last, remotemeta.DeleteStarted)
	mustUpdate(t, r.meta, last, remotemeta.Dangling)
	last.State = remotemeta.Dangling
	r.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpDelete && strings.Contains(key, segs[1].ID.String()) {
			return fmt.Errorf("injected: %w", objstore.ErrTransient)
		}
		return nil
	})
	tasks := []DeleteTask{
		{Segment: segs[0], Reason: DeleteRetention},
		{Segment: segs[1], Reason: DeleteRetention},
		{Segment: segs[2], Reason: DeleteRetention},
		{Segment: last, Reason: DeleteDangling},
	}
	done, err := r.deleter.RunDeletes(t.Context(), tasks, 0)
	if err == nil || done != 2 {
		t.Fatalf("RunDeletes = %d, %v; want 2 done and an error", done, err)
	}
	want := map[remotemeta.SegmentID]remotemeta.State{
		segs[0].ID: remotemeta.DeleteFinished,
		segs[1].ID: remotemeta.Dangling,
		segs[2].ID: remotemeta.CopyFinished, // not attempted
		last.ID:    remotemeta.DeleteFinished,
	}
	for id, st := range want {
		if s, _ := r.meta.view().Segment(id); s.State != st {
			t.Errorf("segment %v: %v, want %v", id, s.State, st)
		}
	}
}

func mustUpdate(t *testing.T, m *memMeta, s remotemeta.RemoteSegment, to remotemeta.State) {
	t.Helper()
	cur, _ := m.view().Segment(s.ID)
	next, err := cur.Transition(to)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.UpdateRemoteSegment(t.Context(), next, 0); err != nil {
		t.Fatal(err)
	}
}

// A step of a delete that the quorum does not record leaves every object
// in place: the quorum must say DELETE_STARTED before an object goes, so
// an object never disappears under a segment that still serves reads.
func TestDeleteStepNotRecordedTouchesNoObject(t *testing.T) {
	for _, tc := range []struct {
		name    string
		from    remotemeta.State
		refused remotemeta.State
	}{
		{"COPY_FINISHED, DELETE_STARTED refused", remotemeta.CopyFinished, remotemeta.DeleteStarted},
		{"COPY_STARTED, DANGLING refused", remotemeta.CopyStarted, remotemeta.Dangling},
		{"COPY_STARTED, DELETE_STARTED refused", remotemeta.CopyStarted, remotemeta.DeleteStarted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLog(t, 30, 8<<10)
			r := newRig(t, objstore.NewMem())
			seg := r.copyAll(l)[0]
			if tc.from == remotemeta.CopyStarted {
				// An abandoned attempt of the same segment, with its objects.
				seg.ID[1] = 0x5E
				seg.State = remotemeta.CopyStarted
				if err := r.meta.UpdateRemoteSegment(t.Context(), seg, 0); err != nil {
					t.Fatal(err)
				}
				for _, s := range Suffixes {
					if err := r.inner.Put(t.Context(), SegmentKey(seg, s), strings.NewReader("x"), 1); err != nil {
						t.Fatal(err)
					}
				}
			}
			keys := r.keys()
			r.meta.setFail(func(s remotemeta.RemoteSegment) error {
				if s.ID == seg.ID && s.State == tc.refused {
					return errInjected
				}
				return nil
			})
			mark := len(r.events.all())
			if err := r.deleter.Delete(t.Context(), DeleteTask{Segment: seg, Reason: DeleteRetention}, 0); err == nil {
				t.Fatal("Delete succeeded with a step refused")
			}
			for _, e := range r.events.all()[mark:] {
				if strings.HasPrefix(e, "delete ") {
					t.Fatalf("%s before the quorum recorded %v", e, tc.refused)
				}
			}
			if got := r.keys(); len(got) != len(keys) {
				t.Fatalf("%d objects left of %d", len(got), len(keys))
			}
		})
	}
}
