package txn

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// endTxnV2Version is the first EndTxn version of transaction version 2
// (KIP-890 part 2): the end bumps the producer epoch, and the response
// carries the producer id and epoch of the next transaction.
const endTxnV2Version = 5

// endTxn is Kafka's handleEndTransaction: the answer comes once the
// Prepare record is durable; the markers are written afterwards
// (WriteMarkers, then MarkersWritten).
func (c *Coordinator) endTxn(req *kmsg.EndTxnRequest, nowMs int64, res *runtime.Result) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	code, next := c.end(req, nowMs, res)
	resp.ErrorCode = fencedFor(code, req.Version, 2)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if code == 0 {
		resp.ProducerID, resp.ProducerEpoch = next.id, next.epoch
	}
	return resp
}

// end decides an EndTxn (endDecision) and acts on it; next is the producer
// id and epoch the client goes on with.
func (c *Coordinator) end(req *kmsg.EndTxnRequest, nowMs int64, res *runtime.Result) (int16, producer) {
	if req.TransactionalID == "" {
		return kerr.InvalidRequest.Code, producer{}
	}
	t, ok := c.txns[req.TransactionalID]
	if !ok {
		return kerr.InvalidProducerIDMapping.Code, producer{}
	}
	v2 := req.Version >= endTxnV2Version
	d := endDecision(t, producer{id: req.ProducerID, epoch: req.ProducerEpoch}, req.Commit, v2)
	switch d.action {
	case endRefuse:
		return d.code, producer{}
	case endDone:
		return 0, t.nextProducer()
	}
	var next optional[int64]
	if v2 && isEpochExhausted(t.epoch) {
		pid, ok := c.nextProducerID()
		if !ok {
			return kerr.CoordinatorNotAvailable.Code, producer{}
		}
		next = some(pid)
	}
	clientVersion := int16(0)
	if v2 {
		clientVersion = maxClientVersion
	}
	c.prepareEnd(t, req.Commit, endStep{bump: v2, next: next, clientVersion: clientVersion, nothingAdded: d.nothingAdded}, nowMs, res)
	return 0, t.nextProducer()
}

// endAction is what an EndTxn does with its transaction.
type endAction int8

const (
	endRefuse  endAction = iota // answer the code, write nothing
	endDone                     // the outcome asked for is already there: no error, write nothing
	endPrepare                  // move to Prepare* and write the markers
)

type endVerdict struct {
	action endAction
	code   int16
	// nothingAdded: a version 2 abort of a transaction that added no
	// partition (from Empty or Complete*), which only bumps the epoch.
	nothingAdded bool
}

func refuseEnd(code int16) endVerdict { return endVerdict{action: endRefuse, code: code} }

// endDecision is Kafka's EndTxn table for producer p ending t with commit
// (else abort), in transaction version 2 when v2 (EndTxn v5+) else 1.
// Version 1 needs the current producer id and epoch: the outcome of an
// Ongoing transaction is prepared, a repeat of the completed outcome is
// done, and any end waits while markers are written
// (CONCURRENT_TRANSACTIONS). Version 2 bumps the epoch at every end, so a retry presents the epoch
// before the bump (or, when that end moved the producer to a new id, the
// last epoch of the old id): a retry of the completed outcome is done; any
// end of the producer while markers are written waits; an abort at the current epoch of a
// transaction that added nothing is accepted and bumps the epoch (how a
// client fences itself after a failure it cannot classify).
func endDecision(t *txnMetadata, p producer, commit, v2 bool) endVerdict {
	if !v2 {
		switch {
		case t.producerID != p.id:
			return refuseEnd(kerr.InvalidProducerIDMapping.Code)
		case t.epoch != p.epoch:
			return refuseEnd(kerr.ProducerFenced.Code)
		}
		return endByState(t.state, commit, true, false)
	}
	if t.state.preparing() && (t.producerID == p.id || t.movingTo(p.id)) {
		// The markers of the last end are being written. The client's next
		// end (at the epoch that end gave it, or the next producer id)
		// waits for them rather than being fenced, as Kafka since
		// KAFKA-18464 checks the pending transition before the epoch; an
		// end at an older epoch is fenced once they are written.
		return refuseEnd(kerr.ConcurrentTransactions.Code)
	}
	retryOnBump := t.producerID == p.id && t.epoch == p.epoch+1
	retryOnRotation := t.lastProducerID.ok && t.lastProducerID.v == p.id && t.producerID != p.id &&
		p.epoch == math.MaxInt16-1 && t.epoch == 0
	if t.producerID != p.id && !retryOnRotation {
		return refuseEnd(kerr.InvalidProducerIDMapping.Code)
	}
	current := t.producerID == p.id && t.epoch == p.epoch
	var valid bool
	switch t.state {
	case stateOngoing, stateEmpty:
		valid = current
	default: // Complete*
		valid = current || retryOnBump || retryOnRotation
	}
	if !valid {
		return refuseEnd(kerr.ProducerFenced.Code)
	}
	return endByState(t.state, commit, retryOnBump || retryOnRotation, true)
}

// endByState is the state table of endDecision once the producer passed:
// retry is whether the request repeats an end that happened (always true
// in version 1, where the epoch does not move).
func endByState(s txnState, commit, retry, v2 bool) endVerdict {
	sameOutcome := commit == (s == stateCompleteCommit)
	switch s {
	case stateOngoing:
		return endVerdict{action: endPrepare}
	case statePrepareCommit, statePrepareAbort:
		// Kafka's pending Complete* transition: the same outcome is
		// retried, and the other one waits too.
		return refuseEnd(kerr.ConcurrentTransactions.Code)
	case stateCompleteCommit, stateCompleteAbort:
		switch {
		case sameOutcome && retry:
			return endVerdict{action: endDone}
		case v2 && !commit && !retry:
			return endVerdict{action: endPrepare, nothingAdded: true}
		}
	case stateEmpty:
		if v2 && !commit {
			return endVerdict{action: endPrepare, nothingAdded: true}
		}
	default:
		panic(fmt.Sprintf("txn: EndTxn of a transaction held in state %v", s))
	}
	return refuseEnd(kerr.InvalidTxnState.Code)
}

// nextProducer is the producer id and epoch t's client goes on with: the
// next producer id at epoch 0 while an end moves it there, else the
// current ones.
func (t *txnMetadata) nextProducer() producer {
	if t.nextProducerID.ok {
		return producer{id: t.nextProducerID.v, epoch: 0}
	}
	return producer{id: t.producerID, epoch: t.epoch}
}

// fence bumps the epoch of an Ongoing transaction, so that its producer is
// fenced, and aborts it (Kafka's prepareFenceProducerEpoch followed by the
// abort from PrepareEpochFence): an InitProducerId of a new instance, or a
// timeout. The fence is the one bump of such an end, in either version.
func (c *Coordinator) fence(t *txnMetadata, nowMs int64, res *runtime.Result) {
	if t.epoch == math.MaxInt16 {
		panic(fmt.Sprintf("txn: fence of %q at epoch %d", t.id, t.epoch))
	}
	// Kafka's transient PrepareEpochFence: never written, never held
	// across ops; the table allows PrepareAbort only after it or Ongoing.
	t.transitionTo(statePrepareEpochFence, nowMs)
	t.epoch++
	t.lastEpoch = optional[int16]{}
	c.prepareEnd(t, false, endStep{clientVersion: t.clientVersion}, nowMs, res)
}

// endStep is how an end moves the producer: bump the epoch (version 2),
// to a next producer id once the markers are written (a version 2 end
// from the last epoch), with the client's transaction version; an end of
// a transaction that added nothing starts it now, with no partitions.
type endStep struct {
	bump          bool
	next          optional[int64]
	clientVersion int16
	nothingAdded  bool
}

// prepareEnd moves a transaction to PrepareCommit or PrepareAbort (Kafka's
// prepareAbortOrCommit) and asks for its markers; without partitions it
// completes at once.
func (c *Coordinator) prepareEnd(t *txnMetadata, commit bool, step endStep, nowMs int64, res *runtime.Result) {
	to := statePrepareAbort
	if commit {
		to = statePrepareCommit
	}
	if step.bump {
		t.epoch++
		t.nextProducerID = step.next
	}
	if step.nothingAdded {
		t.startMs = some(nowMs)
	}
	t.clientVersion = step.clientVersion
	t.transitionTo(to, nowMs)
	c.write(t, res)
	if len(t.partitions) == 0 {
		c.complete(t, nowMs, res)
		return
	}
	res.Effects = append(res.Effects, c.writeMarkers(t))
}
