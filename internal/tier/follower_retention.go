package tier

// The follower's local retention (DESIGN §4 rule 5: "Followers decide
// the same from the quorum's metadata"). The tier loop, which copies,
// plans retention and applies it, runs only on the leader; a follower of
// a tiered topic would otherwise keep every local segment forever. Its
// log start is the leader's, learned by fetch (SetLogStartFromLeader,
// which also deletes what falls below it), so the follower's own part is
// only the local copies of segments the remote tier already holds.

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
)

// FollowerLocalInput is what a follower snapshots of its partition for
// its local retention. Offsets obey logStart <= highWatermark <= logEnd.
type FollowerLocalInput struct {
	// Local is the local segments, ascending, the active one last.
	Local []LocalSegment
	// Lineage is the follower's leader-epoch cache: a remote segment
	// vouches for local offsets only where it holds the same history.
	Lineage []base.EpochStart
	// HighWatermark is the follower's (its leader's, bounded by its log).
	HighWatermark base.Offset
	// LogStart is the leader's, as the follower last learned it by fetch.
	LogStart base.Offset
	Policy   retention.Policy
	NowMs    int64
}

// FollowerLocalPlan is what a follower deletes locally: a prefix of its
// local segments, never the active one, each entirely below Tiered.Next
// and held by COPY_FINISHED segments of its lineage. It never moves the
// log start and never deletes remote data.
type FollowerLocalPlan struct {
	// Tiered is the tier as the view and the lineage gave it.
	Tiered retention.Tiered
	// Leader is the plan the leader would make on the same snapshot; the
	// follower deletes the part of its local deletions that is tiered.
	Leader retention.Decision
	// Deletions are the local segments to delete, a prefix of Local
	// without the active segment; empty when nothing goes.
	Deletions []base.Range
	// DeleteLocalBefore is the end of the last deletion, exclusive: every
	// local segment other than the active one that ends at or below it
	// goes. It is the first local offset when Deletions is empty.
	DeleteLocalBefore base.Offset
	// Reasons are the leader plan's reasons for the local deletions.
	Reasons []retention.Reason
}

// PlanFollowerLocal decides a follower's local retention on an immutable
// snapshot. It runs retention.Plan as the leader's pass would on the same
// state (the view's RetentionTier for in.Lineage at in.HighWatermark, the
// local segments, the log start and the policy), then keeps, of the local
// segments that plan deletes, the prefix that lies entirely below
// tieredNext and whose offsets at or after the log start are all held by
// COPY_FINISHED segments of the lineage:
//
//	DeleteLocalBefore <= min(leader.DeleteLocalBefore, tieredNext) <= highWatermark
//
// A view that is not loaded, a tier that is unknown (tieredNext above the
// follower's high watermark, or no lineage) and "nothing tiered yet" all
// delete nothing. An invalid snapshot is an error and deletes nothing.
func PlanFollowerLocal(in FollowerLocalInput, view PartitionView) (FollowerLocalPlan, error) {
	if err := lastActive(in.Local); err != nil {
		return FollowerLocalPlan{}, fmt.Errorf("tier: follower local retention: %w", err)
	}
	out := FollowerLocalPlan{DeleteLocalBefore: in.Local[0].BaseOffset}
	if err := validateLineage(in.Lineage); err != nil {
		return out, fmt.Errorf("tier: follower local retention: %w", err)
	}
	tiered, remote := view.RetentionTier(in.Lineage, in.HighWatermark)
	out.Tiered = tiered
	if !tiered.Known || !tiered.Any {
		return out, nil
	}
	snap := retention.Snapshot{LogStart: in.LogStart, HighWatermark: in.HighWatermark,
		Local: retentionSegments(in.Local), Remote: remote, Tiered: tiered}
	if err := errors.Join(snap.Validate(), in.Policy.Validate()); err != nil {
		return out, fmt.Errorf("tier: follower local retention: %w", err)
	}
	d := retention.Plan(snap, in.Policy, in.NowMs)
	out.Leader = d
	limit := min(d.DeleteLocalBefore, tiered.Next)
	for _, s := range d.LocalDeletions(snap.Local) {
		held := base.Range{Start: max(s.Range.Start, in.LogStart), End: s.Range.End}
		if s.Range.End > limit || !remoteHolds(remote, held) {
			break
		}
		out.Deletions = append(out.Deletions, s.Range)
		out.DeleteLocalBefore = s.Range.End
	}
	out.Reasons = localReasons(d.Reasons, out.Deletions)
	mustSafeFollower(out, in)
	return out, nil
}

// remoteHolds reports whether every offset of r is in a segment of remote,
// which is ascending and non-overlapping. An empty r is covered.
func remoteHolds(remote []retention.Segment, r base.Range) bool {
	at := r.Start
	for _, s := range remote {
		if at >= r.End {
			break
		}
		if s.Range.End <= at {
			continue
		}
		if s.Range.Start > at {
			return false // a hole the remote tier does not hold
		}
		at = s.Range.End
	}
	return at >= r.End
}

// localReasons are the reasons of rs about the local ranges deleted.
func localReasons(rs []retention.Reason, deleted []base.Range) []retention.Reason {
	gone := make(map[base.Range]bool, len(deleted))
	for _, r := range deleted {
		gone[r] = true
	}
	var out []retention.Reason
	for _, r := range rs {
		if r.Tier == retention.TierLocal && gone[r.Range] {
			out = append(out, r)
		}
	}
	return out
}

// mustSafeFollower asserts rule 5 for a follower: nothing at or above
// tieredNext or the high watermark goes, nor the active segment.
func mustSafeFollower(p FollowerLocalPlan, in FollowerLocalInput) {
	if len(p.Deletions) == 0 {
		return
	}
	last := p.Deletions[len(p.Deletions)-1]
	if len(p.Deletions) >= len(in.Local) || last.End > p.Tiered.Next || last.End > in.HighWatermark {
		panic(fmt.Sprintf("tier.PlanFollowerLocal: deletes %d of %d local segments up to %d (tieredNext %d, high watermark %d)",
			len(p.Deletions), len(in.Local), last.End, p.Tiered.Next, in.HighWatermark))
	}
}
