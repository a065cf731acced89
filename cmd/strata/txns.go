package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/markers"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/txn"
)

// markerRetryBackoff is the first wait before a transaction marker that
// could not be written is tried again.
const markerRetryBackoff = 100 * time.Millisecond

// txnCoordinator is the transaction coordinator of every
// __transaction_state partition led here and the writer of its markers.
type txnCoordinator struct {
	*coordinatorHost
	markers *markers.Writer
	// broker is set once the broker is open. The coordinator partitions
	// load, and resend their markers, while the broker opens its
	// partitions: until then a marker's partition cannot be looked up.
	broker atomic.Pointer[broker.Broker]
	// ctx ends the marker round trips to other brokers at close.
	ctx    context.Context
	cancel context.CancelFunc
}

// errBrokerStarting makes a marker write wait for the broker.
var errBrokerStarting = errors.New("the broker is still opening its partitions")

// setBroker lets marker writes and producer id allocation proceed.
func (c *txnCoordinator) setBroker(b *broker.Broker) { c.broker.Store(b) }

// newTxnCoordinator wires the transaction coordinator. The broker comes
// later (opening it opens the coordinator partitions): setBroker hands it
// over, and until then marker writes wait and producer ids are refused
// (retriably).
func newTxnCoordinator(cfg *config.Broker, clk clock.Clock, logger *slog.Logger, n *node) (*txnCoordinator, error) {
	c := &txnCoordinator{coordinatorHost: newCoordinatorHost(txn.TopicName, clk)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	w, err := markers.New(markers.Options{
		Partition: func(tp base.TopicPartition) (markers.MarkerAppender, error) {
			b := c.broker.Load()
			if b == nil {
				return nil, errBrokerStarting
			}
			return c.markerRoute(cfg.NodeID, n).target(b, tp)
		},
		GroupLedElsewhere: func(p int32) bool { return groupLedElsewhere(n.meta.Image(), cfg.NodeID, p) },
		GroupsTopic:       offsets.TopicName,
		SubmitGroupEvent:  n.groups.rt.SubmitEvent,
		SubmitTxnEvent:    func(p int32, ev any, done func(error)) { c.rt.SubmitEvent(p, ev, done) },
		RetryBackoff:      markerRetryBackoff,
		Logger:            logger.With("component", "txn-markers"),
	})
	if err != nil {
		return nil, err
	}
	c.markers = w
	opts := txnOptions(cfg, c, n)
	rt, err := runtime.New(runtime.Options{
		NewShard: func(idx int32) (runtime.Shard, error) {
			p, err := c.partition(idx)
			if err != nil {
				return nil, err
			}
			o := opts
			// The epoch markers carry: a later leadership of this
			// partition fences the markers of an earlier one.
			o.CoordinatorEpoch = int32(p.Offsets().LeaderEpoch)
			return txn.New(o)
		},
		Open:          c.open,
		ErrorResponse: txn.ErrorResponse,
		Clock:         clk,
		NewTicker:     runtime.NewRealTicker(coordinatorTickInterval),
		MaxQueuedOps:  coordinatorMaxQueuedOps,
		LoadHold:      coordinatorLoadHold,
		Logger:        logger.With("component", "txn-coordinator"),
		OnEffects:     w.OnEffects,
	})
	if err != nil {
		return nil, err
	}
	c.rt = rt
	return c, nil
}

// txnOptions are the transaction coordinator's settings from the broker's.
func txnOptions(cfg *config.Broker, c *txnCoordinator, n *node) txn.Options {
	return txn.Options{
		NextProducerID: func() (int64, error) {
			b := c.broker.Load()
			if b == nil {
				return 0, errBrokerStarting
			}
			id, err := b.NextProducerID()
			return int64(id), err
		},
		GroupPartition: func(groupID string) base.TopicPartition {
			// The topic's own count once it exists (the api routes
			// TxnOffsetCommit by it), the configured one before.
			count := cfg.OffsetsTopicNumPartitions
			if t, ok := n.meta.Image().Topics[offsets.TopicName]; ok && len(t.Partitions) > 0 {
				count = int32(len(t.Partitions))
			}
			return base.TopicPartition{Topic: offsets.TopicName, Partition: offsets.PartitionFor(groupID, count)}
		},
		MaxTimeout:          cfg.TxnMaxTimeout,
		IDExpiration:        cfg.TxnIDExpiration,
		AbortCheckInterval:  cfg.TxnAbortCheckInterval,
		ExpiryCheckInterval: cfg.TxnExpiryCheckInterval,
	}
}

// markerRoute is where markers go, as this node sees its cluster now.
// Called only once the broker is set: a cluster node makes its
// connections to other brokers before it opens the broker (none on a
// single node).
func (c *txnCoordinator) markerRoute(nodeID int32, n *node) markerRoute {
	r := markerRoute{nodeID: nodeID, image: n.meta.Image, ctx: c.ctx}
	if n.replicaClients != nil {
		r.client = n.replicaClients.client
	}
	return r
}

// close stops the marker writes in progress, then the coordinator.
func (c *txnCoordinator) close() {
	c.cancel()
	c.markers.Close()
	c.rt.Close()
}
