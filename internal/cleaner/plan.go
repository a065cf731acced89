package cleaner

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// Segment is what the planner needs of one log segment, [Base, Next).
type Segment struct {
	Base, Next base.Offset
	SizeBytes  int64
	// MaxTimestampMs is the segment's largest batch max timestamp; valid
	// only when HasTimestamp (a segment of timestamp-less batches has none).
	MaxTimestampMs int64
	HasTimestamp   bool
}

// PlanInput is an immutable snapshot of one partition's log, as the cleaner
// sees it when choosing whether to compact it.
type PlanInput struct {
	// Segments are the log's segments, oldest first, contiguous or with
	// gaps but never overlapping.
	Segments []Segment
	LogStart base.Offset
	// Checkpoint is the first dirty offset the last pass persisted
	// (cleaner-offset-checkpoint); CheckpointOK is false when there is none.
	Checkpoint   base.Offset
	CheckpointOK bool
	// CleanableEnd is the caller's limit, exclusive: the minimum of the
	// active segment's base, the high watermark and the durable end.
	CleanableEnd base.Offset
	NowMs        int64
	// MinCompactionLagMs (min.compaction.lag.ms): a segment holding a
	// record younger than this is not cleaned, nor anything after it.
	MinCompactionLagMs int64
	// MaxCompactionLagMs (max.compaction.lag.ms): once the first dirty
	// record is older than this, the log is cleaned whatever its ratio.
	MaxCompactionLagMs int64
	// MinCleanableRatio (min.cleanable.dirty.ratio), in [0, 1].
	MinCleanableRatio float64
	// FirstDirtyTimestampMs is the timestamp of the first batch at the
	// first dirty offset; FirstDirtyTimestampOK is false when it is not
	// known or the batch has no timestamp (Kafka's -1).
	FirstDirtyTimestampMs int64
	FirstDirtyTimestampOK bool
	// NextHorizonMs, when HasNextHorizon, is the earliest delete horizon
	// of a tombstone that the last pass kept below the checkpoint
	// (BatchResult.NextHorizonMs): once it passes, the clean part of the
	// log holds a tombstone to remove, dirty or not (KIP-534).
	NextHorizonMs  int64
	HasNextHorizon bool
}

// Validate checks what Plan relies on.
func (in PlanInput) Validate() error {
	switch {
	case in.MinCleanableRatio < 0 || in.MinCleanableRatio > 1 || in.MinCleanableRatio != in.MinCleanableRatio:
		return fmt.Errorf("min cleanable ratio %v outside [0, 1]", in.MinCleanableRatio)
	case in.MinCompactionLagMs < 0 || in.MaxCompactionLagMs < 0:
		return fmt.Errorf("compaction lags %d, %d must be >= 0", in.MinCompactionLagMs, in.MaxCompactionLagMs)
	}
	for i, s := range in.Segments {
		if s.Next < s.Base || s.SizeBytes < 0 {
			return fmt.Errorf("segment %d: [%d, %d) of %d bytes", i, s.Base, s.Next, s.SizeBytes)
		}
		if i > 0 && s.Base < in.Segments[i-1].Next {
			return fmt.Errorf("segment %d at %d overlaps the one ending at %d", i, s.Base, in.Segments[i-1].Next)
		}
	}
	return nil
}

// Decision is what Plan chose: clean [FirstDirty, FirstUncleanable) if Clean.
type Decision struct {
	// FirstDirty is where the pass's offset map starts; the pass rewrites
	// [LogStart, mapEnd) for some mapEnd <= FirstUncleanable.
	FirstDirty base.Offset
	// FirstUncleanable is exclusive, at a segment boundary (or equal to
	// FirstDirty), never below FirstDirty.
	FirstUncleanable base.Offset
	CleanBytes       int64
	DirtyBytes       int64
	// Ratio is DirtyBytes / (CleanBytes + DirtyBytes), 0 when both are 0.
	Ratio float64
	Clean bool
	// Forced: the first dirty record is older than max.compaction.lag.ms
	// and there is something to clean, so Clean holds whatever the ratio;
	// Kafka cleans such logs before the dirtiest others.
	Forced bool
	Reason string
}

// Plan decides whether a compacted log should be cleaned now, and which
// range, by the rules of Kafka's LogCleanerManager (see the package
// documentation). It panics on an input that fails Validate: snapshots are
// built from validated log state, so that is a programmer error.
func Plan(in PlanInput) Decision {
	if err := in.Validate(); err != nil {
		panic("cleaner.Plan: " + err.Error())
	}
	d := Decision{FirstDirty: firstDirty(in)}
	d.FirstUncleanable = max(firstUncleanable(in), d.FirstDirty)
	d.CleanBytes, d.DirtyBytes = countBytes(in, d.FirstDirty, d.FirstUncleanable)
	if total := d.CleanBytes + d.DirtyBytes; total > 0 {
		d.Ratio = float64(d.DirtyBytes) / float64(total)
	}
	overdue := in.FirstDirtyTimestampOK && olderThan(in.NowMs, in.FirstDirtyTimestampMs, in.MaxCompactionLagMs)
	horizonPassed := in.HasNextHorizon && in.NowMs >= in.NextHorizonMs && d.FirstDirty > in.LogStart
	switch {
	case d.DirtyBytes > 0 && overdue:
		d.Clean, d.Forced = true, true
		d.Reason = fmt.Sprintf("first dirty record older than max.compaction.lag.ms %d", in.MaxCompactionLagMs)
	case d.DirtyBytes > 0 && d.Ratio >= in.MinCleanableRatio:
		d.Clean = true
		d.Reason = fmt.Sprintf("dirty ratio %.3f >= %.3f", d.Ratio, in.MinCleanableRatio)
	case horizonPassed:
		d.Clean = true
		d.Reason = fmt.Sprintf("a kept tombstone's delete horizon %d has passed", in.NextHorizonMs)
	case d.DirtyBytes == 0:
		d.Reason = "no cleanable dirty bytes"
	default:
		d.Reason = fmt.Sprintf("dirty ratio %.3f < %.3f", d.Ratio, in.MinCleanableRatio)
	}
	return d
}

// firstDirty is the checkpoint, unless it is missing or outside
// [LogStart, CleanableEnd] (the log was truncated or its start moved past
// it): then the whole log is treated as dirty, which is always safe.
func firstDirty(in PlanInput) base.Offset {
	if in.CheckpointOK && in.Checkpoint >= in.LogStart && in.Checkpoint <= in.CleanableEnd {
		return in.Checkpoint
	}
	return in.LogStart
}

// firstUncleanable is CleanableEnd rounded down so that no segment
// straddles it (passes rewrite whole segments), lowered to the base of the
// first dirty segment that is younger than min.compaction.lag.ms. The
// caller raises it to firstDirty.
func firstUncleanable(in PlanInput) base.Offset {
	end := in.CleanableEnd
	for _, s := range in.Segments {
		if s.Base < end && end < s.Next {
			end = s.Base
			break
		}
	}
	if in.MinCompactionLagMs <= 0 {
		return end
	}
	dirty := firstDirty(in)
	for _, s := range in.Segments {
		if s.Next <= dirty || s.Base >= end {
			continue
		}
		if s.HasTimestamp && !agedAtLeast(in.NowMs, s.MaxTimestampMs, in.MinCompactionLagMs) {
			return s.Base
		}
	}
	return end
}

// countBytes splits the log's bytes at the first dirty offset: clean is
// [LogStart, dirty), dirty is [dirty, uncleanable). A segment straddling
// dirty counts once, as dirty, since the pass rewrites it; when the dirty
// range is empty such a segment counts on neither side. Segments wholly
// below LogStart are awaiting deletion and count on neither.
func countBytes(in PlanInput, dirty, uncleanable base.Offset) (clean, dirtyBytes int64) {
	for _, s := range in.Segments {
		switch {
		case s.Next <= in.LogStart:
		case s.Next <= dirty:
			clean += s.SizeBytes
		case s.Base < uncleanable && dirty < uncleanable:
			dirtyBytes += s.SizeBytes
		}
	}
	return clean, dirtyBytes
}

// agedAtLeast reports whether tsMs <= nowMs - lagMs (lagMs >= 0), without
// overflow for any int64 inputs.
func agedAtLeast(nowMs, tsMs, lagMs int64) bool {
	if tsMs > nowMs {
		return false
	}
	return uint64(nowMs)-uint64(tsMs) >= uint64(lagMs)
}

// olderThan reports whether tsMs is more than lagMs (>= 0) before nowMs,
// without overflow for any int64 inputs.
func olderThan(nowMs, tsMs, lagMs int64) bool {
	if tsMs >= nowMs {
		return false
	}
	return uint64(nowMs)-uint64(tsMs) > uint64(lagMs)
}
