package api

import (
	"context"
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

// partitionRef is a partition of a produce request by position: topic i,
// partition j.
type partitionRef struct{ topic, partition int }

// txnChecks is what a produce's transactional batches need before they
// are appended: partitions refused outright (code by partition), and
// those whose producer opens a transaction there, to verify with the
// coordinator, or, for a client of transaction version 2 (add), to add
// to its transaction.
type txnChecks struct {
	refused map[partitionRef]int16
	verify  []txnVerify
	pid     int64
	epoch   int16
	add     bool
}

// txnVerify is one partition to verify, and the guard its append must
// present (verifyTransactional takes it).
type txnVerify struct {
	ref   partitionRef
	tp    base.TopicPartition
	part  *partition.Partition
	guard partition.VerificationGuard
}

// transactionalChecks finds the partitions of r whose batch is
// transactional. As in Kafka, transactional records without a
// transactional id are refused (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
// a batch whose producer has no open transaction on its partition would
// open one, so it is verified first (KIP-890 part 1), or, from Produce
// v12 on with transaction.version 2 finalized (whose clients send no
// AddPartitionsToTxn), added to the producer's transaction. Partitions
// that do not exist are left to the produce path, which answers them;
// those in denied (the authorizer's refusals) are refused with their
// code, unasked.
func (h *Handler) transactionalChecks(r *kmsg.ProduceRequest, img *metadata.Image, byID bool, denied map[partitionRef]int16) txnChecks {
	c := txnChecks{refused: denied, add: r.Version >= produceAddsVersion && transactionsV2(img)}
	for i, rt := range r.Topics {
		t := lookupTopic(img, rt.Topic, rt.TopicID, byID)
		for j, rp := range rt.Partitions {
			hd, err := record.ParseHeader(rp.Records)
			if err != nil || !hd.Transactional() || hd.Control() {
				continue // the produce path validates and answers it
			}
			ref := partitionRef{i, j}
			if _, no := denied[ref]; no {
				continue // refused already: no verification
			}
			if r.TransactionID == nil {
				if c.refused == nil {
					c.refused = map[partitionRef]int16{}
				}
				c.refused[ref] = kerr.TransactionalIDAuthorizationFailed.Code
				continue
			}
			if t == nil {
				continue
			}
			tp := base.TopicPartition{Topic: t.Name, Partition: rp.Partition}
			p, ok := h.opts.Broker.Partition(tp)
			if !ok || p.HasOpenTxn(base.ProducerID(hd.ProducerID), hd.ProducerEpoch) {
				continue
			}
			c.pid, c.epoch = hd.ProducerID, hd.ProducerEpoch
			c.verify = append(c.verify, txnVerify{ref: ref, tp: tp, part: p})
		}
	}
	return c
}

// verifyTransactional asks the transactional id's coordinator about every
// partition of c.verify (askTxnCoordinator) and adds the refused ones to
// c.refused with the code a producer is told. A partition verified
// (transaction version 1) gets a verification guard first: if the
// transaction ends (its marker is written there) between the
// coordinator's answer and the append, the append is refused instead of
// opening a transaction nothing ends. One added (version 2) needs none:
// its transaction's end bumps the producer epoch into its markers, which
// fences the batch. And it could not have one: the coordinator answers an
// add only once the previous transaction is complete, retried meanwhile
// (askTxnCoordinator), and that transaction's markers would take the
// guard of the next one.
func (h *Handler) verifyTransactional(ctx context.Context, r *kmsg.ProduceRequest, c *txnChecks) {
	for i := range c.verify {
		if !c.add {
			c.verify[i].guard = c.verify[i].part.StartVerification(base.ProducerID(c.pid))
		}
	}
	codes := h.askTxnCoordinator(ctx, *r.TransactionID, verifyPeerTimeout(r.TimeoutMillis), c)
	for i, v := range c.verify {
		if codes[i] == 0 {
			continue
		}
		if v.guard != 0 {
			v.part.AbandonVerification(base.ProducerID(c.pid), v.guard)
		}
		if c.refused == nil {
			c.refused = map[partitionRef]int16{}
		}
		c.refused[v.ref] = producerVerifyCode(codes[i])
	}
}

// guards are the verification guards of the partitions c verified, for
// their appends.
func (c *txnChecks) guards() map[partitionRef]partition.VerificationGuard {
	var out map[partitionRef]partition.VerificationGuard
	for _, v := range c.verify {
		if v.guard == 0 {
			continue
		}
		if out == nil {
			out = map[partitionRef]partition.VerificationGuard{}
		}
		out[v.ref] = v.guard
	}
	return out
}

// verifyLocally asks the coordinator here about every partition of
// c.verify, in parallel, and returns each one's code (NOT_ENOUGH_REPLICAS
// when it cannot be asked).
func (h *Handler) verifyLocally(ctx context.Context, id string, c *txnChecks) []int16 {
	codes := make([]int16, len(c.verify))
	p, ok := h.txns.partitionFor(id)
	if !ok || h.txns.rt == nil {
		for i := range codes {
			codes[i] = kerr.NotEnoughReplicas.Code
		}
		return codes
	}
	var wg sync.WaitGroup
	for i, v := range c.verify {
		ev := txn.Verify{TransactionalID: id, ProducerID: c.pid, ProducerEpoch: c.epoch, Partitions: []base.TopicPartition{v.tp}, Add: c.add}
		done := make(chan error, 1)
		h.txns.rt.SubmitEvent(p, ev, func(err error) { done <- err })
		wg.Go(func() {
			select {
			case err := <-done:
				codes[i] = coordinatorVerifyCode(err)
			case <-ctx.Done():
				codes[i] = kerr.NotEnoughReplicas.Code
			}
		})
	}
	wg.Wait()
	return codes
}

// coordinatorVerifyCode is the Kafka code of the coordinator's answer to a
// txn.Verify, as Kafka's coordinator answers a verification
// (AddPartitionsToTxn v4 with VerifyOnly puts it on the wire).
func coordinatorVerifyCode(err error) int16 {
	var ve *txn.VerifyError
	var ce *runtime.CodeError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ve):
		return ve.Code
	case errors.As(err, &ce):
		return ce.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

// producerVerifyCode is what a producer is told when its partition's
// verification failed with the coordinator's code, as Kafka's
// ReplicaManager and AddPartitionsToTxnManager map it: the coordinator
// being unavailable, unreachable or busy completing the previous
// transaction is NOT_ENOUGH_REPLICAS, which every client retries; a fenced
// epoch is INVALID_PRODUCER_EPOCH as from a partition.
func producerVerifyCode(code int16) int16 {
	switch code {
	case kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code,
		kerr.ConcurrentTransactions.Code, kerr.NetworkException.Code, kerr.RequestTimedOut.Code,
		kerr.OperationNotAttempted.Code:
		return kerr.NotEnoughReplicas.Code
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}
