package txn

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// WriteMarkers is the effect of a transaction that entered PrepareCommit or
// PrepareAbort: the broker writes a marker (commit when Commit) of the
// producer, with CoordinatorEpoch, to every partition, then submits
// MarkersWritten. See doc.go for why at most one write per transactional
// id may be in flight.
type WriteMarkers struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	Commit           bool
	Partitions       []base.TopicPartition // sorted by topic, then partition
}

// MarkersWritten is the event (runtime.Op.Event) the broker submits once
// every marker of a WriteMarkers is written. It completes the transaction
// in Prepare* with that producer id and epoch; any other is stale and
// changes nothing. Both are answered with a nil Reply.Err.
type MarkersWritten struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
}

func (c *Coordinator) writeMarkers(t *txnMetadata) WriteMarkers {
	return WriteMarkers{
		TransactionalID:  t.id,
		ProducerID:       t.producerID,
		ProducerEpoch:    t.epoch,
		CoordinatorEpoch: c.opts.CoordinatorEpoch,
		Commit:           t.state == statePrepareCommit,
		Partitions:       t.sortedPartitions(),
	}
}

// markersWritten completes the transaction the event names, if it is
// still the one in Prepare*.
func (c *Coordinator) markersWritten(ev MarkersWritten, nowMs int64, res *runtime.Result) {
	t, ok := c.txns[ev.TransactionalID]
	if !ok || !t.state.preparing() || t.producerID != ev.ProducerID || t.epoch != ev.ProducerEpoch {
		return
	}
	c.complete(t, nowMs, res)
}

// complete is Kafka's prepareComplete once the markers are written: the
// partitions are settled, the start time stays; a version 2 end from the
// last epoch moves the producer to its next id at epoch 0. No KIP-360
// retry of an earlier InitProducerId reaches past it (Kafka sets the last
// epoch to the current one).
func (c *Coordinator) complete(t *txnMetadata, nowMs int64, res *runtime.Result) {
	to := stateCompleteAbort
	if t.state == statePrepareCommit {
		to = stateCompleteCommit
	}
	if t.nextProducerID.ok {
		t.lastProducerID, t.producerID, t.epoch = some(t.producerID), t.nextProducerID.v, 0
		t.nextProducerID = optional[int64]{}
	}
	t.lastEpoch = optional[int16]{}
	t.transitionTo(to, nowMs)
	clear(t.partitions)
	c.write(t, res)
}
