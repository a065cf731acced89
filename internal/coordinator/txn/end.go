package txn

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// endTxn is Kafka's handleEndTransaction from a client of protocol version
// 1: the answer comes once the Prepare record is durable; the markers are
// written afterwards (WriteMarkers, then MarkersWritten).
func (c *Coordinator) endTxn(req *kmsg.EndTxnRequest, nowMs int64, res *runtime.Result) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ErrorCode = fencedFor(c.end(req, nowMs, res), req.Version, 2)
	return resp
}

func (c *Coordinator) end(req *kmsg.EndTxnRequest, nowMs int64, res *runtime.Result) int16 {
	if req.TransactionalID == "" {
		return kerr.InvalidRequest.Code
	}
	t, ok := c.txns[req.TransactionalID]
	switch {
	case !ok || t.producerID != req.ProducerID:
		return kerr.InvalidProducerIDMapping.Code
	case t.epoch != req.ProducerEpoch:
		return kerr.ProducerFenced.Code
	case t.state.preparing():
		// Kafka's pending Complete* transition: the same outcome is
		// retried, and the other one waits too.
		return kerr.ConcurrentTransactions.Code
	}
	switch t.state {
	case stateOngoing:
		c.prepareEnd(t, req.Commit, nowMs, res)
		return 0
	case stateCompleteCommit:
		if req.Commit {
			return 0 // a retry of a commit that completed
		}
	case stateCompleteAbort:
		if !req.Commit {
			return 0
		}
	case stateEmpty:
	default:
		panic(fmt.Sprintf("txn: transactional id %q held in state %v", t.id, t.state))
	}
	return kerr.InvalidTxnState.Code
}

// fence bumps the epoch of an Ongoing transaction, so that its producer is
// fenced, and aborts it (Kafka's prepareFenceProducerEpoch followed by the
// abort from PrepareEpochFence): an InitProducerId of a new instance, or a
// timeout.
func (c *Coordinator) fence(t *txnMetadata, nowMs int64, res *runtime.Result) {
	if t.epoch == math.MaxInt16 {
		panic(fmt.Sprintf("txn: fence of %q at epoch %d", t.id, t.epoch))
	}
	// Kafka's transient PrepareEpochFence: never written, never held
	// across ops; the table allows PrepareAbort only after it or Ongoing.
	t.transitionTo(statePrepareEpochFence, nowMs)
	t.epoch++
	t.lastEpoch = optional[int16]{}
	c.prepareEnd(t, false, nowMs, res)
}

// prepareEnd moves an Ongoing (or fencing) transaction to PrepareCommit or
// PrepareAbort and asks for its markers; without partitions it completes at
// once.
func (c *Coordinator) prepareEnd(t *txnMetadata, commit bool, nowMs int64, res *runtime.Result) {
	to := statePrepareAbort
	if commit {
		to = statePrepareCommit
	}
	t.transitionTo(to, nowMs)
	c.write(t, res)
	if len(t.partitions) == 0 {
		c.complete(t, nowMs, res)
		return
	}
	res.Effects = append(res.Effects, c.writeMarkers(t))
}
