package txn

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Verify is the event (runtime.Op.Event) a partition's leader submits
// before it appends the first transactional batch of a producer that has
// no open transaction there: is the partition part of the producer's
// ongoing transaction? Kafka's verification of KIP-890 part 1
// (AddPartitionsToTxn v4 with verify_only): without it, a produce that
// arrives after its transaction ended (a retry, a zombie) would open a
// transaction the coordinator knows nothing of, which nothing would ever
// end, and the partition's last stable offset would stay behind it
// forever (a hanging transaction). Answered with a nil Reply.Err when the
// transaction is Ongoing with this producer id and epoch and holds every
// partition, else with a *VerifyError.
//
// With Add (KIP-890 part 2, transaction version 2), the partitions are
// added to the producer's transaction instead, which starts one if none
// is open, as AddPartitionsToTxn does: a version 2 client sends no
// AddPartitionsToTxn, and its partition leaders (and, for its offsets,
// the group coordinator) add for it.
type Verify struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []base.TopicPartition
	Add             bool
}

// VerifyError is why a Verify failed, with the Kafka error code Kafka's
// coordinator answers a verification with.
type VerifyError struct {
	Code int16
	Msg  string
}

func (e *VerifyError) Error() string { return "txn: verification failed: " + e.Msg }

// verify answers a Verify as Kafka's handleVerifyPartitionsInTransaction,
// or, with Add, as its handleAddPartitionsToTransaction for a version 2
// client.
func (c *Coordinator) verify(ev Verify, nowMs int64, res *runtime.Result) error {
	if ev.Add {
		code := c.add(ev.TransactionalID, ev.ProducerID, ev.ProducerEpoch, ev.Partitions, maxClientVersion, nowMs, res)
		if code == 0 {
			return nil
		}
		return &VerifyError{Code: code, Msg: fmt.Sprintf("adding %v to the transaction of %q: %v", ev.Partitions, ev.TransactionalID, kerr.ErrorForCode(code))}
	}
	t, ok := c.txns[ev.TransactionalID]
	switch {
	case ok && t.movingTo(ev.ProducerID):
		return &VerifyError{Code: kerr.ConcurrentTransactions.Code, Msg: fmt.Sprintf("the transaction of %q is completing", ev.TransactionalID)}
	case !ok || t.producerID != ev.ProducerID:
		return &VerifyError{Code: kerr.InvalidProducerIDMapping.Code, Msg: fmt.Sprintf("transactional id %q does not map to producer %d", ev.TransactionalID, ev.ProducerID)}
	case t.epoch != ev.ProducerEpoch:
		return &VerifyError{Code: kerr.ProducerFenced.Code, Msg: fmt.Sprintf("producer %d epoch %d is not the current epoch %d", ev.ProducerID, ev.ProducerEpoch, t.epoch)}
	case t.state.preparing():
		return &VerifyError{Code: kerr.ConcurrentTransactions.Code, Msg: fmt.Sprintf("the transaction of %q is completing", ev.TransactionalID)}
	case t.state != stateOngoing:
		return &VerifyError{Code: kerr.InvalidTxnState.Code, Msg: fmt.Sprintf("transactional id %q has no ongoing transaction", ev.TransactionalID)}
	}
	for _, tp := range ev.Partitions {
		if _, ok := t.partitions[tp]; !ok {
			return &VerifyError{Code: kerr.InvalidTxnState.Code, Msg: fmt.Sprintf("%v is not part of the ongoing transaction of %q", tp, ev.TransactionalID)}
		}
	}
	return nil
}
