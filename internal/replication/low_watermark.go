package replication

import "github.com/strata-broker/strata/internal/base"

// LowWatermark is a partition's low watermark as its leader computes it
// (Kafka's Partition.lowWatermarkIfLeader): the least log start of the
// leader's log and of each follower whose broker is live (registered and
// not fenced). A live follower that has not fetched since this broker
// became leader has an unknown log start, so the low watermark is unknown
// too: -1. DeleteRecords answers once the low watermark reaches the offset
// it asked for (Kafka's DelayedDeleteRecords): every live replica has
// then dropped the records below it, and no failover brings them back.
func LowWatermark(leaderLogStart base.Offset, followers []Follower, live func(id int32) bool) base.Offset {
	low := leaderLogStart
	for _, f := range followers {
		switch {
		case !live(f.ID):
		case !f.Fetched:
			return -1
		default:
			low = min(low, f.LogStart)
		}
	}
	return low
}
