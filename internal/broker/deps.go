package broker

import (
	"context"
	"sync"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// Metadata is what the broker needs of the metadata quorum; a
// *metadata.Store is one.
type Metadata interface {
	// Image is the current image, never nil.
	Image() *metadata.Image
	// Watch signals after each new image (coalescing); the func stops it.
	Watch() (<-chan struct{}, func())
	// FinishRemoteTopicDelete records that a deleted topic's remote data
	// is gone.
	FinishRemoteTopicDelete(ctx context.Context, topicID base.TopicID) error
	// AlterPartition proposes a led partition's ISR change to the
	// controller (Kafka's AlterPartition).
	AlterPartition(ctx context.Context, c metadata.ISRChange) (metadata.Partition, error)
	// AllocateProducerIDs hands this broker a block of producer ids no
	// other broker gets (Kafka's AllocateProducerIds).
	AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (int64, error)
	// IsController reports whether this node is the controller now. The
	// cluster-wide bucket chores (deleted topics' remote data, orphans)
	// run only there, so that brokers do not repeat each other's work.
	IsController() bool
}

var _ Metadata = (*metadata.Store)(nil)

// Followers is told which hosted partitions follow which leader: Kafka's
// ReplicaFetcherManager (replication's fetchers implement it). The broker
// calls it under its lock, so it must not call the Broker.
type Followers interface {
	// Follow makes p, which this node follows, fetch from leader in
	// leaderEpoch (the image's), replacing whatever it fetched from
	// before. The partition is already a follower in that epoch
	// (BecomeFollower). It is called again only when the leader or the
	// epoch changes.
	Follow(p *partition.Partition, leader int32, leaderEpoch base.Epoch)
	// Unfollow stops fetching for tp. It must not return before nothing
	// appends to the partition any more: the broker makes it a leader,
	// closes or deletes it right after.
	Unfollow(tp base.TopicPartition)
}

// followTarget is the leader a follower partition was told to follow.
type followTarget struct {
	leader      int32
	leaderEpoch base.Epoch
	ok          bool
}

// asyncTasks runs the broker's short-lived background work (ISR change
// proposals): each task gets a context that close cancels, and close waits
// for them all. A task submitted after close does not run.
type asyncTasks struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     struct {
		sync.Mutex
		closed bool
	}
	wg sync.WaitGroup
}

func (a *asyncTasks) init() { a.ctx, a.cancel = context.WithCancel(context.Background()) }

// goTask runs task on a goroutine of its own and reports whether it does.
func (a *asyncTasks) goTask(task func(ctx context.Context)) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.closed {
		return false
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		task(a.ctx)
	}()
	return true
}

// close cancels every task and waits for them.
func (a *asyncTasks) close() {
	a.mu.Lock()
	a.mu.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
}
