package replication

import "github.com/strata-broker/strata/internal/base"

// Follower is a follower's progress as its partition leader sees it, Kafka's
// kafka.cluster.ReplicaState. It is a value: OnFetch and the resets return a
// new Follower.
//
// The zero value (with ID set) is a follower that has not fetched yet, as
// Kafka's ReplicaState.Empty.
type Follower struct {
	ID int32

	// Fetched is whether the follower has fetched since this broker became
	// the partition's leader (a re-election of the same leader keeps it).
	// LogEnd, LogStart and BrokerEpoch mean something only when it is set;
	// Kafka writes -1 (unknown) into them instead.
	Fetched bool

	// LogEnd is the offset of the follower's latest fetch, which is its log
	// end: the follower asks for the first offset it does not have.
	LogEnd base.Offset
	// LogStart is the follower's log start offset from that fetch.
	LogStart base.Offset
	// BrokerEpoch is the broker epoch the latest fetch carried (Fetch v15+
	// ReplicaState.ReplicaEpoch, KIP-903). IsrEligible compares it with the
	// broker's registration.
	BrokerEpoch int64

	// LastFetchMs is when the leader received the follower's latest fetch.
	LastFetchMs int64
	// LeaderEndAtLastFetch is the leader's log end when that fetch came.
	LeaderEndAtLastFetch base.Offset
	// LastCaughtUpMs is the largest time t such that the follower's latest
	// fetch offset is >= the leader's log end at t. The ISR shrink and the
	// high watermark judge lag by it.
	LastCaughtUpMs int64
}

// OnFetch records a fetch from the follower, as Kafka's
// Replica.updateFetchStateOrThrow does. fetchOffset is the fetch's offset
// (the follower's new log end), followerLogStart its log start, leaderEnd the
// leader's log end before the fetch was served (so appends that race the
// fetch do not keep a follower out of sync) and brokerEpoch the broker epoch
// the fetch carried.
//
// The rule: if the fetch reads up to the leader's current end, the follower
// was caught up now; else if it reads up to the leader's end at the previous
// fetch, it was caught up at the previous fetch's time. This is what lets a
// follower join the ISR while small produce requests keep the leader's end
// always a little ahead. LastCaughtUpMs and LeaderEndAtLastFetch never move
// backward (Kafka takes the max of old and new for both).
//
// Kafka first rejects a fetch whose broker epoch is older than the broker's
// registration with NOT_LEADER_OR_FOLLOWER; that check is StaleBrokerEpoch,
// and the caller makes it before calling OnFetch. Kafka also skips OnFetch for
// a fetch that was answered with a diverging epoch.
func (f Follower) OnFetch(fetchOffset, followerLogStart, leaderEnd base.Offset, brokerEpoch int64, nowMs int64) Follower {
	caughtUpMs := f.LastCaughtUpMs
	switch {
	case fetchOffset >= leaderEnd:
		caughtUpMs = max(caughtUpMs, nowMs)
	case fetchOffset >= f.LeaderEndAtLastFetch:
		// Before any fetch in this term LastFetchMs is 0 (or the time of a
		// re-election), so this never claims more than the reset did.
		caughtUpMs = max(caughtUpMs, f.LastFetchMs)
	}
	return Follower{
		ID:                   f.ID,
		Fetched:              true,
		LogEnd:               fetchOffset,
		LogStart:             followerLogStart,
		BrokerEpoch:          brokerEpoch,
		LastFetchMs:          nowMs,
		LeaderEndAtLastFetch: max(leaderEnd, f.LeaderEndAtLastFetch),
		LastCaughtUpMs:       caughtUpMs,
	}
}

// ResetForNewLeader is the follower's state when this broker becomes the
// partition's leader in a new leader epoch, having been a follower (Kafka's
// Replica.resetReplicaState with isNewLeader=true, called from
// Partition.makeLeader): nothing the old leader knew is kept, and the
// follower counts as caught up at nowMs if it is in the ISR, never
// otherwise. The latter keeps a follower that already left the ISR from
// holding the high watermark back.
func (f Follower) ResetForNewLeader(nowMs int64, inISR bool) Follower {
	return Follower{ID: f.ID, LastCaughtUpMs: caughtUpAtReset(nowMs, inISR)}
}

// ResetForNewEpoch is the follower's state when this broker, already the
// leader, is re-elected in a new leader epoch that starts at epochStart, its
// log end (Kafka's Replica.resetReplicaState with isNewLeader=false): the
// follower's log offsets and broker epoch stay; it counts as caught up and
// as having fetched at nowMs if it is in the ISR, and at 0 otherwise, so a
// follower outside the ISR is not brought back before it fetches again.
func (f Follower) ResetForNewEpoch(nowMs int64, epochStart base.Offset, inISR bool) Follower {
	f.LeaderEndAtLastFetch = epochStart
	f.LastFetchMs = caughtUpAtReset(nowMs, inISR)
	f.LastCaughtUpMs = caughtUpAtReset(nowMs, inISR)
	return f
}

func caughtUpAtReset(nowMs int64, inISR bool) int64 {
	if inISR {
		return nowMs
	}
	return 0
}

// CaughtUp is Kafka's ReplicaState.isCaughtUp: the follower's log end equals
// the leader's, or it was caught up within the last lagMaxMs
// (replica.lag.time.max.ms). A follower that has not fetched in this term is
// judged by time alone.
func (f Follower) CaughtUp(leaderEnd base.Offset, nowMs, lagMaxMs int64) bool {
	return (f.Fetched && f.LogEnd == leaderEnd) || nowMs-f.LastCaughtUpMs <= lagMaxMs
}

// findFollower returns the follower with the id, if followers has one.
func findFollower(followers []Follower, id int32) (Follower, bool) {
	for _, f := range followers {
		if f.ID == id {
			return f, true
		}
	}
	return Follower{}, false
}
