package metadata

import (
	"errors"
	"reflect"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// storeSeg is remote segment n of topic t, partition p, epoch 0.
func storeSeg(n byte, t *Topic, p int32, start, end base.Offset) remotemeta.RemoteSegment {
	s := rseg(n, t.Name, 0, p, start, end, remotemeta.CopyStarted)
	s.TopicID = t.ID
	return s
}

// moveTo proposes each state of path for s in turn, at epoch 0.
func moveTo(t *testing.T, st *Store, s remotemeta.RemoteSegment, path ...remotemeta.State) remotemeta.RemoteSegment {
	t.Helper()
	for _, to := range path {
		s.State = to
		if err := st.UpdateRemoteSegment(t.Context(), s, 0); err != nil {
			t.Fatalf("%v -> %v: %v", s.ID, to, err)
		}
	}
	return s
}

func sameRemote(t *testing.T, got, want *Image) {
	t.Helper()
	if !reflect.DeepEqual(got.remote, want.remote) {
		t.Errorf("remote segments differ:\n got %+v\nwant %+v", got.remote, want.remote)
	}
	if !reflect.DeepEqual(got.PendingRemoteDeletes(), want.PendingRemoteDeletes()) {
		t.Errorf("pending remote deletes differ:\n got %+v\nwant %+v", got.PendingRemoteDeletes(), want.PendingRemoteDeletes())
	}
}

// TestStoreRemoteSegmentsSurviveRestart: remote segment metadata and a
// pending remote topic delete are in the quorum, not in memory: they come
// back after Close/Open, from the log alone or from a snapshot plus the log,
// and the delete can be finished after the restart.
func TestStoreRemoteSegmentsSurviveRestart(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			tiered, err := st.CreateTopic(ctx, CreateTopic{Name: "tiered", Partitions: 2, ReplicationFactor: 1})
			if err != nil {
				t.Fatal(err)
			}
			gone, err := st.CreateTopic(ctx, CreateTopic{Name: "gone", Partitions: 1, ReplicationFactor: 1})
			if err != nil {
				t.Fatal(err)
			}
			a := moveTo(t, st, storeSeg(1, tiered, 0, 0, 10), remotemeta.CopyStarted, remotemeta.CopyFinished)
			moveTo(t, st, storeSeg(2, tiered, 0, 10, 20), remotemeta.CopyStarted, remotemeta.Dangling,
				remotemeta.DeleteStarted, remotemeta.DeleteFinished) // leaves the image
			g := moveTo(t, st, storeSeg(3, gone, 0, 0, 10), remotemeta.CopyStarted, remotemeta.CopyFinished)
			if err := st.DeleteTopic(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			// After the snapshot (if any): replayed from the log.
			b := moveTo(t, st, storeSeg(4, tiered, 1, 0, 5), remotemeta.CopyStarted)
			g = moveTo(t, st, g, remotemeta.DeleteStarted)

			for name, tc := range map[string]struct {
				seg   remotemeta.RemoteSegment
				epoch base.Epoch
				want  error
			}{
				"fenced":            {withState(b, remotemeta.CopyFinished), -1, ErrFencedLeaderEpoch},
				"invalid step":      {withState(a, remotemeta.DeleteFinished), 0, remotemeta.ErrInvalidTransition},
				"new not started":   {withState(storeSeg(5, tiered, 0, 20, 30), remotemeta.CopyFinished), 0, ErrUnknownRemoteSegment},
				"bad partition":     {storeSeg(5, tiered, 2, 20, 30), 0, ErrInvalidPartitions},
				"new on deleted":    {storeSeg(5, gone, 0, 10, 20), 0, ErrUnknownTopic},
				"invalid segment":   {storeSeg(5, tiered, 0, 20, 20), 0, ErrInvalidCommand},
				"unknown topic id":  {storeSeg(5, &Topic{Name: "tiered", ID: base.TopicID{9}}, 0, 0, 1), 0, ErrUnknownTopic},
				"pruned is unknown": {withState(storeSeg(2, tiered, 0, 10, 20), remotemeta.DeleteFinished), 0, ErrUnknownRemoteSegment},
			} {
				if err := st.UpdateRemoteSegment(ctx, tc.seg, tc.epoch); !errors.Is(err, tc.want) {
					t.Errorf("%s: %v, want %v", name, err, tc.want)
				}
			}
			want := st.Image()
			if got := want.RemoteSegments(tiered.ID, 0); !reflect.DeepEqual(got, []remotemeta.RemoteSegment{a}) {
				t.Fatalf("before restart: %+v", got)
			}
			closeStore(t, st)

			st = openStore(t, o)
			defer closeStore(t, st)
			got := st.Image()
			sameState(t, got, want)
			pending := got.PendingRemoteDeletes()
			if len(pending) != 1 || pending[0].TopicID != gone.ID ||
				!reflect.DeepEqual(pending[0].Segments, []remotemeta.RemoteSegment{g}) {
				t.Fatalf("after restart, pending = %+v", pending)
			}
			if err := st.FinishRemoteTopicDelete(ctx, gone.ID); !errors.Is(err, ErrRemoteSegmentsRemain) {
				t.Fatalf("finish with a segment left: %v", err)
			}
			moveTo(t, st, g, remotemeta.DeleteFinished)
			if err := st.FinishRemoteTopicDelete(ctx, gone.ID); err != nil {
				t.Fatalf("finish: %v", err)
			}
			if p := st.Image().PendingRemoteDeletes(); len(p) != 0 {
				t.Fatalf("pending after finish: %+v", p)
			}
			if err := st.FinishRemoteTopicDelete(ctx, gone.ID); !errors.Is(err, ErrUnknownTopic) {
				t.Fatalf("finish twice: %v", err)
			}
		})
	}
}
