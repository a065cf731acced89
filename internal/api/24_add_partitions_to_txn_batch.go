package api

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/metadata"
)

// addPartitionsBatchVersion is AddPartitionsToTxn's batched form, which
// only brokers send (KIP-890): Transactions[], each with VerifyOnly (a
// verification of part 1) or not (an add for a client of transaction
// version 2). v5 only adds TRANSACTION_ABORTABLE to the client errors and
// is not served.
const addPartitionsBatchVersion int16 = 4

// The coordinator serves the producers' form only (txn.MaxVersions); the
// batched form is translated into it here. A coordinator that learned v4
// itself would be handed requests it must not see twice.
func init() {
	if v := txnMax(24); v != addPartitionsBatchVersion-1 {
		panic(fmt.Sprintf("api: the transaction coordinator serves AddPartitionsToTxn v%d; the batched v%d is translated here, for v%d",
			v, addPartitionsBatchVersion, addPartitionsBatchVersion-1))
	}
}

// batchTxn is the answer of one transaction of a batched
// AddPartitionsToTxn: its partitions, each once in request order, their
// codes, and what fills the codes in (nil: they are final).
type batchTxn struct {
	id    string
	tps   []base.TopicPartition
	codes []int16
	wait  func(ctx context.Context)
}

// handleAddPartitionsToTxnBatch serves AddPartitionsToTxn v4, as Kafka's
// KafkaApis.handleAddPartitionsToTxnRequest does v4+:
//   - only brokers send it: it needs CLUSTER_ACTION on the cluster;
//     refused, the response has CLUSTER_AUTHORIZATION_FAILED as its
//     top-level error and no results (the sender tells its producer
//     INVALID_TXN_STATE). No WRITE on the transactional id or the topics is
//     asked: the partition leader checked its producer's;
//   - each transaction is answered on its own, in request order, each of
//     its partitions once: an empty transactional id is INVALID_REQUEST;
//     when a partition is not in the image (UNKNOWN_TOPIC_OR_PARTITION) or
//     is an internal topic's (INVALID_TOPIC_EXCEPTION; __consumer_offsets
//     is allowed, see batchPartitionCode) nothing is asked and
//     the others are OPERATION_NOT_ATTEMPTED; a transactional id whose
//     __transaction_state partition is not coordinated here is
//     NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while it loads);
//   - VerifyOnly asks the coordinator, partition by partition (txn.Verify,
//     as a partition leader here does), whether it is in the producer's
//     ongoing transaction: 0, or the coordinator's code, which the sender
//     maps for its producer (producerVerifyCode);
//   - otherwise the partitions are added for a client of transaction
//     version 2 (one txn.Verify with Add, as Kafka adds with TV_2 here),
//     which starts its transaction if none is open: every partition gets
//     the coordinator's code.
func (h *Handler) handleAddPartitionsToTxnBatch(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if !h.allowedCluster(req, acl.OpClusterAction) {
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	img := h.opts.Meta.Image()
	txns := make([]*batchTxn, len(r.Transactions))
	waiting := false
	for i, tx := range r.Transactions {
		txns[i] = h.startBatchTxn(img, tx)
		waiting = waiting || txns[i].wait != nil
	}
	answer := func() kmsg.Response {
		resp.Transactions = make([]kmsg.AddPartitionsToTxnResponseTransaction, len(txns))
		for i, bt := range txns {
			resp.Transactions[i] = bt.result()
		}
		return resp
	}
	if !waiting {
		return done(answer())
	}
	return Reply{Wait: func() kmsg.Response {
		// Every transaction was handed to its coordinator already: one
		// after another, the waits take as long as the slowest.
		for _, bt := range txns {
			if bt.wait != nil {
				bt.wait(ctx)
			}
		}
		return answer()
	}}
}

// startBatchTxn checks one transaction of a batched AddPartitionsToTxn
// and hands it to its coordinator.
func (h *Handler) startBatchTxn(img *metadata.Image, tx kmsg.AddPartitionsToTxnRequestTransaction) *batchTxn {
	bt := &batchTxn{id: tx.TransactionalID, tps: batchPartitions(tx.Topics)}
	bt.codes = make([]int16, len(bt.tps))
	if tx.TransactionalID == "" {
		return bt.fill(kerr.InvalidRequest.Code)
	}
	refused := false
	for i, tp := range bt.tps {
		if bt.codes[i] = h.batchPartitionCode(img, tp); bt.codes[i] != 0 {
			refused = true
		}
	}
	if refused {
		for i := range bt.codes {
			if bt.codes[i] == 0 {
				bt.codes[i] = kerr.OperationNotAttempted.Code
			}
		}
		return bt
	}
	p, ok := h.txns.partitionFor(tx.TransactionalID)
	switch {
	case !ok:
		return bt.fill(kerr.NotCoordinator.Code)
	case h.txns.rt == nil:
		return bt.fill(kerr.CoordinatorNotAvailable.Code)
	case tx.VerifyOnly:
		bt.wait = h.startBatchVerify(p, tx, bt)
	default:
		bt.wait = h.startBatchAdd(p, tx, bt)
	}
	return bt
}

// startBatchVerify submits one txn.Verify per partition of bt, so that
// each partition gets its own answer, as in Kafka.
func (h *Handler) startBatchVerify(p int32, tx kmsg.AddPartitionsToTxnRequestTransaction, bt *batchTxn) func(context.Context) {
	answers := make([]chan error, len(bt.tps))
	for i, tp := range bt.tps {
		ch := make(chan error, 1)
		answers[i] = ch
		ev := txn.Verify{TransactionalID: tx.TransactionalID, ProducerID: tx.ProducerID, ProducerEpoch: tx.ProducerEpoch,
			Partitions: []base.TopicPartition{tp}}
		h.txns.rt.SubmitEvent(p, ev, func(err error) { ch <- err })
	}
	return func(ctx context.Context) {
		for i, ch := range answers {
			select {
			case err := <-ch:
				bt.codes[i] = coordinatorVerifyCode(err)
			case <-ctx.Done():
				bt.codes[i] = kerr.CoordinatorNotAvailable.Code // the connection is going away
			}
		}
	}
}

// startBatchAdd submits bt's partitions as one add of a client of
// transaction version 2.
func (h *Handler) startBatchAdd(p int32, tx kmsg.AddPartitionsToTxnRequestTransaction, bt *batchTxn) func(context.Context) {
	ch := make(chan error, 1)
	ev := txn.Verify{TransactionalID: tx.TransactionalID, ProducerID: tx.ProducerID, ProducerEpoch: tx.ProducerEpoch,
		Partitions: bt.tps, Add: true}
	h.txns.rt.SubmitEvent(p, ev, func(err error) { ch <- err })
	return func(ctx context.Context) {
		select {
		case err := <-ch:
			bt.fill(coordinatorVerifyCode(err))
		case <-ctx.Done():
			bt.fill(kerr.CoordinatorNotAvailable.Code) // the connection is going away
		}
	}
}

// batchPartitionCode is txnPartitionCode for a partition a broker sends:
// the group coordinator of a version 2 client's TxnOffsetCommit adds the
// group's __consumer_offsets partition, the one internal topic allowed.
func (h *Handler) batchPartitionCode(img *metadata.Image, tp base.TopicPartition) int16 {
	code := txnPartitionCode(img, nil, tp.Topic, tp.Partition)
	if code == kerr.InvalidTopicException.Code && tp.Topic == h.groups.topic {
		return 0
	}
	return code
}

// fill gives every partition of bt code.
func (bt *batchTxn) fill(code int16) *batchTxn {
	for i := range bt.codes {
		bt.codes[i] = code
	}
	return bt
}

// result is bt's answer, its partitions grouped by topic in request order.
func (bt *batchTxn) result() kmsg.AddPartitionsToTxnResponseTransaction {
	out := kmsg.NewAddPartitionsToTxnResponseTransaction()
	out.TransactionalID = bt.id
	topicIndex := map[string]int{}
	for i, tp := range bt.tps {
		j, ok := topicIndex[tp.Topic]
		if !ok {
			j = len(out.Topics)
			topicIndex[tp.Topic] = j
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = tp.Topic
			out.Topics = append(out.Topics, rt)
		}
		rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
		rp.Partition, rp.ErrorCode = tp.Partition, bt.codes[i]
		out.Topics[j].Partitions = append(out.Topics[j].Partitions, rp)
	}
	return out
}

// batchPartitions are the partitions of a transaction of a batched
// AddPartitionsToTxn, each once, in request order.
func batchPartitions(topics []kmsg.AddPartitionsToTxnRequestTransactionTopic) []base.TopicPartition {
	var out []base.TopicPartition
	seen := map[base.TopicPartition]bool{}
	for _, t := range topics {
		for _, p := range t.Partitions {
			tp := base.TopicPartition{Topic: t.Topic, Partition: p}
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	return out
}
