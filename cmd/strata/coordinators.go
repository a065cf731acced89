package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/partition"
)

const (
	// coordinatorTickInterval is how often each coordinator partition
	// fires its due timers. A group's session and rebalance timeouts fire
	// when due (a tick wakes the partition at the soonest one it saw,
	// runtime.Result.WakeAt) once a tick has seen them, within this
	// interval of their arming; transaction timeouts, checked every
	// transaction.abort.timed.out.transaction.cleanup.interval.ms as in
	// Kafka, are not that exact.
	coordinatorTickInterval = 100 * time.Millisecond
	// coordinatorMaxQueuedOps bounds the requests waiting for one
	// coordinator partition; beyond it clients get
	// COORDINATOR_NOT_AVAILABLE and retry.
	coordinatorMaxQueuedOps = 4096
	// coordinatorLoadHold is how long a request that arrives while its
	// coordinator partition loads waits for the load: a fresh partition
	// loads in milliseconds, and the first TxnOffsetCommit of a client
	// that does not retry COORDINATOR_LOAD_IN_PROGRESS (kafkajs) then
	// succeeds; a long load still answers that error.
	coordinatorLoadHold = 3 * time.Second
)

// coordinatorHost runs one kind of coordinator (groups, transactions) on
// every partition of its internal topic that this broker leads: the
// broker's OnOpen and OnClose hooks start and resign them.
type coordinatorHost struct {
	topic string
	rt    *runtime.Runtime
	clock clock.Clock
	// census is the group coordinator's census of its partitions (nil for
	// transactions): a resigned partition's is dropped.
	census *groupCensus
	// shareDeletes carries the group coordinator's share state deletions
	// (nil for the other coordinators).
	shareDeletes *shareStateDeleter
	mu           struct {
		sync.Mutex
		parts map[int32]*partition.Partition
	}
}

func newCoordinatorHost(topic string, clk clock.Clock) *coordinatorHost {
	c := &coordinatorHost{topic: topic, clock: clk}
	c.mu.parts = map[int32]*partition.Partition{}
	return c
}

func (c *coordinatorHost) onOpen(p *partition.Partition) {
	tp := p.TP()
	if tp.Topic != c.topic {
		return
	}
	c.mu.Lock()
	c.mu.parts[tp.Partition] = p
	c.mu.Unlock()
	c.rt.Start(tp.Partition)
}

func (c *coordinatorHost) onClose(p *partition.Partition) {
	tp := p.TP()
	if tp.Topic != c.topic {
		return
	}
	c.rt.Resign(tp.Partition)
	if c.census != nil {
		c.census.drop(tp.Partition)
	}
	c.mu.Lock()
	if c.mu.parts[tp.Partition] == p {
		delete(c.mu.parts, tp.Partition)
	}
	c.mu.Unlock()
}

// partition is the open partition idx of the topic.
func (c *coordinatorHost) partition(idx int32) (*partition.Partition, error) {
	c.mu.Lock()
	p := c.mu.parts[idx]
	c.mu.Unlock()
	if p == nil {
		return nil, fmt.Errorf("%w: %s-%d is not open here", runtime.ErrNotLeader, c.topic, idx)
	}
	return p, nil
}

// open is the runtime's Options.Open.
func (c *coordinatorHost) open(idx int32) (runtime.Log, runtime.Appender, error) {
	p, err := c.partition(idx)
	if err != nil {
		return nil, nil, err
	}
	a := offsets.New(p, c.clock)
	return a, a, nil
}
