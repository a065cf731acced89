package replication

import (
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// HighWatermarkInput is the leader's view of a partition when it decides
// whether the high watermark moves: a snapshot, taken after a fetch moved a
// follower, an append moved the leader or an ISR change completed.
type HighWatermarkInput struct {
	// Current is the high watermark now; Current <= LeaderEnd.
	Current   base.Offset
	LeaderID  int32
	LeaderEnd base.Offset
	// ISR is the committed ISR (it includes the leader); the
	// min.insync.replicas gate is judged on it.
	ISR []int32
	// MaximalISR is the ISR plus a member whose addition is still in flight
	// (Kafka's PartitionState.maximalIsr): the high watermark waits for all
	// of them, so it already reflects an expansion before the controller
	// confirms it. A shrink in flight is not subtracted until confirmed.
	MaximalISR []int32
	// Followers are all assigned replicas but the leader, including those
	// being added by a reassignment (Kafka's remoteReplicasMap).
	Followers []Follower
	// MinInsyncReplicas is the topic's min.insync.replicas.
	MinInsyncReplicas int
	// Eligible reports whether a follower's broker may join the ISR (see
	// IsrEligible); a caught-up follower outside the ISR holds the high
	// watermark only if it is. It must not be nil.
	Eligible func(id int32) bool
	// NowMs and LagMaxMs (replica.lag.time.max.ms) judge which followers
	// outside the ISR are caught up.
	NowMs, LagMaxMs int64
}

// HighWatermark is the partition's new high watermark, Kafka's
// Partition.maybeIncrementLeaderHW as of Kafka 3.7 (KAFKA-15583 and
// KAFKA-15021, unchanged in 4.0):
//
//  1. If the committed ISR is smaller than the effective min.insync.replicas
//     (the smaller of MinInsyncReplicas and the number of assigned replicas),
//     the high watermark does not move.
//  2. Otherwise it is the smallest log end among the leader, every member of
//     the maximal ISR, and every follower outside it that is caught up
//     (Follower.CaughtUp within LagMaxMs) and eligible to join the ISR: such
//     a follower is about to join, and the high watermark waits for it
//     rather than commit what it has not got. A follower that is caught up
//     but not eligible (fenced, shutting down) is not waited for, or a
//     controlled shutdown would stall acks=all produces for LagMaxMs.
//  3. A waited-for follower whose log end is unknown (no fetch in this
//     term) holds the high watermark where it is, as Kafka's -1 does.
//
// The result never moves backward and never exceeds LeaderEnd. Strata
// departs from Kafka in one place: a member of the maximal ISR that is
// missing from Followers (which the ISR ⊆ replicas invariant forbids) holds
// the high watermark, where Kafka would skip it.
//
// HighWatermark panics if Current > LeaderEnd.
func HighWatermark(in HighWatermarkInput) base.Offset {
	if in.Current > in.LeaderEnd {
		panic(fmt.Sprintf("replication: high watermark %d above the leader's log end %d", in.Current, in.LeaderEnd))
	}
	replicas := 1
	for _, f := range in.Followers {
		if f.ID != in.LeaderID {
			replicas++
		}
	}
	if len(in.ISR) < min(in.MinInsyncReplicas, replicas) {
		return in.Current
	}
	hw := in.LeaderEnd
	for _, id := range in.MaximalISR {
		if id == in.LeaderID {
			continue
		}
		f, ok := findFollower(in.Followers, id)
		if !ok || !f.Fetched {
			return in.Current
		}
		hw = min(hw, f.LogEnd)
	}
	for _, f := range in.Followers {
		if f.ID == in.LeaderID || slices.Contains(in.MaximalISR, f.ID) {
			continue
		}
		if !f.CaughtUp(in.LeaderEnd, in.NowMs, in.LagMaxMs) || !in.Eligible(f.ID) {
			continue
		}
		if !f.Fetched {
			return in.Current
		}
		hw = min(hw, f.LogEnd)
	}
	return max(in.Current, hw)
}
