package replication

// Broker is what the leader's metadata image says about a follower's broker:
// whether it is registered and, if so, its registration epoch and whether it
// is fenced or in controlled shutdown (KIP-841, KIP-903).
type Broker struct {
	Registered           bool
	Epoch                int64
	Fenced               bool
	InControlledShutdown bool
}

// IsrEligible is Kafka's Partition.isReplicaIsrEligible in KRaft mode
// (KIP-841, KIP-903): a follower may join the ISR, or hold the high
// watermark as a caught-up candidate, only if its broker is registered, not
// fenced, not in controlled shutdown, and the broker epoch of its latest
// fetch is the registered one (a fetch from before a restart does not
// count).
//
// Kafka also accepts a follower whose fetches carry no broker epoch (Fetch
// < v15, -1 on the wire). Strata requires one: a follower that has not
// fetched in this term, or whose fetch carried no epoch, is not eligible.
func IsrEligible(f Follower, b Broker) bool {
	return b.Registered && !b.Fenced && !b.InControlledShutdown &&
		f.Fetched && f.BrokerEpoch == b.Epoch
}

// StaleBrokerEpoch reports whether a follower fetch carrying fetchBrokerEpoch
// comes from an earlier incarnation of a broker whose registration is now b,
// which Kafka's Replica.updateFetchStateOrThrow answers with
// NOT_LEADER_OR_FOLLOWER instead of recording it. Only a live (registered,
// unfenced) registration fences; Kafka skips the check for a fetch that
// carries no broker epoch (Fetch < v15), and so does the caller.
func StaleBrokerEpoch(fetchBrokerEpoch int64, b Broker) bool {
	return b.Registered && !b.Fenced && b.Epoch > fetchBrokerEpoch
}
