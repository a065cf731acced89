package metadata

import (
	"fmt"
	"maps"
	"slices"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

var stateNames = []string{"COPY_STARTED", "COPY_FINISHED", "DELETE_STARTED", "DELETE_FINISHED", "DANGLING"}

// genRemoteCommand draws remote segment commands over a small space, mostly
// refused ones (unknown topics, bad partitions, bad states, bad ranges).
func genRemoteCommand() *rapid.Generator[command] {
	id := rapid.Custom(func(t *rapid.T) base.TopicID { return tid(rapid.ByteRange(0, 4).Draw(t, "id")) })
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) command {
			start := rapid.Int64Range(-1, 20).Draw(t, "start")
			w := wireSegment{
				ID:        segID(rapid.ByteRange(0, 3).Draw(t, "seg")),
				TopicID:   id.Draw(t, "topic_id"),
				Topic:     rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "topic"),
				Partition: rapid.Int32Range(-1, 3).Draw(t, "partition"),
				Start:     base.Offset(start), End: base.Offset(start + rapid.Int64Range(-1, 10).Draw(t, "len")),
				LeaderEpochs: []wireEpochStart{{Epoch: 0, Start: base.Offset(start)}},
				SizeBytes:    rapid.Int64Range(-1, 100).Draw(t, "size"),
				State:        rapid.SampledFrom(append([]string{"", "BOGUS"}, stateNames...)).Draw(t, "state"),
			}
			return &updateRemoteSegmentCmd{Segment: w, LeaderEpoch: base.Epoch(rapid.Int32Range(-1, 1).Draw(t, "epoch"))}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &finishRemoteTopicDeleteCmd{ID: id.Draw(t, "id")}
		}),
	)
}

// drawTargetedRemote draws a remote segment command aimed at img's topics,
// live or pending remote delete, so that segments are created, move
// through their lifecycle (by valid and invalid steps), outlive their topic
// and are finished; nil when img has no such topic.
func drawTargetedRemote(t *rapid.T, img *Image, i int) command {
	ids := slices.SortedFunc(maps.Keys(img.TopicsByID), compareTopicIDs)
	ids = append(ids, slices.SortedFunc(maps.Keys(img.pendingDeletes), compareTopicIDs)...)
	if len(ids) == 0 {
		return nil
	}
	id := rapid.SampledFrom(ids).Draw(t, fmt.Sprintf("rtopic%d", i))
	name, partitions, live, _ := img.remoteOwner(id)
	if !live && rapid.Bool().Draw(t, fmt.Sprintf("finish%d", i)) {
		return &finishRemoteTopicDeleteCmd{ID: id}
	}
	p := rapid.Int32Range(0, int32(len(partitions)-1)).Draw(t, fmt.Sprintf("rpart%d", i))
	epoch := partitions[p].LeaderEpoch
	if rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("stale%d", i)) == 0 {
		epoch-- // fenced
	}
	segs := img.remote[id][p]
	if len(segs) == 0 || rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("new%d", i)) == 0 {
		start := base.Offset(rapid.Int64Range(0, 100).Draw(t, fmt.Sprintf("rstart%d", i)))
		if len(segs) > 0 && rapid.Bool().Draw(t, fmt.Sprintf("roverlap%d", i)) {
			// Near an existing segment, so that COPY_FINISHED overlaps are drawn.
			near := rapid.SampledFrom(segs).Draw(t, fmt.Sprintf("rnear%d", i)).Range.Start
			start = max(0, near+base.Offset(rapid.Int64Range(-9, 9).Draw(t, fmt.Sprintf("rshift%d", i))))
		}
		s := remotemeta.RemoteSegment{
			ID: segID(rapid.Byte().Draw(t, fmt.Sprintf("rseg%d", i))), TopicID: id,
			TP: base.TopicPartition{Topic: name, Partition: p}, Range: base.Range{Start: start, End: start + 10},
			// Epoch 0 or 1: overlapping segments are mostly of one history
			// (their COPY_FINISHED is refused), sometimes of two (accepted).
			LeaderEpochs: []base.EpochStart{{Epoch: base.Epoch(rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("repoch%d", i)) / 3), Start: start}},
			SizeBytes:    10, State: remotemeta.CopyStarted,
		}
		return upd(s, epoch)
	}
	s := rapid.SampledFrom(segs).Draw(t, fmt.Sprintf("rold%d", i))
	var valid []remotemeta.State // mostly a valid step, so segments reach the end of their life
	for to := remotemeta.CopyStarted; to <= remotemeta.Dangling; to++ {
		if remotemeta.ValidTransition(s.State, to) {
			valid = append(valid, to)
		}
	}
	s.State = rapid.SampledFrom(valid).Draw(t, fmt.Sprintf("rnext%d", i))
	if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("rany%d", i)) == 0 {
		s.State = remotemeta.State(rapid.IntRange(int(remotemeta.CopyStarted), int(remotemeta.Dangling)).Draw(t, fmt.Sprintf("rstate%d", i)))
	}
	return upd(s, epoch)
}
