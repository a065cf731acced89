package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func segID(n byte) remotemeta.SegmentID { return remotemeta.SegmentID{0: 0xAA, 15: n} }

// rseg is remote segment n of topic (name, id byte) partition p, epoch 0.
func rseg(n byte, name string, id byte, p int32, start, end base.Offset, st remotemeta.State) remotemeta.RemoteSegment {
	return remotemeta.RemoteSegment{
		ID: segID(n), TopicID: tid(id), TP: base.TopicPartition{Topic: name, Partition: p},
		Range:        base.Range{Start: start, End: end},
		LeaderEpochs: []base.EpochStart{{Epoch: 0, Start: start}},
		SizeBytes:    int64(end - start), MaxTimestampMs: int64(end), State: st,
	}
}

func upd(s remotemeta.RemoteSegment, epoch base.Epoch) *updateRemoteSegmentCmd {
	return &updateRemoteSegmentCmd{Segment: toWireSegment(s), LeaderEpoch: epoch}
}

// withState is s in state st, for an update command.
func withState(s remotemeta.RemoteSegment, st remotemeta.State) remotemeta.RemoteSegment {
	s.State = st
	return s
}

// withLeaderEpoch returns img with every partition of topic name at epoch:
// no command moves leader epochs yet, and fencing needs one above 0.
func withLeaderEpoch(img *Image, name string, epoch base.Epoch) *Image {
	t := *img.Topics[name]
	t.Partitions = slices.Clone(t.Partitions)
	for i := range t.Partitions {
		t.Partitions[i].LeaderEpoch = epoch
	}
	return img.withTopic(&t, img.Version)
}

func TestApplyRemoteSegmentCommands(t *testing.T) {
	s1 := rseg(1, "foo", 1, 0, 0, 10, remotemeta.CopyStarted)
	s2 := rseg(2, "foo", 1, 1, 0, 5, remotemeta.CopyStarted)
	foo := func(t *testing.T) *Image { return build(t, createCmd("foo", 1, 2)) }
	fooS1 := func(t *testing.T) *Image { return build(t, createCmd("foo", 1, 2), upd(s1, 0)) }
	fooS1Epoch3 := func(t *testing.T) *Image { return withLeaderEpoch(fooS1(t), "foo", 3) }
	// beforeDelete: foo at epoch 3 with s1 (COPY_FINISHED) and s2.
	beforeDelete := func(t *testing.T) *Image {
		return withLeaderEpoch(build(t, createCmd("foo", 1, 2), upd(s1, 0),
			upd(withState(s1, remotemeta.CopyFinished), 0), upd(s2, 0)), "foo", 3)
	}
	deleteFoo := &deleteTopicCmd{Name: "foo", ID: tid(1)}
	deleted := func(t *testing.T) *Image { return then(t, beforeDelete(t), deleteFoo) }
	// almostDrained: deleted, with every segment but s2 (DELETE_STARTED) DELETE_FINISHED.
	almostDrained := func(t *testing.T) *Image {
		return then(t, deleted(t),
			upd(withState(s1, remotemeta.DeleteStarted), 3), upd(withState(s1, remotemeta.DeleteFinished), 3),
			upd(withState(s2, remotemeta.Dangling), 3), upd(withState(s2, remotemeta.DeleteStarted), 3))
	}
	lastDelete := upd(withState(s2, remotemeta.DeleteFinished), 3)
	drained := func(t *testing.T) *Image { return then(t, almostDrained(t), lastDelete) }
	wantSegs := func(id byte, p int32, want ...remotemeta.RemoteSegment) func(*testing.T, *Image) {
		return func(t *testing.T, img *Image) {
			t.Helper()
			if got := img.RemoteSegments(tid(id), p); !reflect.DeepEqual(got, want) {
				t.Errorf("RemoteSegments(%d, %d) = %+v, want %+v", id, p, got, want)
			}
		}
	}
	emptyRange := s1
	emptyRange.Range.End = 0
	badState := upd(s1, 0)
	badState.Segment.State = "COPY_SOMETHING"
	resized := withState(s1, remotemeta.CopyFinished)
	resized.SizeBytes++
	s3 := rseg(3, "foo", 1, 0, 10, 20, remotemeta.CopyStarted)
	s5 := rseg(5, "foo", 1, 0, 5, 10, remotemeta.CopyStarted) // between s1 and s3 by range, last by id

	// Overlap (remotemeta.ConflictsWith, the rule tier.PartitionView holds):
	// fin1 is s1 COPY_FINISHED, [0, 10) in epoch 0.
	fin1 := withState(s1, remotemeta.CopyFinished)
	fooFin1 := func(more ...command) func(*testing.T) *Image {
		return func(t *testing.T) *Image {
			return then(t, build(t, createCmd("foo", 1, 2), upd(s1, 0), upd(fin1, 0)), more...)
		}
	}
	withEpochs := func(s remotemeta.RemoteSegment, epochs ...base.EpochStart) remotemeta.RemoteSegment {
		s.LeaderEpochs = epochs
		return s
	}
	over := rseg(6, "foo", 1, 0, 5, 15, remotemeta.CopyStarted) // [5, 15) in epoch 0: shares [5, 10) with fin1
	diverged := withEpochs(rseg(7, "foo", 1, 0, 5, 15, remotemeta.CopyStarted), base.EpochStart{Epoch: 1, Start: 5})
	// s1e and tail share [5, 10) in epoch 1, though s1e starts in epoch 0.
	s1e := withEpochs(rseg(8, "foo", 1, 0, 0, 10, remotemeta.CopyStarted),
		base.EpochStart{Epoch: 0, Start: 0}, base.EpochStart{Epoch: 1, Start: 5})
	tail := withEpochs(rseg(9, "foo", 1, 0, 5, 15, remotemeta.CopyStarted), base.EpochStart{Epoch: 1, Start: 5})
	otherPartition := rseg(6, "foo", 1, 1, 5, 15, remotemeta.CopyStarted)

	tests := []applyCase{
		{name: "new segment", setup: foo, cmd: upd(s1, 0), check: wantSegs(1, 0, s1)},
		{name: "new segments ascend by base offset", setup: fooS1,
			cmd: upd(s3, 0), check: func(t *testing.T, img *Image) {
				wantSegs(1, 0, s1, s3)(t, img)
				wantSegs(1, 0, s1, s5, s3)(t, then(t, img, upd(s5, 0)))
			}},
		{name: "new segment not COPY_STARTED", setup: foo,
			cmd: upd(withState(s1, remotemeta.CopyFinished), 0), wantErr: ErrUnknownRemoteSegment},
		{name: "valid transition", setup: fooS1, cmd: upd(withState(s1, remotemeta.CopyFinished), 0),
			check: wantSegs(1, 0, withState(s1, remotemeta.CopyFinished))},
		{name: "invalid transition", setup: fooS1,
			cmd: upd(withState(s1, remotemeta.DeleteStarted), 0), wantErr: remotemeta.ErrInvalidTransition},
		{name: "repeated state", setup: fooS1, cmd: upd(s1, 0), wantErr: remotemeta.ErrInvalidTransition},
		{name: "update changes more than state", setup: fooS1, cmd: upd(resized, 0), wantErr: ErrInvalidCommand},
		{name: "invalid segment", setup: foo, cmd: upd(emptyRange, 0), wantErr: remotemeta.ErrInvalidSegment},
		{name: "unknown state name", setup: foo, cmd: badState, wantErr: ErrInvalidCommand},
		{name: "unknown topic", cmd: upd(s1, 0), wantErr: ErrUnknownTopic},
		{name: "topic name does not match id", setup: foo,
			cmd: upd(rseg(1, "bar", 1, 0, 0, 10, remotemeta.CopyStarted), 0), wantErr: ErrUnknownTopic},
		{name: "partition past the end", setup: foo,
			cmd: upd(rseg(1, "foo", 1, 2, 0, 10, remotemeta.CopyStarted), 0), wantErr: ErrInvalidPartitions},
		{name: "negative partition", setup: foo,
			cmd: upd(rseg(1, "foo", 1, -1, 0, 10, remotemeta.CopyStarted), 0), wantErr: ErrInvalidPartitions},
		{name: "fenced leader epoch", setup: fooS1Epoch3,
			cmd: upd(withState(s1, remotemeta.CopyFinished), 2), wantErr: ErrFencedLeaderEpoch},
		{name: "fenced new segment", setup: fooS1Epoch3, cmd: upd(s3, 0), wantErr: ErrFencedLeaderEpoch},
		{name: "leader epoch never granted", setup: fooS1,
			cmd: upd(withState(s1, remotemeta.CopyFinished), 1), wantErr: ErrInvalidCommand},
		{name: "current leader epoch", setup: fooS1Epoch3, cmd: upd(withState(s1, remotemeta.Dangling), 3),
			check: wantSegs(1, 0, withState(s1, remotemeta.Dangling))},
		{name: "DELETE_FINISHED leaves the image",
			setup: func(t *testing.T) *Image {
				return build(t, createCmd("foo", 1, 2), upd(s1, 0), upd(s3, 0),
					upd(withState(s1, remotemeta.Dangling), 0), upd(withState(s1, remotemeta.DeleteStarted), 0))
			},
			cmd: upd(withState(s1, remotemeta.DeleteFinished), 0), check: func(t *testing.T, img *Image) {
				wantSegs(1, 0, s3)(t, img)
				_, err := applyCommand(img, upd(withState(s1, remotemeta.DeleteFinished), 0), 200)
				if !errors.Is(err, ErrUnknownRemoteSegment) {
					t.Errorf("DELETE_FINISHED again: %v, want ErrUnknownRemoteSegment", err)
				}
			}},
		{name: "finish adjacent to a finished segment", setup: fooFin1(upd(s3, 0)),
			cmd:   upd(withState(s3, remotemeta.CopyFinished), 0),
			check: wantSegs(1, 0, fin1, withState(s3, remotemeta.CopyFinished))},
		{name: "overlapping COPY_STARTED is accepted", setup: fooFin1(), cmd: upd(over, 0),
			check: wantSegs(1, 0, fin1, over)},
		{name: "finish overlapping a finished segment in the same epochs", setup: fooFin1(upd(over, 0)),
			cmd: upd(withState(over, remotemeta.CopyFinished), 0), wantErr: ErrOverlappingRemoteSegment},
		{name: "finish overlapping where the shared offsets have the same epochs",
			setup: func(t *testing.T) *Image {
				return build(t, createCmd("foo", 1, 2), upd(s1e, 0), upd(withState(s1e, remotemeta.CopyFinished), 0), upd(tail, 0))
			},
			cmd: upd(withState(tail, remotemeta.CopyFinished), 0), wantErr: remotemeta.ErrOverlap},
		{name: "finish overlapping a finished segment of another epoch history", setup: fooFin1(upd(diverged, 0)),
			cmd:   upd(withState(diverged, remotemeta.CopyFinished), 0),
			check: wantSegs(1, 0, fin1, withState(diverged, remotemeta.CopyFinished))},
		{name: "finish overlapping a segment that is no longer finished",
			setup: fooFin1(upd(over, 0), upd(withState(s1, remotemeta.DeleteStarted), 0)),
			cmd:   upd(withState(over, remotemeta.CopyFinished), 0),
			check: wantSegs(1, 0, withState(s1, remotemeta.DeleteStarted), withState(over, remotemeta.CopyFinished))},
		{name: "finish overlapping a finished segment of another partition", setup: fooFin1(upd(otherPartition, 0)),
			cmd:   upd(withState(otherPartition, remotemeta.CopyFinished), 0),
			check: wantSegs(1, 1, withState(otherPartition, remotemeta.CopyFinished))},
		{name: "refused finish can still go DANGLING", setup: fooFin1(upd(over, 0)),
			cmd:   upd(withState(over, remotemeta.Dangling), 0),
			check: wantSegs(1, 0, fin1, withState(over, remotemeta.Dangling))},
		{name: "delete topic with remote data", setup: beforeDelete, cmd: deleteFoo,
			check: func(t *testing.T, img *Image) {
				if len(img.Topics) != 0 {
					t.Fatalf("topic still live: %v", img.Topics)
				}
				got := img.PendingRemoteDeletes()
				if len(got) != 1 || got[0].TopicID != tid(1) || got[0].Name != "foo" || len(got[0].Partitions) != 2 ||
					got[0].Partitions[0].LeaderEpoch != 3 {
					t.Fatalf("PendingRemoteDeletes = %+v", got)
				}
				want := []remotemeta.RemoteSegment{withState(s1, remotemeta.CopyFinished), s2}
				if !reflect.DeepEqual(got[0].Segments, want) {
					t.Errorf("pending segments = %+v, want %+v", got[0].Segments, want)
				}
				wantSegs(1, 1, s2)(t, img)
			}},
		{name: "delete topic without remote data", setup: foo, cmd: deleteFoo,
			check: func(t *testing.T, img *Image) {
				if got := img.PendingRemoteDeletes(); len(got) != 0 {
					t.Errorf("PendingRemoteDeletes = %+v, want none", got)
				}
			}},
		{name: "deleted topic takes no new segment", setup: deleted, cmd: upd(s3, 3), wantErr: ErrUnknownTopic},
		{name: "deleted topic segments move on", setup: deleted,
			cmd: upd(withState(s2, remotemeta.Dangling), 3), check: wantSegs(1, 1, withState(s2, remotemeta.Dangling))},
		{name: "deleted topic still fences", setup: deleted,
			cmd: upd(withState(s2, remotemeta.Dangling), 2), wantErr: ErrFencedLeaderEpoch},
		{name: "deleted topic id is not reused", setup: deleted, cmd: createCmd("bar", 1, 1), wantErr: ErrTopicIDExists},
		{name: "deleted topic name is reused", setup: deleted, cmd: createCmd("foo", 2, 1),
			check: func(t *testing.T, img *Image) {
				wantSegs(2, 0)(t, img)
				if len(img.PendingRemoteDeletes()) != 1 {
					t.Error("re-creating the name dropped the pending delete")
				}
			}},
		{name: "finish refused while segments remain", setup: deleted,
			cmd: &finishRemoteTopicDeleteCmd{ID: tid(1)}, wantErr: ErrRemoteSegmentsRemain},
		{name: "finish refused for a live topic", setup: fooS1,
			cmd: &finishRemoteTopicDeleteCmd{ID: tid(1)}, wantErr: ErrUnknownTopic},
		{name: "finish unknown", cmd: &finishRemoteTopicDeleteCmd{ID: tid(1)}, wantErr: ErrUnknownTopic},
		{name: "drained pending delete stays until finished", setup: almostDrained, cmd: lastDelete,
			check: func(t *testing.T, img *Image) {
				if got := img.PendingRemoteDeletes(); len(got) != 1 || len(got[0].Segments) != 0 {
					t.Errorf("PendingRemoteDeletes = %+v, want foo with no segment", got)
				}
			}},
		{name: "finish accepted once every segment is DELETE_FINISHED", setup: drained,
			cmd: &finishRemoteTopicDeleteCmd{ID: tid(1)}, check: func(t *testing.T, img *Image) {
				if got := img.PendingRemoteDeletes(); len(got) != 0 {
					t.Errorf("PendingRemoteDeletes = %+v, want none", got)
				}
				if _, err := applyCommand(img, &finishRemoteTopicDeleteCmd{ID: tid(1)}, 200); !errors.Is(err, ErrUnknownTopic) {
					t.Errorf("second finish: %v, want ErrUnknownTopic", err)
				}
				if _, err := applyCommand(img, createCmd("bar", 1, 1), 200); err != nil {
					t.Errorf("topic id free again: %v", err)
				}
			}},
	}
	runApplyCases(t, tests)
}

// then applies cmds to img in order, failing on any rejection.
func then(t *testing.T, img *Image, cmds ...command) *Image {
	t.Helper()
	for _, c := range cmds {
		next, err := applyCommand(img, c, img.Version+1)
		if err != nil {
			t.Fatalf("setup %T: %v", c, err)
		}
		img = next
	}
	return img
}

func mustJSON(t *testing.T, format byte, v any) []byte {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{format}, body...)
}

func roundTrip(t *testing.T, img *Image) {
	t.Helper()
	data := encodeNewest(t, img)
	restored, err := decodeSnapshot(data)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if !reflect.DeepEqual(restored, img) {
		t.Fatalf("snapshot round trip differs:\n got %#v\nwant %#v", restored, img)
	}
}

// encodeNewest encodes img as a snapshot, which must be in the newest
// format.
func encodeNewest(t *testing.T, img *Image) []byte {
	t.Helper()
	data, err := encodeSnapshot(img)
	if err != nil {
		t.Fatal(err)
	}
	if data[0] != snapshotFormatNewest {
		t.Fatalf("snapshot format %d, want %d", data[0], snapshotFormatNewest)
	}
	return data
}

// remoteInvariantErr checks the remote segment invariants of Image.
func remoteInvariantErr(img *Image) error {
	if img.remote == nil || img.pendingDeletes == nil {
		return errors.New("nil remote map")
	}
	for id, p := range img.pendingDeletes {
		if _, live := img.TopicsByID[id]; live {
			return fmt.Errorf("topic id %x both live and pending delete", id)
		}
		if err := validateTopic(&Topic{Name: p.Name, ID: id, Partitions: p.Partitions}); err != nil {
			return err
		}
	}
	for id, rt := range img.remote {
		name, partitions, _, ok := img.remoteOwner(id)
		if !ok || len(rt) == 0 {
			return fmt.Errorf("remote data of topic id %x: owner %v, %d partitions", id, ok, len(rt))
		}
		for p, segs := range rt {
			if p < 0 || int(p) >= len(partitions) || len(segs) == 0 {
				return fmt.Errorf("topic %q: remote partition %d of %d, %d segments", name, p, len(partitions), len(segs))
			}
			if !slices.IsSortedFunc(segs, compareRemoteSegments) {
				return fmt.Errorf("%q-%d: segments not ascending", name, p)
			}
			seen := map[remotemeta.SegmentID]bool{}
			for _, s := range segs {
				want := base.TopicPartition{Topic: name, Partition: p}
				if err := s.Validate(); err != nil || s.TopicID != id || s.TP != want ||
					s.State == remotemeta.DeleteFinished || seen[s.ID] {
					return fmt.Errorf("%v: bad segment %+v (%v)", want, s, err)
				}
				seen[s.ID] = true
			}
			// The tier's invariant (tier.NewPartitionView refuses a partition
			// that breaks it): no two COPY_FINISHED overlap in one history.
			for _, s := range segs {
				if s.State != remotemeta.CopyFinished {
					continue
				}
				if err := remotemeta.ConflictsWith(segs, s); err != nil {
					return fmt.Errorf("%q-%d: %w", name, p, err)
				}
			}
		}
	}
	return nil
}

func TestDecodeSnapshotV1StillDecodes(t *testing.T) {
	v1 := "\x01{\"cluster_id\":\"\",\"controller_id\":1,\"version\":7,\"broker_configs\":{}," +
		"\"topics\":[{\"Name\":\"a\",\"ID\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"Replicas\":[1],\"ISR\":[1]}]}]}"
	img, err := decodeSnapshot([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	if img.Version != 7 || len(img.Topics) != 1 || img.remote == nil || img.pendingDeletes == nil {
		t.Fatalf("decoded %+v", img)
	}
	if _, err := decodeSnapshot([]byte("\x01{\"remote_segments\":[]}")); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v1 with v2 fields: %v, want ErrInvalidCommand", err)
	}
}

func TestDecodeSnapshotRejectsBadRemoteData(t *testing.T) {
	img := build(t, createCmd("foo", 1, 2), upd(rseg(1, "foo", 1, 0, 0, 10, remotemeta.CopyStarted), 0))
	good, _ := encodeRemote(img)
	topics := imageSnapshot{Topics: []*Topic{img.Topics["foo"]}}
	finished := good[0]
	finished.State = "DELETE_FINISHED"
	badPartition := good[0]
	badPartition.Partition = 2
	unknownTopic := good[0]
	unknownTopic.TopicID = tid(9)
	for name, s := range map[string]imageSnapshotV2{
		"duplicate segment": {imageSnapshot: topics, RemoteSegments: []wireSegment{good[0], good[0]}},
		"DELETE_FINISHED":   {imageSnapshot: topics, RemoteSegments: []wireSegment{finished}},
		"bad partition":     {imageSnapshot: topics, RemoteSegments: []wireSegment{badPartition}},
		"unknown topic":     {imageSnapshot: topics, RemoteSegments: []wireSegment{unknownTopic}},
		"pending and live": {imageSnapshot: topics, PendingRemoteDeletes: []wirePendingDelete{
			{ID: tid(1), Name: "foo", Partitions: img.Topics["foo"].Partitions}}},
		"pending without partitions": {PendingRemoteDeletes: []wirePendingDelete{{ID: tid(1), Name: "foo"}}},
	} {
		if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV2, s)); err == nil {
			t.Errorf("%s: decodeSnapshot accepted it", name)
		}
	}
}
