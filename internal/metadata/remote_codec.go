package metadata

import (
	"fmt"
	"maps"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// wireSegment is a remotemeta.RemoteSegment as commands and snapshots store
// it. It has its own tags and names states by string, so that renaming a
// field or renumbering a constant in remotemeta never changes what is in a
// log or a snapshot.
type wireSegment struct {
	ID             remotemeta.SegmentID `json:"id"`
	TopicID        base.TopicID         `json:"topic_id"`
	Topic          string               `json:"topic"`
	Partition      int32                `json:"partition"`
	Start          base.Offset          `json:"start"`
	End            base.Offset          `json:"end"`
	LeaderEpochs   []wireEpochStart     `json:"leader_epochs"`
	SizeBytes      int64                `json:"size_bytes"`
	MaxTimestampMs int64                `json:"max_timestamp_ms"`
	State          string               `json:"state"`
}

type wireEpochStart struct {
	Epoch base.Epoch  `json:"epoch"`
	Start base.Offset `json:"start"`
}

func toWireSegment(s remotemeta.RemoteSegment) wireSegment {
	epochs := make([]wireEpochStart, len(s.LeaderEpochs))
	for i, e := range s.LeaderEpochs {
		epochs[i] = wireEpochStart{Epoch: e.Epoch, Start: e.Start}
	}
	return wireSegment{
		ID: s.ID, TopicID: s.TopicID, Topic: s.TP.Topic, Partition: s.TP.Partition,
		Start: s.Range.Start, End: s.Range.End, LeaderEpochs: epochs,
		SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs, State: s.State.String(),
	}
}

// segment converts w back; only the state name is checked here, the rest
// by RemoteSegment.Validate.
func (w wireSegment) segment() (remotemeta.RemoteSegment, error) {
	st, ok := remotemeta.ParseState(w.State)
	if !ok {
		return remotemeta.RemoteSegment{}, fmt.Errorf("%w: remote segment %v: unknown state %q", ErrInvalidCommand, w.ID, w.State)
	}
	epochs := make([]base.EpochStart, len(w.LeaderEpochs))
	for i, e := range w.LeaderEpochs {
		epochs[i] = base.EpochStart{Epoch: e.Epoch, Start: e.Start}
	}
	return remotemeta.RemoteSegment{
		ID: w.ID, TopicID: w.TopicID, TP: base.TopicPartition{Topic: w.Topic, Partition: w.Partition},
		Range: base.Range{Start: w.Start, End: w.End}, LeaderEpochs: epochs,
		SizeBytes: w.SizeBytes, MaxTimestampMs: w.MaxTimestampMs, State: st,
	}, nil
}

// wirePendingDelete is a pendingDelete in a snapshot.
type wirePendingDelete struct {
	ID         base.TopicID `json:"id"`
	Name       string       `json:"name"`
	Partitions []Partition  `json:"partitions"`
}

// encodeRemote returns img's remote segment metadata in snapshot order:
// segments by topic id, partition, base offset, id; pending deletes by id.
func encodeRemote(img *Image) ([]wireSegment, []wirePendingDelete) {
	var segs []wireSegment
	for _, id := range slices.SortedFunc(maps.Keys(img.remote), compareTopicIDs) {
		for _, s := range img.remote[id].all() {
			segs = append(segs, toWireSegment(s))
		}
	}
	var pending []wirePendingDelete
	for _, p := range img.PendingRemoteDeletes() {
		pending = append(pending, wirePendingDelete{ID: p.TopicID, Name: p.Name, Partitions: p.Partitions})
	}
	return segs, pending
}

// restoreRemote adds a snapshot's remote segment metadata to img, whose
// topics are already restored, checking every invariant of Image that
// concerns it: a snapshot is a gateway. The one exception is the overlap of
// COPY_FINISHED segments (remotemeta.ConflictsWith), refused at apply only:
// a snapshot taken before apply refused it may hold such a pair, and
// refusing the snapshot would stop the node from starting.
func restoreRemote(img *Image, pending []wirePendingDelete, segs []wireSegment) error {
	for _, p := range pending {
		t := &Topic{Name: p.Name, ID: p.ID, Partitions: p.Partitions}
		if err := validateTopic(t); err != nil {
			return fmt.Errorf("snapshot: pending remote delete: %w", err)
		}
		_, live := img.TopicsByID[p.ID]
		if _, dup := img.pendingDeletes[p.ID]; dup || live {
			return fmt.Errorf("snapshot: %w: pending remote delete of %q", ErrTopicIDExists, p.Name)
		}
		img.pendingDeletes[p.ID] = &pendingDelete{Name: p.Name, Partitions: p.Partitions}
	}
	type key struct {
		topic     base.TopicID
		partition int32
		id        remotemeta.SegmentID
	}
	seen := make(map[key]bool, len(segs))
	for _, w := range segs {
		seg, err := w.segment()
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if err := seg.Validate(); err != nil {
			return fmt.Errorf("snapshot: %w: %w", ErrInvalidCommand, err)
		}
		name, partitions, _, ok := img.remoteOwner(seg.TopicID)
		switch idx := seg.TP.Partition; {
		case !ok || name != seg.TP.Topic:
			return fmt.Errorf("snapshot: %w: remote segment %v of %q", ErrUnknownTopic, seg.ID, seg.TP.Topic)
		case idx < 0 || int(idx) >= len(partitions):
			return fmt.Errorf("snapshot: %w: remote segment %v of %v", ErrInvalidPartitions, seg.ID, seg.TP)
		case seg.State == remotemeta.DeleteFinished:
			return fmt.Errorf("snapshot: %w: remote segment %v is %v", ErrInvalidCommand, seg.ID, seg.State)
		case seen[key{seg.TopicID, idx, seg.ID}]:
			return fmt.Errorf("snapshot: %w: remote segment %v twice in %v", ErrInvalidCommand, seg.ID, seg.TP)
		case len(img.remote[seg.TopicID][idx]) >= maxRemoteSegmentsPerPartition:
			return fmt.Errorf("snapshot: %w: %v holds too many remote segments", ErrInvalidCommand, seg.TP)
		}
		seen[key{seg.TopicID, seg.TP.Partition, seg.ID}] = true
		t := img.remote[seg.TopicID]
		if t == nil {
			t = remoteTopic{}
			img.remote[seg.TopicID] = t
		}
		t[seg.TP.Partition] = append(t[seg.TP.Partition], seg)
	}
	for _, t := range img.remote {
		for _, s := range t {
			slices.SortFunc(s, compareRemoteSegments)
		}
	}
	return nil
}
