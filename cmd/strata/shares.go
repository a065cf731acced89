package main

import (
	"log/slog"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/sharestate"
	"github.com/strata-broker/strata/internal/metadata"
)

// newShareStateCoordinator runs the share coordinator (KIP-932) of every
// __share_group_state partition this broker leads: where share-partition
// leaders keep the delivery state of share groups.
func newShareStateCoordinator(meta *metadata.Store, clk clock.Clock, logger *slog.Logger) (*coordinatorHost, error) {
	c := newCoordinatorHost(sharestate.TopicName, clk)
	opts := sharestate.Options{PartitionCount: func(id [16]byte) (int32, bool) {
		t, ok := meta.Image().TopicsByID[base.TopicID(id)]
		if !ok {
			return 0, false
		}
		return int32(len(t.Partitions)), true
	}}
	rt, err := runtime.New(runtime.Options{
		NewShard:      func(int32) (runtime.Shard, error) { return sharestate.New(opts), nil },
		Open:          c.open,
		ErrorResponse: sharestate.ErrorResponse,
		Clock:         clk,
		NewTicker:     runtime.NewRealTicker(coordinatorTickInterval),
		MaxQueuedOps:  coordinatorMaxQueuedOps,
		LoadHold:      coordinatorLoadHold,
		Logger:        logger,
	})
	if err != nil {
		return nil, err
	}
	c.rt = rt
	return c, nil
}
