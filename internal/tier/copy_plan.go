package tier

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// LocalSegment is one local log segment as the copy planner sees it.
type LocalSegment struct {
	BaseOffset     base.Offset
	NextOffset     base.Offset // exclusive
	SizeBytes      int64
	MaxTimestampMs int64
	Active         bool // the segment being appended to; never copied
}

// Range is the segment's offsets, [BaseOffset, NextOffset).
func (s LocalSegment) Range() base.Range { return base.Range{Start: s.BaseOffset, End: s.NextOffset} }

// CopyConfig is a topic's upload configuration.
type CopyConfig struct {
	CopyDisabled bool // remote.log.copy.disable (KIP-950)
	// Lag is remote.copy.lag.ms/bytes (KIP-1241): how long a rolled
	// segment waits before upload. The zero value uploads at once.
	Lag CopyLag
}

// CopyTask is one upload: the batches of Segment in Range, oldest first.
// Range is the whole segment unless the segment straddles tieredNext (a
// new leader rolled its segments at other offsets than the one that
// tiered them): then Range starts at tieredNext, and the executor uploads
// only the batches from there. Batches of one lineage are byte-identical
// on every replica, so tieredNext is a batch boundary in this log too.
type CopyTask struct {
	Segment      LocalSegment
	Range        base.Range
	LeaderEpochs []base.EpochStart // the lineage restricted to Range
}

// Partial reports whether the task uploads only part of its segment.
func (t CopyTask) Partial() bool { return t.Range != t.Segment.Range() }

// Started returns the COPY_STARTED record to write before the first object
// of this attempt, with a fresh id. For a Partial task the executor sets
// SizeBytes to the bytes it slices before writing the record.
func (t CopyTask) Started(id remotemeta.SegmentID, topicID base.TopicID, tp base.TopicPartition) remotemeta.RemoteSegment {
	return remotemeta.RemoteSegment{
		ID: id, TopicID: topicID, TP: tp, Range: t.Range, LeaderEpochs: t.LeaderEpochs,
		SizeBytes: t.Segment.SizeBytes, MaxTimestampMs: t.Segment.MaxTimestampMs, State: remotemeta.CopyStarted,
	}
}

// PlanCopies decides which local segments to upload this pass, oldest
// first. The executor runs them in order and stops at the first failure:
// a later task after a failed one would leave a gap in the tier.
//
// A segment is copied only if it is rolled (not Active), entirely below
// lastStableOffset, not tiered yet (it ends after tieredNext), contiguous
// with the tier and with the task before it, and past the copy lag
// (CopyLag.Passed). A segment that fails any of these holds back every
// later one. With the tier unknown or copying disabled nothing is copied.
// lineage is the leader's epoch cache; local is ascending and
// non-overlapping, and only its last segment may be Active (it panics
// otherwise).
func PlanCopies(local []LocalSegment, view PartitionView, lineage []base.EpochStart,
	lastStableOffset base.Offset, cfg CopyConfig, nowMs int64,
) []CopyTask {
	mustValidLocal(local)
	tiered := view.TieredNext(lineage)
	if cfg.CopyDisabled || !tiered.Known || len(local) == 0 {
		return nil
	}
	// next is where the tier must continue. Offsets below the local log
	// start that are not tiered are outside the log (local retention only
	// deletes tiered data), so the tier may resume at the first local
	// segment; holes between local segments stop the copy (none exist in a
	// log that is never compacted, and tiered topics are not).
	next := local[0].BaseOffset
	if tiered.Any {
		next = max(tiered.Next, next)
	}
	after := bytesAfter(local)
	var tasks []CopyTask
	for i, seg := range local {
		if seg.NextOffset <= next {
			continue // tiered already
		}
		if seg.BaseOffset > next {
			break // a hole: never upload k+1 before k
		}
		if seg.Active || seg.NextOffset > lastStableOffset || !cfg.Lag.Passed(seg, after[i], nowMs) {
			break
		}
		r := base.Range{Start: max(seg.BaseOffset, next), End: seg.NextOffset}
		epochs, ok := remotemeta.EpochsFor(lineage, r)
		if !ok {
			break // the lineage cannot say which epochs wrote it
		}
		tasks = append(tasks, CopyTask{Segment: seg, Range: r, LeaderEpochs: epochs})
		next = seg.NextOffset
	}
	return tasks
}

func mustValidLocal(local []LocalSegment) {
	for i, seg := range local {
		if seg.BaseOffset < 0 || seg.NextOffset < seg.BaseOffset || seg.SizeBytes < 0 {
			panic(fmt.Sprintf("tier.PlanCopies: local segment %d: range %v, size %d", i, seg.Range(), seg.SizeBytes))
		}
		if seg.Active && i != len(local)-1 {
			panic(fmt.Sprintf("tier.PlanCopies: local segment %d of %d is active", i, len(local)))
		}
		if i > 0 && seg.BaseOffset < local[i-1].NextOffset {
			panic(fmt.Sprintf("tier.PlanCopies: local segment %v overlaps %v", seg.Range(), local[i-1].Range()))
		}
	}
}
