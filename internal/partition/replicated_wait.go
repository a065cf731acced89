package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// coordinatorReplicationTimeout bounds how long a coordinator's write or
// a transaction marker waits for the in-sync replicas (Kafka's
// offsets.commit.timeout.ms default).
const coordinatorReplicationTimeout = 5 * time.Second

// ErrReplicationTimeout: a coordinator write or a marker was fdatasynced
// here but the in-sync replicas did not all take it in time; its outcome
// is unknown to the writer, which retries or fails as for any timeout.
var ErrReplicationTimeout = errors.New("partition: the in-sync replicas did not take the write in time")

// syncAndReplicate is the wait of a coordinator write or a marker: the
// bytes below end are fdatasynced here, then, while followers are in the
// ISR, the high watermark must pass end (Kafka completes such writes only
// once committed: a failover would otherwise lose a commit that was
// answered). With the leader alone in its ISR the high watermark already
// is the log end, so this costs one lock.
func (p *Partition) syncAndReplicate(end base.Offset) error {
	if err := p.log.SyncTo(end); err != nil {
		return err
	}
	var timeout <-chan time.Time
	for {
		p.mu.Lock()
		hw, leader, closed, changed := p.mu.highWatermark, p.mu.role == roleLeader, p.mu.closed, p.mu.changed
		p.mu.Unlock()
		switch {
		case hw >= end:
			return nil
		case closed:
			return ErrClosed
		case !leader:
			return ErrNotLeader
		}
		if timeout == nil {
			t := time.NewTimer(coordinatorReplicationTimeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			return fmt.Errorf("%w: partition %v: high watermark %d, waiting for %d", ErrReplicationTimeout, p.opts.TP, hw, end)
		}
	}
}
