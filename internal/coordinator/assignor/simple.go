package assignor

import (
	"cmp"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// SimpleName is the name of Simple, the assignor of share groups.
const SimpleName = "simple"

// Simple is KIP-932's SimpleAssignor, for share groups: members of a share
// group may share a partition (the share-partition hands each record to
// one of them), so its contract is not Assignor's.
//
// The members subscribing to exactly the same topics form a pool, and the
// partitions of those topics are spread over the pool (one pool when the
// subscriptions are homogeneous, as Kafka's homogeneous builder; a topic
// whose subscribers differ from every other's is a pool of its own, as
// Kafka's heterogeneous builder; a topic that members of several pools
// subscribe to is spread over each of those pools). With P partitions and M members in a
// pool, each partition has ceil(M/P) holders ("sharing": 1 while members
// do not outnumber partitions) and the members' counts differ by at most
// one: sharing*P slots over M members. Every partition of a pool has at
// least one holder. A member keeps what it holds in Current while its
// count and the partition's holders allow (stickiness); the rest go, by
// topic id and partition, to the members with the most room left, ties by
// member ID. Assign is pure and deterministic, and a fixed point: the
// result as every member's Current gives the same result.
type Simple struct{}

// Name is "simple".
func (Simple) Name() string { return SimpleName }

// Assign computes the target assignment of spec. spec.Members must be
// ascending by ID; Current is taken as history (partitions of topics no
// longer subscribed or gone are dropped).
func (Simple) Assign(spec Spec) map[string]Assignment {
	out := make(map[string]Assignment, len(spec.Members))
	for i, m := range spec.Members {
		if i > 0 && spec.Members[i-1].ID >= m.ID {
			panic("assignor: members not strictly ascending by ID: " + m.ID)
		}
		out[m.ID] = Assignment{}
	}
	for _, p := range sharePools(spec) {
		p.assign(spec, out)
	}
	for _, a := range out {
		for t := range a {
			slices.Sort(a[t])
		}
	}
	return out
}

type topicPartition struct {
	topic base.TopicID
	part  int32
}

// sharePool is the members that subscribe to the same existing topics, and
// the partitions of those topics.
type sharePool struct {
	members    []int // indexes into spec.Members, ascending
	partitions []topicPartition
}

func sharePools(spec Spec) []*sharePool {
	byTopics := map[string]*sharePool{}
	var pools []*sharePool
	for i, m := range spec.Members {
		topics := existingTopics(spec, m.Subscribed)
		if len(topics) == 0 {
			continue
		}
		key := string(topicKey(topics))
		p := byTopics[key]
		if p == nil {
			p = &sharePool{}
			for _, t := range topics {
				for part := range spec.Topics[t].Partitions {
					p.partitions = append(p.partitions, topicPartition{t, part})
				}
			}
			byTopics[key] = p
			pools = append(pools, p)
		}
		p.members = append(p.members, i)
	}
	return pools
}

// existingTopics is subscribed as a sorted set of the topics spec knows
// that have partitions.
func existingTopics(spec Spec, subscribed []base.TopicID) []base.TopicID {
	var out []base.TopicID
	for _, t := range subscribed {
		if spec.Topics[t].Partitions > 0 {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b base.TopicID) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(out)
}

func topicKey(topics []base.TopicID) []byte {
	key := make([]byte, 0, 16*len(topics))
	for _, t := range topics {
		key = append(key, t[:]...)
	}
	return key
}

func (p *sharePool) assign(spec Spec, out map[string]Assignment) {
	members, parts := len(p.members), len(p.partitions)
	sharing := (members + parts - 1) / parts
	slots := sharing * parts
	valid := make(map[topicPartition]bool, parts)
	for _, tp := range p.partitions {
		valid[tp] = true
	}
	quota := p.quotas(spec, valid, slots)
	holders := make(map[topicPartition][]int, parts)
	// Stickiness: what members hold, while their quota and the partition's
	// sharing allow, in member order.
	for k, mi := range p.members {
		for _, tp := range sortedPartitions(spec.Members[mi].Current) {
			if valid[tp] && quota[k] > 0 && len(holders[tp]) < sharing && !slices.Contains(holders[tp], k) {
				holders[tp] = append(holders[tp], k)
				quota[k]--
			}
		}
	}
	// Every partition gets a holder first, then up to its sharing.
	for round := 1; round <= sharing; round++ {
		for _, tp := range p.partitions {
			for len(holders[tp]) < round {
				k, ok := mostRoom(quota, holders[tp])
				if !ok {
					if !swapFor(tp, p.partitions, holders, quota) {
						break
					}
					continue
				}
				holders[tp] = append(holders[tp], k)
				quota[k]--
			}
		}
	}
	for _, tp := range p.partitions {
		for _, k := range holders[tp] {
			id := spec.Members[p.members[k]].ID
			out[id][tp.topic] = append(out[id][tp.topic], tp.part)
		}
	}
}

// quotas splits slots over the pool's members: slots/M each, and one more
// for the slots%M members that hold the most of the pool already (ties by
// member ID), so that the extra slots save moves.
func (p *sharePool) quotas(spec Spec, valid map[topicPartition]bool, slots int) []int {
	members := len(p.members)
	held := make([]int, members)
	for k, mi := range p.members {
		for _, tp := range sortedPartitions(spec.Members[mi].Current) {
			if valid[tp] {
				held[k]++
			}
		}
	}
	order := make([]int, members)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(held[b], held[a]) })
	quota := make([]int, members)
	for rank, k := range order {
		quota[k] = slots / members
		if rank < slots%members {
			quota[k]++
		}
	}
	return quota
}

// swapFor gives tp one more holder when every member with quota left
// holds it already (stickiness can leave the room with a member that holds
// tp): a member k without room that does not hold tp hands a partition it
// holds and that such a member j does not hold to j, and takes tp instead,
// so that every slot is used and the result, taken as Current, is assigned
// again unchanged. First j by member order, then partition in pool order,
// then k in holder order. It reports whether it found such a swap.
func swapFor(tp topicPartition, parts []topicPartition, holders map[topicPartition][]int, quota []int) bool {
	for j, q := range quota {
		if q == 0 || !slices.Contains(holders[tp], j) {
			continue
		}
		for _, other := range parts {
			if other == tp || slices.Contains(holders[other], j) {
				continue
			}
			for i, k := range holders[other] {
				if slices.Contains(holders[tp], k) {
					continue
				}
				holders[other][i] = j
				holders[tp] = append(holders[tp], k)
				quota[j]--
				return true
			}
		}
	}
	return false
}

// mostRoom is the member with the most quota left that does not hold the
// partition yet; ties go to the first in member order.
func mostRoom(quota []int, holding []int) (int, bool) {
	best, found := 0, false
	for k, q := range quota {
		if q > 0 && !slices.Contains(holding, k) && (!found || q > quota[best]) {
			best, found = k, true
		}
	}
	return best, found
}

// sortedPartitions lists a's partitions by topic id, then partition.
func sortedPartitions(a Assignment) []topicPartition {
	var out []topicPartition
	for t, ps := range a {
		for _, p := range ps {
			out = append(out, topicPartition{t, p})
		}
	}
	slices.SortFunc(out, func(x, y topicPartition) int {
		if c := slices.Compare(x.topic[:], y.topic[:]); c != 0 {
			return c
		}
		return cmp.Compare(x.part, y.part)
	})
	return out
}
