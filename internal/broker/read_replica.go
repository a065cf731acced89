package broker

import (
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// PreferredReadReplica is the follower a consumer in clientRack should
// read p from at offset (KIP-392, Kafka's ReplicaManager.
// findPreferredReadReplica with its RackAwareReplicaSelector): one of the
// followers this leadership knows to be in the ISR and to hold offset,
// in the client's rack, that the client reaches (reachable says whether
// its listener reaches a broker). ok is false when p is not led here with
// followers or the choice is this broker.
func (b *Broker) PreferredReadReplica(p *partition.Partition, offset base.Offset, clientRack string, reachable func(id int32) bool) (id int32, ok bool) {
	if clientRack == "" {
		return 0, false
	}
	ls, err := b.leaderStateOf(p.TP())
	if err != nil || ls.p != p {
		return 0, false
	}
	ls.mu.Lock()
	followers, isr := slices.Clone(ls.mu.followers), slices.Clone(ls.mu.isr)
	ls.mu.Unlock()
	img := b.opts.Meta.Image()
	now := b.opts.Clock.Now().UnixMilli()
	leader := replication.ReadReplica{ID: b.opts.NodeID, Rack: rackOf(img, b.opts.NodeID), Reachable: true,
		LogEnd: p.Offsets().LogEnd, LastCaughtUpMs: now}
	var candidates []replication.ReadReplica
	for _, f := range replication.ReadCandidates(followers, isr, offset) {
		candidates = append(candidates, replication.ReadReplica{ID: f.ID, Rack: rackOf(img, f.ID), Reachable: reachable(f.ID),
			LogEnd: f.LogEnd, LastCaughtUpMs: f.LastCaughtUpMs})
	}
	return replication.PreferredReadReplica(clientRack, leader, candidates)
}

// rackOf is broker id's rack as registered ("" for none).
func rackOf(img *metadata.Image, id int32) string {
	if b, ok := img.Brokers[id]; ok {
		return b.Rack
	}
	return ""
}
