package metadata

import "fmt"

// stripedAssignment spreads the replicas of n partitions, numbered from
// firstPartition, over brokers as Kafka's rack-unaware assignment does: the
// first replica of partition p is brokers[(p+start) mod len], so leaders
// go round the brokers; the other replicas follow it at a shift that grows
// by one each full round, so the followers of one broker's partitions are
// spread too. start and shift are the proposer's random draws in
// [0, len(brokers)); brokers are distinct. It refuses a replication factor
// outside 1..len(brokers).
func stripedAssignment(brokers []int32, firstPartition, n int, replicationFactor int16, start, shift int) ([][]int32, error) {
	nb := len(brokers)
	if replicationFactor < 1 || int(replicationFactor) > nb {
		return nil, fmt.Errorf("%w: %d with %d broker(s)", ErrInvalidReplicationFactor, replicationFactor, nb)
	}
	out := make([][]int32, n)
	for i := range out {
		p := firstPartition + i
		if p > 0 && p%nb == 0 {
			shift++
		}
		first := (p + start) % nb
		replicas := make([]int32, 0, replicationFactor)
		replicas = append(replicas, brokers[first])
		for j := range int(replicationFactor) - 1 {
			step := 1 + (shift+j)%(nb-1)
			replicas = append(replicas, brokers[(first+step)%nb])
		}
		out[i] = replicas
	}
	return out, nil
}
