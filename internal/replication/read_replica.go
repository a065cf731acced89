package replication

import (
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// ReadReplica is a replica a consumer could be sent to read a partition
// from (KIP-392), as its leader sees it.
type ReadReplica struct {
	ID int32
	// Rack is the rack of the replica's broker ("" for none).
	Rack string
	// Reachable is whether the consumer's listener has an endpoint on
	// the replica's broker (a live broker with that listener).
	Reachable bool
	// LogEnd is the replica's log end: the leader's own, a follower's
	// latest fetch offset.
	LogEnd base.Offset
	// LastCaughtUpMs is when the replica last had everything the leader
	// had; the leader's is now.
	LastCaughtUpMs int64
}

// ReadCandidates are the followers a consumer fetching at offset may read
// from, as Kafka's ReplicaManager.findPreferredReadReplica offers them to
// its replica selector: in the ISR (a follower out of it may lag ever
// further), and holding offset (its log start at or below it, its log end
// at or above it). A follower that has not fetched since this leader took
// over holds nothing it has said.
func ReadCandidates(followers []Follower, isr []int32, offset base.Offset) []Follower {
	var out []Follower
	for _, f := range followers {
		if f.Fetched && slices.Contains(isr, f.ID) && f.LogStart <= offset && f.LogEnd >= offset {
			out = append(out, f)
		}
	}
	return out
}

// PreferredReadReplica picks the replica a consumer in clientRack reads
// from, as Kafka's RackAwareReplicaSelector: the leader when the client
// names no rack, when no candidate is in its rack, or when the leader is
// in it; otherwise the candidate of its rack with the largest log end,
// then the most recently caught up (then the lowest id, so the answer is
// stable). A follower the client's listener cannot reach is no candidate
// (Kafka gives it Node.noNode(), which has no rack). ok is false when the
// choice is the leader: the consumer reads from it.
func PreferredReadReplica(clientRack string, leader ReadReplica, followers []ReadReplica) (id int32, ok bool) {
	if clientRack == "" || leader.Rack == clientRack {
		return 0, false
	}
	var best *ReadReplica
	for i := range followers {
		f := &followers[i]
		if f.Rack != clientRack || !f.Reachable {
			continue
		}
		if best == nil || moreCaughtUp(*f, *best) {
			best = f
		}
	}
	if best == nil {
		return 0, false
	}
	return best.ID, true
}

// moreCaughtUp orders replicas as Kafka's ReplicaView.comparator, most
// caught up first, with the lower id breaking ties.
func moreCaughtUp(a, b ReadReplica) bool {
	switch {
	case a.LogEnd != b.LogEnd:
		return a.LogEnd > b.LogEnd
	case a.LastCaughtUpMs != b.LastCaughtUpMs:
		return a.LastCaughtUpMs > b.LastCaughtUpMs
	}
	return a.ID < b.ID
}
