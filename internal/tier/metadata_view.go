package tier

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// PartitionView is an immutable view of one partition's remote segment
// metadata, as the metadata quorum holds it. The zero value is a view that
// is not loaded: it knows nothing, and every answer that depends on the
// tier says so (TieredUnknown), never "nothing tiered" (reference 000).
//
// Invariants (checked by NewPartitionView and Apply): ids are unique and
// non-zero; every segment is valid and of the same topic and partition;
// no two COPY_FINISHED segments overlap with the same epoch history
// (remotemeta.ConflictsWith, the rule the metadata FSM enforces at apply).
type PartitionView struct {
	loaded bool
	// segs is ascending by Range.Start, then ID. It is never mutated: Apply
	// builds a new slice, so views handed to readers stay unchanged.
	segs []remotemeta.RemoteSegment
}

var errInvalidView = errors.New("tier: invalid partition view")

// NewPartitionView builds a loaded view from the quorum's segments of one
// partition; segs may be empty (a partition with nothing tiered).
func NewPartitionView(segs []remotemeta.RemoteSegment) (PartitionView, error) {
	sorted := slices.Clone(segs)
	slices.SortFunc(sorted, compareSegments)
	v := PartitionView{loaded: true, segs: sorted}
	if err := v.validate(); err != nil {
		return PartitionView{}, err
	}
	return v, nil
}

func compareSegments(a, b remotemeta.RemoteSegment) int {
	if c := cmp.Compare(a.Range.Start, b.Range.Start); c != 0 {
		return c
	}
	return slices.Compare(a.ID[:], b.ID[:])
}

func (v PartitionView) validate() error {
	seen := make(map[remotemeta.SegmentID]bool, len(v.segs))
	var finished []remotemeta.RemoteSegment
	for _, s := range v.segs {
		if err := s.Validate(); err != nil {
			return err
		}
		if seen[s.ID] {
			return fmt.Errorf("%w: duplicate segment id %v", errInvalidView, s.ID)
		}
		seen[s.ID] = true
		if first := v.segs[0]; s.TP != first.TP || s.TopicID != first.TopicID {
			return fmt.Errorf("%w: segment %v of %v, others of %v", errInvalidView, s.ID, s.TP, first.TP)
		}
		if s.State != remotemeta.CopyFinished {
			continue
		}
		if err := remotemeta.ConflictsWith(finished, s); err != nil {
			return fmt.Errorf("%w: %w", errInvalidView, err)
		}
		finished = append(finished, s)
	}
	return nil
}

// Apply returns the view with one metadata record applied: a new copy
// attempt (which must be COPY_STARTED) or a state change of a known one
// (which must follow the transition table and change nothing but State).
// It is the gateway for Raft apply; v is unchanged.
func (v PartitionView) Apply(s remotemeta.RemoteSegment) (PartitionView, error) {
	if !v.loaded {
		return v, fmt.Errorf("%w: apply %v %v to a view that is not loaded", errInvalidView, s.ID, s.State)
	}
	segs := slices.Clone(v.segs)
	i := slices.IndexFunc(segs, func(x remotemeta.RemoteSegment) bool { return x.ID == s.ID })
	switch {
	case i < 0 && s.State != remotemeta.CopyStarted:
		return v, fmt.Errorf("%w: new segment %v must start in %v, not %v", errInvalidView, s.ID, remotemeta.CopyStarted, s.State)
	case i < 0:
		segs = append(segs, s)
		slices.SortFunc(segs, compareSegments)
	default:
		old := segs[i]
		if !old.SameAttempt(s) {
			return v, fmt.Errorf("%w: update of %v changes more than its state", errInvalidView, s.ID)
		}
		next, err := old.Transition(s.State)
		if err != nil {
			return v, err
		}
		segs[i] = next
	}
	out := PartitionView{loaded: true, segs: segs}
	if err := out.validate(); err != nil {
		return v, err
	}
	return out, nil
}

// Loaded reports whether the view holds the quorum's metadata.
func (v PartitionView) Loaded() bool { return v.loaded }

// Segments returns every segment, ascending by base offset.
func (v PartitionView) Segments() []remotemeta.RemoteSegment { return slices.Clone(v.segs) }

// Segment returns the segment with id, if the view has it.
func (v PartitionView) Segment(id remotemeta.SegmentID) (remotemeta.RemoteSegment, bool) {
	for _, s := range v.segs {
		if s.ID == id {
			return s, true
		}
	}
	return remotemeta.RemoteSegment{}, false
}

// Dangling returns the DANGLING segments, ascending by base offset.
func (v PartitionView) Dangling() []remotemeta.RemoteSegment { return v.inState(remotemeta.Dangling) }

func (v PartitionView) inState(st remotemeta.State) []remotemeta.RemoteSegment {
	var out []remotemeta.RemoteSegment
	for _, s := range v.segs {
		if s.State == st {
			out = append(out, s)
		}
	}
	return out
}

// lineageFinished returns the COPY_FINISHED segments of lineage, ascending
// and non-overlapping; ok is false when the tier cannot be known: the view
// is not loaded, or segments are finished but the lineage is empty (the
// epoch cache is not loaded), or two of them overlap (a broken invariant:
// refusing to plan is the safe answer).
func (v PartitionView) lineageFinished(lineage []base.EpochStart) ([]remotemeta.RemoteSegment, bool) {
	mustValidLineage(lineage)
	if !v.loaded {
		return nil, false
	}
	var out []remotemeta.RemoteSegment
	anyFinished := false
	for _, s := range v.segs {
		if s.State != remotemeta.CopyFinished {
			continue
		}
		anyFinished = true
		if !inLineage(s, lineage) {
			continue
		}
		if n := len(out); n > 0 && s.Range.Start < out[n-1].Range.End {
			return nil, false
		}
		out = append(out, s)
	}
	if anyFinished && len(lineage) == 0 {
		return nil, false
	}
	return out, true
}

// TieredNext is DESIGN §4 rule 1: one past the highest offset of a
// COPY_FINISHED segment in lineage (the leader's epoch cache), "nothing
// tiered" when there is none, and unknown when the view is not loaded.
func (v PartitionView) TieredNext(lineage []base.EpochStart) retention.Tiered {
	fin, ok := v.lineageFinished(lineage)
	switch {
	case !ok:
		return retention.TieredUnknown()
	case len(fin) == 0:
		return retention.NothingTiered()
	}
	return retention.TieredUpTo(fin[len(fin)-1].Range.End)
}

// Finished returns the COPY_FINISHED segments of lineage for a retention
// Snapshot's Remote: ascending, non-overlapping, the last ending at
// TieredNext(lineage). Nil when TieredNext is unknown.
func (v PartitionView) Finished(lineage []base.EpochStart) []retention.Segment {
	fin, ok := v.lineageFinished(lineage)
	if !ok {
		return nil
	}
	out := make([]retention.Segment, len(fin))
	for i, s := range fin {
		out[i] = retention.Segment{Range: s.Range, SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs}
	}
	return out
}

// RetentionTier returns the Tiered and Remote fields of a retention
// Snapshot taken at highWatermark, from one reading of the view. The tier
// is reported unknown while tieredNext is above the high watermark: a new
// leader's watermark can trail what the old leader tiered until followers
// catch up, and retention must not plan on it (retention.Snapshot requires
// tieredNext <= highWatermark).
func (v PartitionView) RetentionTier(lineage []base.EpochStart, highWatermark base.Offset) (retention.Tiered, []retention.Segment) {
	t := v.TieredNext(lineage)
	if !t.Known || (t.Any && t.Next > highWatermark) {
		return retention.TieredUnknown(), nil
	}
	return t, v.Finished(lineage)
}

// LastTiered is ListOffsets -5: tieredNext-1, once anything of lineage is
// tiered. ok is false when nothing is tiered or the tier is unknown.
func (v PartitionView) LastTiered(lineage []base.EpochStart) (base.Offset, bool) {
	t := v.TieredNext(lineage)
	if !t.Any {
		return 0, false
	}
	return t.Next - 1, true
}

// EarliestPendingUpload is ListOffsets -6 (KIP-1023): the first offset of
// the local log not yet uploaded. Offsets between tieredNext and
// localLogStart are outside the log (local retention never deletes what
// is not tiered), so the answer is never below localLogStart. ok is false
// when the tier is unknown: the leader must not guess (a follower
// bootstrapping from it would skip data).
func (v PartitionView) EarliestPendingUpload(lineage []base.EpochStart, localLogStart base.Offset) (base.Offset, bool) {
	t := v.TieredNext(lineage)
	switch {
	case !t.Known:
		return 0, false
	case !t.Any:
		return localLogStart, true
	}
	return max(t.Next, localLogStart), true
}

// SegmentAt returns the COPY_FINISHED segment of lineage holding offset o,
// for a remote read; ok is false when none does or the tier is unknown.
func (v PartitionView) SegmentAt(lineage []base.EpochStart, o base.Offset) (remotemeta.RemoteSegment, bool) {
	fin, ok := v.lineageFinished(lineage)
	if !ok {
		return remotemeta.RemoteSegment{}, false
	}
	i, found := slices.BinarySearchFunc(fin, o, func(s remotemeta.RemoteSegment, o base.Offset) int {
		switch {
		case s.Range.End <= o:
			return -1
		case s.Range.Start > o:
			return 1
		}
		return 0
	})
	if !found {
		return remotemeta.RemoteSegment{}, false
	}
	return fin[i], true
}

// FinishedFrom returns the COPY_FINISHED segments of lineage that end
// after o, ascending (a timestamp search from the log start).
func (v PartitionView) FinishedFrom(lineage []base.EpochStart, o base.Offset) []remotemeta.RemoteSegment {
	fin, _ := v.lineageFinished(lineage)
	out := fin[:0:0]
	for _, s := range fin {
		if s.Range.End > o {
			out = append(out, s)
		}
	}
	return out
}
