package replication

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// A follower whose fetch offset is below its leader's local log start
// (the leader answers OFFSET_MOVED_TO_TIERED_STORAGE), or an empty one
// bootstrapping from the tiered offset (KIP-1023), does not fetch the
// offsets the remote tier holds: it rebuilds its "auxiliary state" at some
// offset target from the remote tier and fetches from there (KIP-405,
// Kafka's TierStateMachine.buildRemoteLogAuxState). That state is the
// leader-epoch lineage of the log below target and the producer state at
// target, which the remote segment ending there carries (its producer
// snapshot, and its leader-epoch checkpoint).
//
// Kafka's checkpoint holds the uploader's whole epoch cache up to the
// segment's end; Strata's holds the segment's own epochs, and the quorum's
// metadata holds every segment's. So the lineage below target is rebuilt
// from the chain of COPY_FINISHED segments that ends at target, back to
// the leader's log start. Which segments belong to the leader's lineage
// (segments of diverged histories may end at the same offsets) is asked
// of the leader, as Kafka's TierStateMachine asks it the epoch of
// target-1: OffsetForLeaderEpoch(e) answers whether the leader holds
// epoch e and where it ends. A segment whose epoch at its last offset o
// is e belongs to the leader's log if the leader holds e past o: the
// leader of epoch e wrote offset o once, and logs that agree on an
// offset's epoch agree up to it (KIP-101's log matching). Where a segment
// continues the epoch its successor starts with, no question is needed.

// AuxKind says what PlanAuxState concluded. The zero value is invalid.
type AuxKind uint8

const (
	// AuxAsk: the plan needs the leader's OffsetForLeaderEpoch answer
	// about epoch AuxPlan.Ask; add it to the answers and plan again.
	AuxAsk AuxKind = iota + 1
	// AuxReady: the follower's new state is known.
	AuxReady
	// AuxMissing: no COPY_FINISHED segment of the leader's lineage holds
	// target-1; the tier cannot give the follower its state (not yet
	// uploaded, or deleted).
	AuxMissing
)

func (k AuxKind) String() string {
	switch k {
	case AuxAsk:
		return "ask"
	case AuxReady:
		return "ready"
	case AuxMissing:
		return "missing"
	}
	return fmt.Sprintf("AuxKind(%d)", uint8(k))
}

// AuxPlan is PlanAuxState's answer.
type AuxPlan struct {
	Kind AuxKind
	// Ask is the epoch to ask the leader about (AuxAsk).
	Ask base.Epoch
	// Top is the remote segment holding target-1 (AuxReady): its producer
	// snapshot is the producer state at Top.Range.End, where the follower
	// starts its local log (normally target itself).
	Top remotemeta.RemoteSegment
	// LogStart is the follower's new log start: the leader's, or where
	// the tier's part of the leader's lineage begins if it does not reach
	// back that far (the follower claims only what the tier holds).
	LogStart base.Offset
	// Lineage is the leader-epoch lineage of [LogStart, Top.Range.End),
	// ascending in epoch and in start, the first starting at LogStart.
	Lineage []base.EpochStart
	// Chain is the remote segments of the leader's lineage from the one
	// holding LogStart to Top, ascending and contiguous: their
	// transaction indexes hold the aborted transactions below Top's end.
	Chain []remotemeta.RemoteSegment
}

// PlanAuxState decides where a follower's auxiliary state at target comes
// from, given the partition's remote segments (those not COPY_FINISHED
// are ignored), the leader's log start and the leader's OffsetForLeaderEpoch
// answers known so far (by the epoch asked about). The caller asks the
// leader as long as the plan says AuxAsk; every ask adds an answer, so
// that ends after at most one ask per distinct epoch of the segments.
//
// The top segment is the one holding target-1 whose epoch there the
// leader holds past target-1 (Kafka's fetchRemoteLogSegmentMetadata for
// the leader's epoch of target-1); then, back to the leader's log start,
// each segment's predecessor ends where it starts and either continues
// its first epoch or has a last epoch the leader holds up to that
// boundary. Where no predecessor qualifies, the chain (and the follower's
// log start) begins there.
//
// PlanAuxState panics if target is not above leaderLogStart (there is
// nothing below it to rebuild; the caller fetches from the log start).
func PlanAuxState(segs []remotemeta.RemoteSegment, leaderLogStart, target base.Offset, answers map[base.Epoch]LeaderAnswer) AuxPlan {
	if target <= leaderLogStart {
		panic(fmt.Sprintf("replication: aux state at %d, not above the leader's log start %d", target, leaderLogStart))
	}
	finished := finishedByEnd(segs)
	byEnd := map[base.Offset][]remotemeta.RemoteSegment{}
	for _, s := range finished {
		byEnd[s.Range.End] = append(byEnd[s.Range.End], s)
	}
	top, ask, ok := pickTop(finished, target, answers)
	switch {
	case ask != nil:
		return AuxPlan{Kind: AuxAsk, Ask: *ask}
	case !ok:
		return AuxPlan{Kind: AuxMissing}
	}
	chain := []remotemeta.RemoteSegment{top}
	logStart := leaderLogStart
	for cur := top; cur.Range.Start > logStart; {
		pred, ask, ok := pickPredecessor(byEnd[cur.Range.Start], cur, answers)
		if ask != nil {
			return AuxPlan{Kind: AuxAsk, Ask: *ask}
		}
		if !ok {
			logStart = cur.Range.Start
			break
		}
		chain = append(chain, pred)
		cur = pred
	}
	slices.Reverse(chain)
	return AuxPlan{Kind: AuxReady, Top: top, LogStart: logStart, Lineage: chainLineage(chain, logStart), Chain: chain}
}

// finishedByEnd is the COPY_FINISHED segments of segs, ascending by end
// offset, then by id (a deterministic order for ties).
func finishedByEnd(segs []remotemeta.RemoteSegment) []remotemeta.RemoteSegment {
	var out []remotemeta.RemoteSegment
	for _, s := range segs {
		if s.State == remotemeta.CopyFinished && len(s.LeaderEpochs) > 0 {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b remotemeta.RemoteSegment) int {
		if c := cmp.Compare(a.Range.End, b.Range.End); c != 0 {
			return c
		}
		return slices.Compare(a.ID[:], b.ID[:])
	})
	return out
}

// pickTop is the segment holding target-1 whose epoch there the leader
// holds past it, preferring one that ends at target. ask is set when an
// answer is needed first.
func pickTop(finished []remotemeta.RemoteSegment, target base.Offset, answers map[base.Epoch]LeaderAnswer) (remotemeta.RemoteSegment, *base.Epoch, bool) {
	last := target - 1
	for _, s := range finished {
		if !s.Range.Contains(last) {
			continue
		}
		e := epochAt(s, last)
		a, known := answers[e]
		if !known {
			return remotemeta.RemoteSegment{}, &e, false
		}
		if leaderHolds(a, e, last) {
			return s, nil, true
		}
	}
	return remotemeta.RemoteSegment{}, nil, false
}

// pickPredecessor is the segment of the leader's lineage among ending,
// the segments that end where cur starts (in finishedByEnd's order): one
// that continues cur's first epoch needs no question; one whose last
// epoch is older needs the leader to hold that epoch up to the boundary;
// one whose last epoch is newer cannot precede cur.
func pickPredecessor(ending []remotemeta.RemoteSegment, cur remotemeta.RemoteSegment, answers map[base.Epoch]LeaderAnswer) (remotemeta.RemoteSegment, *base.Epoch, bool) {
	b := cur.Range.Start
	first := cur.LeaderEpochs[0].Epoch
	var older []remotemeta.RemoteSegment
	for _, p := range ending {
		switch e := p.LeaderEpochs[len(p.LeaderEpochs)-1].Epoch; {
		case e == first:
			return p, nil, true
		case e < first:
			older = append(older, p)
		}
	}
	for _, p := range older {
		e := p.LeaderEpochs[len(p.LeaderEpochs)-1].Epoch
		a, known := answers[e]
		if !known {
			return remotemeta.RemoteSegment{}, &e, false
		}
		if leaderHolds(a, e, b-1) {
			return p, nil, true
		}
	}
	return remotemeta.RemoteSegment{}, nil, false
}

// leaderHolds reports whether the leader's answer about epoch e says its
// log holds e at offset o (Kafka's test in buildRemoteLogAuxState: the
// epoch's end offset, exclusive, is past o). An answer for an epoch the
// leader never had names an older one, or none.
func leaderHolds(a LeaderAnswer, e base.Epoch, o base.Offset) bool {
	return a.Kind == AnswerEpochEnd && a.EpochEnd.Epoch == e && a.EpochEnd.End > o
}

// epochAt is the epoch of offset o in s, which holds it.
func epochAt(s remotemeta.RemoteSegment, o base.Offset) base.Epoch {
	i, found := slices.BinarySearchFunc(s.LeaderEpochs, o, func(e base.EpochStart, o base.Offset) int {
		return cmp.Compare(e.Start, o)
	})
	if !found {
		i--
	}
	return s.LeaderEpochs[i].Epoch
}

// chainLineage joins the epochs of chain (ascending, contiguous, each
// segment's last epoch at most the next one's first) into one lineage,
// cut at logStart as Kafka's LeaderEpochFileCache.truncateFromStart cuts
// it: epochs that end at or before logStart go, and the first one left
// starts at logStart.
func chainLineage(chain []remotemeta.RemoteSegment, logStart base.Offset) []base.EpochStart {
	var out []base.EpochStart
	for _, s := range chain {
		for _, e := range s.LeaderEpochs {
			n := len(out)
			switch {
			case n > 0 && out[n-1].Epoch == e.Epoch:
				continue // the epoch goes on across the segment boundary
			case n > 0 && (out[n-1].Epoch > e.Epoch || out[n-1].Start >= e.Start):
				panic(fmt.Sprintf("replication: remote chain epochs not ascending at %v after %v", e, out[n-1]))
			}
			out = append(out, e)
		}
	}
	i := 0
	for i+1 < len(out) && out[i+1].Start <= logStart {
		i++
	}
	out = out[i:]
	if len(out) > 0 && out[0].Start < logStart {
		out[0].Start = logStart
	}
	return out
}

// BootstrapKind is what an empty follower does when
// follower.fetch.last.tiered.offset.enable is on (KIP-1023). The zero
// value is invalid.
type BootstrapKind uint8

const (
	// BootstrapFromLogStart: fetch from the leader's log start, as
	// without the feature: nothing tiered is worth skipping.
	BootstrapFromLogStart BootstrapKind = iota + 1
	// BootstrapFromTier: rebuild the auxiliary state at the offset
	// TieredBootstrap returns (PlanAuxState) and fetch from there.
	BootstrapFromTier
	// BootstrapRetry: the leader has tiered segments but does not know
	// yet how far (its tier metadata is not loaded); ask again later.
	BootstrapRetry
)

func (k BootstrapKind) String() string {
	switch k {
	case BootstrapFromLogStart:
		return "from-log-start"
	case BootstrapFromTier:
		return "from-tier"
	case BootstrapRetry:
		return "retry"
	}
	return fmt.Sprintf("BootstrapKind(%d)", uint8(k))
}

// TieredBootstrap is KIP-1023's choice of where an empty follower starts,
// from the leader's answers to ListOffsets: earliest pending upload (-6;
// pendingKnown is false when it answered -1), log start (-2) and earliest
// local (-4).
//   - A known pending-upload offset, at least the log start (Kafka's
//     leader clamps it so: a tier that stopped below the log start holds
//     nothing of the log), is where the follower starts when it is above
//     the log start; at the log start there is nothing to skip.
//   - An unknown one with the log start equal to the local log start
//     means nothing was uploaded yet: the KIP takes the local log start,
//     which is the log start, so the follower fetches as it always does.
//   - An unknown one with the local log start above the log start means
//     segments were uploaded that the leader does not know of yet: retry
//     after a backoff, until it does.
func TieredBootstrap(pendingUpload base.Offset, pendingKnown bool, leaderLogStart, leaderLocalStart base.Offset) (BootstrapKind, base.Offset) {
	switch {
	case !pendingKnown && leaderLocalStart == leaderLogStart:
		return BootstrapFromLogStart, leaderLogStart
	case !pendingKnown:
		return BootstrapRetry, 0
	}
	if at := max(pendingUpload, leaderLogStart); at > leaderLogStart {
		return BootstrapFromTier, at
	}
	return BootstrapFromLogStart, leaderLogStart
}

// EmptyFollower reports whether a follower whose log starts at logStart
// and ends at logEnd holds nothing, locally or in the tier: KIP-1023
// bootstraps only such a follower (a new replica, or one that started
// over). An epoch cache left by a leadership without appends does not
// make a log non-empty.
func EmptyFollower(logStart, logEnd base.Offset) bool { return logEnd == logStart }
