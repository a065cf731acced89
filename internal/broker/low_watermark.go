package broker

import (
	"errors"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// LowWatermark is p's low watermark (replication.LowWatermark) while this
// node leads it: the least log start among its live replicas, -1 while a
// live follower has not fetched since this node became leader. A
// partition led here without followers answers its own log start; one not
// led here (or replaced), partition.ErrNotLeader.
func (b *Broker) LowWatermark(p *partition.Partition) (base.Offset, error) {
	ls, err := b.leaderStateOf(p.TP())
	switch {
	case errors.Is(err, ErrNotReplica) && p.IsLeader():
		return p.Offsets().LogStart, nil // the only replica
	case err != nil:
		return 0, err
	case ls.p != p || !p.IsLeader():
		return 0, partition.ErrNotLeader
	}
	brokers := brokersOf(b.opts.Meta.Image())
	return ls.lowWatermark(p.Offsets().LogStart, func(id int32) bool {
		r := brokers(id)
		return r.Registered && !r.Fenced
	}), nil
}

// lowWatermark is replication.LowWatermark over the followers' states.
func (ls *leaderState) lowWatermark(leaderLogStart base.Offset, live func(id int32) bool) base.Offset {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return replication.LowWatermark(leaderLogStart, ls.mu.followers, live)
}
