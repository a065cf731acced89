package metadata

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// maxRemoteSegmentsPerPartition bounds one partition's remote segment
// metadata in the image (a COPY_STARTED beyond it is refused): with 1 GiB
// segments it is about 100 TiB of one partition in the bucket.
const maxRemoteSegmentsPerPartition = 100_000

// remoteTopic is one topic's remote segment metadata: partition index →
// segments, ascending by base offset, then id (compareRemoteSegments).
// Immutable once part of a published Image; never holds an empty slice.
type remoteTopic map[int32][]remotemeta.RemoteSegment

// pendingDelete is a deleted topic whose remote data is not yet deleted.
// Partitions are the topic's partitions as they were when it was deleted:
// remote segment updates are still fenced by their leader epochs.
type pendingDelete struct {
	Name       string
	Partitions []Partition
}

// TopicRemoteData is a deleted topic whose remote data must still be
// deleted from the bucket, as Image.PendingRemoteDeletes reports it.
type TopicRemoteData struct {
	TopicID base.TopicID
	Name    string
	// Partitions are the topic's partitions when it was deleted; updates of
	// its segments are fenced by their LeaderEpoch, as for a live topic.
	Partitions []Partition
	// Segments are the segments not yet DELETE_FINISHED, ascending by
	// partition, base offset, then id. Empty once everything is deleted.
	Segments []remotemeta.RemoteSegment
}

// RemoteSegments returns the remote segment metadata of one partition of a
// live topic or of a topic pending remote delete, ascending by base offset,
// then id; nil when there is none. DELETE_FINISHED segments are not in the
// image: they are dropped by the command that finishes them. The slice is
// the caller's; the segments' LeaderEpochs are shared and must not be
// modified.
func (img *Image) RemoteSegments(topicID base.TopicID, partition int32) []remotemeta.RemoteSegment {
	return slices.Clone(img.remote[topicID][partition])
}

// PendingRemoteDeletes returns the deleted topics whose remote data is not
// yet deleted, ascending by topic id. A topic stays here, across restarts,
// until FinishRemoteTopicDelete is applied, which needs every one of its
// segments DELETE_FINISHED. Partitions are shared with the image: do not
// modify them.
func (img *Image) PendingRemoteDeletes() []TopicRemoteData {
	ids := slices.SortedFunc(maps.Keys(img.pendingDeletes), compareTopicIDs)
	out := make([]TopicRemoteData, 0, len(ids))
	for _, id := range ids {
		p := img.pendingDeletes[id]
		out = append(out, TopicRemoteData{
			TopicID: id, Name: p.Name, Partitions: p.Partitions, Segments: img.remote[id].all(),
		})
	}
	return out
}

// all returns every segment of t, ascending by partition, base offset, id.
func (t remoteTopic) all() []remotemeta.RemoteSegment {
	var out []remotemeta.RemoteSegment
	for _, p := range slices.Sorted(maps.Keys(t)) {
		out = append(out, t[p]...)
	}
	return out
}

func compareTopicIDs(a, b base.TopicID) int { return bytes.Compare(a[:], b[:]) }

func compareRemoteSegments(a, b remotemeta.RemoteSegment) int {
	if c := cmp.Compare(a.Range.Start, b.Range.Start); c != 0 {
		return c
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}

// remoteOwner finds the topic that segments of topicID belong to: a live
// topic, or one pending remote delete (live is false then).
func (img *Image) remoteOwner(topicID base.TopicID) (name string, partitions []Partition, live, ok bool) {
	if t, ok := img.TopicsByID[topicID]; ok {
		return t.Name, t.Partitions, true, true
	}
	if p, ok := img.pendingDeletes[topicID]; ok {
		return p.Name, p.Partitions, false, true
	}
	return "", nil, false, false
}

// withRemotePartition returns a copy of img in which partition of topicID
// holds segs, copying the two maps on the way; an empty segs removes the
// entry, so the image keeps no empty slice or map.
func (img *Image) withRemotePartition(topicID base.TopicID, partition int32, segs []remotemeta.RemoteSegment, version uint64) *Image {
	next := img.with(version)
	next.remote = copyMap(img.remote, 1)
	t := copyMap(img.remote[topicID], 1)
	if len(segs) == 0 {
		delete(t, partition)
	} else {
		t[partition] = segs
	}
	if len(t) == 0 {
		delete(next.remote, topicID)
	} else {
		next.remote[topicID] = t
	}
	return next
}

func applyUpdateRemoteSegment(img *Image, c *updateRemoteSegmentCmd, index uint64) (*Image, error) {
	seg, err := c.Segment.segment()
	if err != nil {
		return nil, err
	}
	if err := seg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCommand, err)
	}
	name, partitions, live, ok := img.remoteOwner(seg.TopicID)
	if !ok || name != seg.TP.Topic {
		return nil, fmt.Errorf("%w: %q with id %x", ErrUnknownTopic, seg.TP.Topic, seg.TopicID)
	}
	idx := seg.TP.Partition
	if idx < 0 || int(idx) >= len(partitions) {
		return nil, fmt.Errorf("%w: topic %q has no partition %d", ErrInvalidPartitions, name, idx)
	}
	if err := checkLeaderEpoch(seg.TP, c.LeaderEpoch, partitions[idx].LeaderEpoch); err != nil {
		return nil, err
	}
	segs := img.remote[seg.TopicID][idx]
	i := slices.IndexFunc(segs, func(x remotemeta.RemoteSegment) bool { return x.ID == seg.ID })
	if i < 0 {
		return addRemoteSegment(img, segs, seg, live, index)
	}
	old := segs[i]
	if !old.SameAttempt(seg) {
		return nil, fmt.Errorf("%w: update of remote segment %v changes more than its state", ErrInvalidCommand, seg.ID)
	}
	moved, err := old.Transition(seg.State)
	if err != nil {
		return nil, err
	}
	if moved.State == remotemeta.CopyFinished {
		// The tier's invariant, checked here once so that no image holds a
		// partition that tier.NewPartitionView refuses.
		if err := remotemeta.ConflictsWith(segs, moved); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOverlappingRemoteSegment, err)
		}
	}
	// A fresh slice: the old one belongs to the published image.
	var next []remotemeta.RemoteSegment
	if moved.State == remotemeta.DeleteFinished {
		// Nothing of the attempt is left in the bucket, so nothing needs to
		// remember it: the command is recorded in the log, the image drops it.
		next = slices.Delete(slices.Clone(segs), i, i+1)
	} else {
		next = slices.Clone(segs)
		next[i] = moved
	}
	return img.withRemotePartition(seg.TopicID, idx, next, index), nil
}

// checkLeaderEpoch fences a writer whose leadership has ended. An epoch
// above the partition's is no epoch this quorum granted: leader epochs come
// from the image, and an image never runs ahead of the log it is applied in.
func checkLeaderEpoch(tp base.TopicPartition, got, current base.Epoch) error {
	switch {
	case got < current:
		return fmt.Errorf("%w: %v: leader epoch %d, current %d", ErrFencedLeaderEpoch, tp, got, current)
	case got > current:
		return fmt.Errorf("%w: %v: leader epoch %d is above the current %d", ErrInvalidCommand, tp, got, current)
	}
	return nil
}

// addRemoteSegment records a new copy attempt of a live topic's partition.
func addRemoteSegment(img *Image, segs []remotemeta.RemoteSegment, seg remotemeta.RemoteSegment, live bool, index uint64) (*Image, error) {
	switch {
	case seg.State != remotemeta.CopyStarted:
		return nil, fmt.Errorf("%w: %v in %v: a new copy attempt must start in %v",
			ErrUnknownRemoteSegment, seg.ID, seg.State, remotemeta.CopyStarted)
	case !live:
		return nil, fmt.Errorf("%w: %q is deleted: no new copy attempts", ErrUnknownTopic, seg.TP.Topic)
	case len(segs) >= maxRemoteSegmentsPerPartition:
		return nil, fmt.Errorf("%w: %v holds %d remote segments, at most %d",
			ErrInvalidCommand, seg.TP, len(segs), maxRemoteSegmentsPerPartition)
	}
	at, _ := slices.BinarySearchFunc(segs, seg, compareRemoteSegments)
	return img.withRemotePartition(seg.TopicID, seg.TP.Partition, slices.Insert(slices.Clone(segs), at, seg), index), nil
}

func applyFinishRemoteTopicDelete(img *Image, c *finishRemoteTopicDeleteCmd, index uint64) (*Image, error) {
	if _, ok := img.pendingDeletes[c.ID]; !ok {
		return nil, fmt.Errorf("%w: no remote delete pending for topic id %x", ErrUnknownTopic, c.ID)
	}
	if left := img.remote[c.ID].all(); len(left) > 0 {
		return nil, fmt.Errorf("%w: topic id %x: %d segment(s), the first %v in %v",
			ErrRemoteSegmentsRemain, c.ID, len(left), left[0].ID, left[0].State)
	}
	next := img.with(index)
	next.pendingDeletes = copyMap(img.pendingDeletes, 0)
	delete(next.pendingDeletes, c.ID)
	return next, nil
}
