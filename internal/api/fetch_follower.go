package api

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// Fetching from the closest replica (KIP-392). A consumer's Fetch v11+
// may be served by a follower of the partition, as Kafka serves it: up to
// the follower's high watermark (or last stable offset), which it learns
// from its leader, with the leader's epoch checked as on the leader. An
// offset past the follower's log end is OFFSET_OUT_OF_RANGE and one between
// its high watermark and log end reads nothing; the client then asks the
// leader (franz-go and the Java client handle both, as KIP-392 says). A
// follower that restarted serves nothing until its leader's first answer
// confirms its high watermark: the one it took at restart may count
// records that never committed (its log end, when no checkpoint had one),
// which a consumer must not see.
//
// With replica.selector.class set to Kafka's RackAwareReplicaSelector a
// leader answers a consumer that names its rack, and is not in the
// leader's rack, with the in-sync follower of that rack that holds the
// fetch offset (PreferredReadReplica, no records); the consumer fetches
// from it until its metadata refreshes (metadata.max.age.ms) or it errs.

// fetchFromFollowers reports whether a consumer Fetch of version may be
// served by a follower: v11+, which carries the client's rack (Kafka's
// clientMetadata, without which it serves from the leader only).
func fetchFromFollowers(version int16) bool { return version >= 11 }

// preferredReadReplica is the replica a consumer in rack should read p
// from at offset, when this broker leads p, runs the rack-aware selector
// and it is not this one; -1 otherwise.
func (h *Handler) preferredReadReplica(img *metadata.Image, listener, rack string, p *partition.Partition, offset base.Offset) int32 {
	if !h.opts.Config.RackAwareReplicaSelector || rack == "" || !p.IsLeader() {
		return -1
	}
	reachable := func(id int32) bool {
		_, ok := h.brokerAddress(img, id, listener)
		return ok
	}
	if id, ok := h.opts.Broker.PreferredReadReplica(p, offset, rack, reachable); ok {
		return id
	}
	return -1
}
