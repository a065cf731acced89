package config

import (
	"errors"
	"strconv"
	"strings"
)

// Replication throttles (Kafka's KIP-73), used to bound the bandwidth of a
// reassignment. A broker throttles the partitions a list names with its own
// id: as a leader, those of leader.replication.throttled.replicas, for the
// followers out of the ISR, at its leader.replication.throttled.rate; as a
// follower out of the ISR, those of follower.replication.throttled.replicas,
// at its follower.replication.throttled.rate (bytes per second, over all
// the partitions it throttles). kafka-reassign-partitions --throttle sets
// all four, listing the existing replicas (which may lead) in the leader
// list and the new ones in the follower list.

// The throttled replica lists, topic configs.
const (
	LeaderThrottledReplicas   = "leader.replication.throttled.replicas"
	FollowerThrottledReplicas = "follower.replication.throttled.replicas"
)

// The throttle rates, dynamic broker configs (per broker or cluster-wide).
const (
	LeaderThrottledRate   = "leader.replication.throttled.rate"
	FollowerThrottledRate = "follower.replication.throttled.rate"
)

var replicationThrottleTopicDefs = []Def{
	def(LeaderThrottledReplicas, List, "", "", validThrottledReplicas,
		"Partitions whose leader, on the broker listed with them, sends to followers out of the ISR at no more than its leader.replication.throttled.rate: partitionId:brokerId pairs, comma-separated (0:101,0:102,1:101), or * for every partition on every broker (KIP-73; kafka-reassign-partitions lists the existing replicas)."),
	def(FollowerThrottledReplicas, List, "", "", validThrottledReplicas,
		"Replicas whose own fetches, while out of the ISR, are throttled to their broker's follower.replication.throttled.rate: partitionId:brokerId pairs, comma-separated, or * (KIP-73; kafka-reassign-partitions lists the new replicas)."),
}

var replicationThrottleBrokerDefs = []Def{
	def(LeaderThrottledRate, Long, longMax, "", atLeast(0),
		"Bytes per second this broker sends, as a leader, to the throttled replicas (leader.replication.throttled.replicas) out of the ISR, over all of them; dynamic, usually set by kafka-reassign-partitions --throttle."),
	def(FollowerThrottledRate, Long, longMax, "", atLeast(0),
		"Bytes per second this broker fetches, as a follower, for its throttled replicas (follower.replication.throttled.replicas) out of the ISR, over all of them; dynamic, usually set by kafka-reassign-partitions --throttle."),
	def("replication.quota.window.num", Int, "11", "", atLeast(2),
		"Samples the replication throttles' rates are measured over (Kafka allows 1; with one sample a rate has no span to divide by)."),
	def("replication.quota.window.size.seconds", Int, "1", "", atLeast(1), "Length of one replication throttle sample."),
}

// ThrottledReplicas is a parsed throttled replica list: every replica, or
// the listed partition:broker pairs.
type ThrottledReplicas struct {
	all   bool
	pairs map[[2]int32]bool
}

// Has reports whether the list names broker's replica of partition.
func (t ThrottledReplicas) Has(partition, broker int32) bool {
	return t.all || t.pairs[[2]int32{partition, broker}]
}

// Empty reports whether the list names no replica.
func (t ThrottledReplicas) Empty() bool { return !t.all && len(t.pairs) == 0 }

// ParseThrottledReplicas parses a value that validThrottledReplicas
// accepted ("" is the empty list).
func ParseThrottledReplicas(v string) ThrottledReplicas {
	t, err := parseThrottledReplicas(v)
	if err != nil {
		panic("config: unvalidated throttled replica list " + strconv.Quote(v))
	}
	return t
}

func validThrottledReplicas(v string) error {
	_, err := parseThrottledReplicas(v)
	return err
}

func parseThrottledReplicas(v string) (ThrottledReplicas, error) {
	items := splitList(v)
	if len(items) == 1 && items[0] == "*" {
		return ThrottledReplicas{all: true}, nil
	}
	bad := errors.New("must be * or a comma-separated list of partitionId:brokerId, e.g. 0:101,0:102,1:101")
	t := ThrottledReplicas{pairs: make(map[[2]int32]bool, len(items))}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		pn, perr := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		bn, berr := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if !ok || perr != nil || berr != nil || pn < 0 || bn < 0 {
			return ThrottledReplicas{}, bad
		}
		t.pairs[[2]int32{int32(pn), int32(bn)}] = true
	}
	return t, nil
}

// ReplicationThrottle is this broker's replication throttle rates, in
// bytes per second, with its dynamic configs (unlimited: the Long maximum).
func (b *Broker) ReplicationThrottle() (leader, follower int64) {
	return mustInt(b.value(LeaderThrottledRate)), mustInt(b.value(FollowerThrottledRate))
}
