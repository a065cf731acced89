package txn

import (
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// producer is a producer id and epoch a client presents (KIP-360).
type producer struct {
	id    int64
	epoch int16
}

// initProducerID is Kafka's handleInitProducerId for a transactional id,
// with KafkaApis's checks of the request and its version mapping of
// PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v4).
func (c *Coordinator) initProducerID(req *kmsg.InitProducerIDRequest, nowMs int64, res *runtime.Result) kmsg.Response {
	if req.TransactionalID == nil {
		panic("txn: InitProducerId without a transactional id (the api layer serves idempotent producers)")
	}
	pid, epoch, code := c.initProducer(req, nowMs, res)
	if code != 0 {
		return initError(req, fencedFor(code, req.Version, 4))
	}
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = pid, epoch
	return resp
}

func (c *Coordinator) initProducer(req *kmsg.InitProducerIDRequest, nowMs int64, res *runtime.Result) (int64, int16, int16) {
	expected, code := expectedProducer(req)
	if code != 0 {
		return 0, 0, code
	}
	id := *req.TransactionalID
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	switch {
	case id == "":
		return 0, 0, kerr.InvalidRequest.Code
	case req.TransactionTimeoutMillis <= 0 || timeout > c.opts.MaxTimeout:
		return 0, 0, kerr.InvalidTransactionTimeout.Code
	}
	t, ok := c.txns[id]
	if !ok {
		return c.initNew(id, timeout, nowMs, res)
	}
	// Kafka checks the pending transition first: a transaction whose
	// markers are being written answers every InitProducerId this way.
	if t.state.preparing() {
		return 0, 0, kerr.ConcurrentTransactions.Code
	}
	if expected.ok && !validExpected(t, expected.v) {
		return 0, 0, kerr.ProducerFenced.Code
	}
	switch t.state {
	case stateOngoing:
		// Abort the open transaction with a bumped epoch, which fences
		// its producer; the client retries and then gets a second bump
		// (or a new producer id if the fence exhausted the epochs).
		c.fence(t, nowMs, res)
		return 0, 0, kerr.ConcurrentTransactions.Code
	case stateEmpty, stateCompleteCommit, stateCompleteAbort:
		if code := c.reinit(t, expected, timeout, nowMs); code != 0 {
			return 0, 0, code
		}
		c.write(t, res)
		return t.producerID, t.epoch, 0
	}
	panic(fmt.Sprintf("txn: transactional id %q held in state %v", t.id, t.state))
}

// expectedProducer reads the KIP-360 producer id and epoch of v3+: both
// absent (-1) or both present, else INVALID_REQUEST (KafkaApis's check).
func expectedProducer(req *kmsg.InitProducerIDRequest) (optional[producer], int16) {
	if req.Version < 3 {
		return optional[producer]{}, 0
	}
	switch {
	case req.ProducerID == -1 && req.ProducerEpoch == -1:
		return optional[producer]{}, 0
	case req.ProducerID == -1 || req.ProducerEpoch == -1:
		return optional[producer]{}, kerr.InvalidRequest.Code
	}
	return some(producer{id: req.ProducerID, epoch: req.ProducerEpoch}), 0
}

// validExpected is Kafka's isValidProducerId for an existing id: the
// presented producer id is the current one, or the previous one with an
// exhausted epoch (a retry of the InitProducerId that rotated the id).
func validExpected(t *txnMetadata, p producer) bool {
	return p.id == t.producerID ||
		(t.lastProducerID.ok && p.id == t.lastProducerID.v && isEpochExhausted(p.epoch))
}

// initNew creates the id with a new producer id at epoch 0.
func (c *Coordinator) initNew(id string, timeout time.Duration, nowMs int64, res *runtime.Result) (int64, int16, int16) {
	pid, ok := c.nextProducerID()
	if !ok {
		return 0, 0, kerr.CoordinatorNotAvailable.Code
	}
	t := &txnMetadata{
		id:             id,
		producerID:     pid,
		lastProducerID: some(pid),
		timeout:        timeout,
		state:          stateEmpty,
		partitions:     map[base.TopicPartition]struct{}{},
		lastUpdateMs:   nowMs,
	}
	c.txns[id] = t
	c.write(t, res)
	return pid, 0, 0
}

// reinit moves an idle transactional id to Empty with a bumped epoch, or a
// new producer id when the epochs are exhausted (Kafka's
// prepareIncrementProducerEpoch and prepareProducerIdRotation). On an error
// t is unchanged.
func (c *Coordinator) reinit(t *txnMetadata, expected optional[producer], timeout time.Duration, nowMs int64) int16 {
	if isEpochExhausted(t.epoch) && (!expected.ok || expected.v.epoch == t.epoch) {
		pid, ok := c.nextProducerID()
		if !ok {
			return kerr.CoordinatorNotAvailable.Code
		}
		lastEpoch := optional[int16]{}
		if expected.ok {
			lastEpoch = some(t.epoch)
		}
		t.lastProducerID, t.producerID = some(t.producerID), pid
		t.epoch, t.lastEpoch = 0, lastEpoch
	} else {
		epoch, lastEpoch, code := nextEpoch(t, expected)
		if code != 0 {
			return code
		}
		t.lastProducerID = some(t.producerID)
		t.epoch, t.lastEpoch = epoch, lastEpoch
	}
	t.timeout = timeout
	t.startMs = optional[int64]{}
	t.transitionTo(stateEmpty, nowMs)
	return 0
}

// nextEpoch is the epoch step of prepareIncrementProducerEpoch: no
// expectation bumps; the current epoch bumps and remembers it; the last
// epoch is a retry of a bump whose answer was lost and bumps nothing; any
// other epoch is fenced. The caller rotates the producer id instead of
// bumping an exhausted epoch.
func nextEpoch(t *txnMetadata, expected optional[producer]) (int16, optional[int16], int16) {
	switch {
	case !expected.ok:
		return bump(t), optional[int16]{}, 0
	case expected.v.epoch == t.epoch:
		return bump(t), some(t.epoch), 0
	case t.lastEpoch.ok && expected.v.epoch == t.lastEpoch.v:
		return t.epoch, t.lastEpoch, 0
	}
	return 0, optional[int16]{}, kerr.ProducerFenced.Code
}

func bump(t *txnMetadata) int16 {
	if t.epoch >= math.MaxInt16-1 {
		panic(fmt.Sprintf("txn: bump of the exhausted epoch %d of %q", t.epoch, t.id))
	}
	return t.epoch + 1
}

// nextProducerID asks the allocator; false means it failed (retriable).
func (c *Coordinator) nextProducerID() (int64, bool) {
	pid, err := c.opts.NextProducerID()
	if err != nil {
		return 0, false
	}
	if pid < 0 {
		panic(fmt.Sprintf("txn: Options.NextProducerID returned %d", pid))
	}
	return pid, true
}
