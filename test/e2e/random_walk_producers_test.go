package e2e

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnWalker is a transactional producer: it gets a producer id for its
// transactional id, adds partitions, produces transactional batches, adds
// a group's offsets, commits them in the transaction and ends it, commit
// or abort. Two walkers on one transactional id fence each other.
type txnWalker struct {
	txnID string
	producerSequences
	// pending are the values this transaction appended for sure: once
	// an EndTxn (as meant) is answered cleanly they must be visible to
	// read_committed consumers (commit) or never (abort). A new producer
	// epoch forgets them: the transaction was aborted or not, unknown.
	pending []string
	// pendingChurn are the values it appended to the churn topic: an
	// acknowledged abort makes them must-never-be-visible too.
	pendingChurn []string
	// added are the walk topic's partitions, and churnAdded whether
	// partition 0 of the churn topic, that an AddPartitionsToTxn of this
	// transaction named and was answered cleanly for. Only what is
	// appended there is tracked: that answer comes once the previous
	// transaction's markers are written, and a produce before it (to a
	// partition the previous transaction still held) joins the previous
	// transaction, as in Kafka.
	added      [walkPartitions]bool
	churnAdded bool
	next       int
	// group is the group whose offsets the transactions commit. It has
	// no members, so a mutated request of another walker may make it a
	// group of another type (a ShareGroupHeartbeat naming it makes it a
	// share group), whose offsets no transaction may commit
	// (GROUP_ID_NOT_FOUND): the walker then moves to a group of a new
	// name (moves counts them), as an operator would.
	group string
	moves int
}

// walkInitRetries bounds the retries of one InitProducerID step.
const walkInitRetries = 5

const (
	txnInit = iota
	txnAddPartitions
	txnProduce
	txnAddOffsets
	txnCommitOffsets
	txnEnd
	txnDescribe
	txnProduceChurn
	txnSteps
)

func (p *txnWalker) step(w *walker) {
	switch w.pick(p.next, txnSteps) {
	case txnInit:
		p.pending, p.pendingChurn, p.added, p.churnAdded = nil, nil, [walkPartitions]bool{}, false
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &p.txnID, int32(500+w.rng.IntN(3000))
		req.ProducerID, req.ProducerEpoch = p.id, p.epoch // KIP-360: bump the epoch it has
		// A client retries its InitProducerID within one call while the
		// coordinator ends the id's previous transaction; so does the
		// walker, rather than spend its steps on it.
		resp, ok := w.send(req).(*kmsg.InitProducerIDResponse)
		for retries := 0; ok && saysRetryLater(resp) && retries < walkInitRetries; retries++ {
			resp, ok = w.send(req).(*kmsg.InitProducerIDResponse)
		}
		switch {
		case !ok || saysRetryLater(resp):
		case resp.ErrorCode == 0:
			p.restart(resp.ProducerID, resp.ProducerEpoch)
			p.next = txnAddPartitions
		default: // fenced by the other walker on the id: start over, as a new client would
			p.restart(-1, -1)
		}
	case txnAddPartitions:
		p.addPartitions(w)
	case txnProduce:
		code, appended, partition := p.produce(w, &p.txnID)
		if p.added[partition] {
			p.pending = append(p.pending, appended...)
		}
		// Two in five go on to the offsets: of the walkers' few clean
		// produces, one in four left a run of the cluster test with no
		// AddOffsetsToTxn answered cleanly (two walkers fencing each
		// other on one id end most transactions early).
		next := []int{txnProduce, txnProduce, txnAddOffsets, txnAddOffsets, txnEnd}[w.rng.IntN(5)]
		if p.churnAdded && w.oneIn(3) {
			next = txnProduceChurn
		}
		p.after(w, code, next)
	case txnAddOffsets:
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = p.txnID, p.id, p.epoch, p.group
		if resp, ok := w.send(req).(*kmsg.AddOffsetsToTxnResponse); ok {
			p.after(w, resp.ErrorCode, txnCommitOffsets)
		}
	case txnCommitOffsets:
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = p.txnID, p.group, p.id, p.epoch
		req.Generation = -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = walkTopic, w.env.topicID
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = int32(w.rng.IntN(walkPartitions)), w.rng.Int64N(20)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if resp, ok := w.send(req).(*kmsg.TxnOffsetCommitResponse); ok && len(resp.Topics) > 0 && len(resp.Topics[0].Partitions) > 0 {
			code := resp.Topics[0].Partitions[0].ErrorCode
			p.after(w, code, txnEnd)
			if code == kerr.GroupIDNotFound.Code && !w.mutated {
				p.moves++
				p.group = fmt.Sprintf("%s-%d", walkTxnGroup, p.moves)
				p.next = txnAddOffsets // the new group's partition joins the transaction first
			}
		}
	case txnEnd:
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.txnID, p.id, p.epoch, !w.oneIn(3)
		resp, ok := w.send(req).(*kmsg.EndTxnResponse)
		switch {
		case !ok:
			return
		case resp.ErrorCode == 0 && w.mutated:
			p.pending, p.pendingChurn = nil, nil // it may have ended another transaction
		case resp.ErrorCode == 0 && req.Commit:
			w.env.ledger.mustSee(p.pending)
			p.pending, p.pendingChurn = nil, nil
		case resp.ErrorCode == 0:
			w.env.ledger.mustNotSee(p.pending)
			w.env.ledger.mustNotSee(p.pendingChurn)
			p.pending, p.pendingChurn = nil, nil
		}
		if resp.ErrorCode == 0 {
			p.added, p.churnAdded = [walkPartitions]bool{}, false
		}
		if resp.ErrorCode == 0 && req.Version >= 5 && resp.ProducerEpoch > p.epoch {
			p.restart(resp.ProducerID, resp.ProducerEpoch) // KIP-890: a new epoch per transaction
		}
		p.after(w, resp.ErrorCode, txnAddPartitions)
	case txnProduceChurn:
		p.next = txnProduce // whatever the churn topic's state
		code, appended := p.produceChurn(w, &p.txnID)
		if p.churnAdded {
			p.pendingChurn = append(p.pendingChurn, appended...)
		}
		p.after(w, code, txnProduce)
	case txnDescribe:
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{p.txnID}
		w.send(req)
	}
}

// addPartitions adds one or two partitions of the walk topic to the
// transaction, in the clients' form (v3 and older) and the brokers' (v4+).
func (p *txnWalker) addPartitions(w *walker) {
	parts := []int32{int32(w.rng.IntN(walkPartitions))}
	if w.oneIn(2) {
		parts = []int32{0, 1, 2}
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.txnID, p.id, p.epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = walkTopic, parts
	req.Topics = append(req.Topics, rt)
	if w.oneIn(4) {
		churn := kmsg.NewAddPartitionsToTxnRequestTopic()
		churn.Topic, churn.Partitions = walkChurn, []int32{0}
		req.Topics = append(req.Topics, churn)
	}
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch = p.txnID, p.id, p.epoch
	tx.VerifyOnly = p.verifyOnly(w, parts, len(req.Topics) > 1)
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = walkTopic, parts
	tx.Topics = append(tx.Topics, tt)
	for _, churn := range req.Topics[1:] {
		ct := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		ct.Topic, ct.Partitions = churn.Topic, churn.Partitions
		tx.Topics = append(tx.Topics, ct)
	}
	req.Transactions = append(req.Transactions, tx)
	resp, ok := w.send(req).(*kmsg.AddPartitionsToTxnResponse)
	if !ok {
		return
	}
	code := addPartitionsCode(resp)
	if code == 0 && !w.mutated {
		for _, q := range parts {
			p.added[q] = true
		}
		p.churnAdded = p.churnAdded || len(req.Topics) > 1
	}
	// One in three adds the group's offsets before it produces, as a
	// consume-transform-produce loop may: with the walkers fencing each
	// other, few transactions live long enough to reach them otherwise.
	next := txnProduce
	if w.oneIn(3) {
		next = txnAddOffsets
	}
	p.after(w, code, next)
}

// addPartitionsCode is the error code of an AddPartitionsToTxn answer:
// the request's, or the first partition's, the one that made the others
// OPERATION_NOT_ATTEMPTED if any, which v3 and older answer in Topics and
// v4+ per transaction (walk seed 7030: a v4 answer refusing
// every partition was taken for a clean one, and the records produced
// next, which joined the transaction that was still ending, were tracked
// as the aborted next one's).
func addPartitionsCode(resp *kmsg.AddPartitionsToTxnResponse) int16 {
	code := resp.ErrorCode
	worse := func(c int16) {
		if c != 0 && (code == 0 || code == kerr.OperationNotAttempted.Code) {
			code = c
		}
	}
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			worse(rp.ErrorCode)
		}
	}
	for _, tx := range resp.Transactions {
		for _, t := range tx.Topics {
			for _, rp := range t.Partitions {
				worse(rp.ErrorCode)
			}
		}
	}
	return code
}

// verifyOnly picks whether a brokers' AddPartitionsToTxn only asks if
// the partitions are in the transaction, as a partition leader does
// before it appends (KIP-890): mostly for partitions this transaction
// added, whose answer is clean, and now and then for others, answered
// INVALID_TXN_STATE, which ends the walker's transaction.
func (p *txnWalker) verifyOnly(w *walker, parts []int32, churn bool) bool {
	added := !churn || p.churnAdded
	for _, q := range parts {
		added = added && p.added[q]
	}
	if added {
		return w.oneIn(2)
	}
	return w.oneIn(8)
}

// after moves the producer on after an answer: to next when it was clean,
// to a new producer epoch when it was fenced or lost its producer state,
// to aborting when the transaction cannot go on, or the same step again.
func (p *txnWalker) after(w *walker, code int16, next int) {
	switch kerr.ErrorForCode(code) {
	case nil:
		p.next = next
	case kerr.ProducerFenced, kerr.InvalidProducerEpoch, kerr.InvalidProducerIDMapping, kerr.UnknownProducerID,
		kerr.InvalidTxnState, kerr.TransactionalIDNotFound:
		p.next = txnInit
	case kerr.OutOfOrderSequenceNumber, kerr.TransactionAbortable:
		p.next = txnEnd
	}
}

// idempotentWalker produces with sequence numbers: now and then it
// sends a batch again (a duplicate) or skips sequence numbers (out of
// order), and bumps its epoch when the broker says its sequence is off.
type idempotentWalker struct {
	producerSequences
	next int
}

const (
	idempotentInit = iota
	idempotentProduce
	idempotentSteps
)

func (p *idempotentWalker) step(w *walker) {
	switch w.pick(p.next, idempotentSteps) {
	case idempotentInit:
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = -1, p.id, p.epoch
		if resp, ok := w.send(req).(*kmsg.InitProducerIDResponse); ok && resp.ErrorCode == 0 {
			p.restart(resp.ProducerID, resp.ProducerEpoch)
			p.next = idempotentProduce
		}
	case idempotentProduce:
		code, appended, _ := p.produce(w, nil)
		w.env.ledger.mustSee(appended)
		switch kerr.ErrorForCode(code) {
		case kerr.OutOfOrderSequenceNumber, kerr.UnknownProducerID, kerr.InvalidProducerEpoch, kerr.ProducerFenced:
			p.next = idempotentInit
		}
	}
}

// producerSequences is a producer id and epoch with the next sequence
// number of each partition of the walk topic.
type producerSequences struct {
	id    int64
	epoch int16
	seq   [walkPartitions]int32
	last  [walkPartitions][]byte // the partition's last batch, to send again
	// lastValues are the values of last.
	lastValues [walkPartitions][]string
	init       bool
	// tainted is set when a batch may have been appended without the
	// sequence numbers above knowing (its request mutated or unanswered):
	// a new batch could then be taken for a duplicate and dropped, so its
	// records are not tracked until the next epoch.
	tainted  bool
	batches  int   // batches made, to make every record's value unique
	churnSeq int32 // the next sequence number in the churn topic
}

func (s *producerSequences) restart(id int64, epoch int16) {
	s.id, s.epoch, s.init, s.tainted, s.churnSeq = id, epoch, true, false, 0
	s.seq = [walkPartitions]int32{}
	s.last = [walkPartitions][]byte{}
	s.lastValues = [walkPartitions][]string{}
}

// produce sends a batch of one to three records (transactional when
// txnID is set) with acks=all to a random partition and returns the
// partition's error code, or -1 with no answer, and the values of the
// records it appended for sure (none unless the answer was clean and the
// request was what it meant). Now and then the batch is the last one
// again, or starts past the next sequence number.
func (s *producerSequences) produce(w *walker, txnID *string) (int16, []string, int32) {
	if !s.init {
		s.id, s.epoch, s.init = -1, -1, true
	}
	p := int32(w.rng.IntN(walkPartitions))
	seq := s.seq[p]
	if w.oneIn(10) {
		seq += int32(1 + w.rng.IntN(5))
	}
	s.batches++
	values := make([]string, 1+w.rng.IntN(3))
	for i := range values {
		values[i] = fmt.Sprintf("%s batch %d record %d", w.name, s.batches, i) + strings.Repeat(".", w.env.pad)
	}
	batch := producerBatch(time.Now(), s.id, s.epoch, seq, txnID != nil, values)
	resent := s.last[p] != nil && w.oneIn(10)
	if resent {
		batch = s.last[p]
	}
	w.env.journal(w.name, fmt.Sprintf("batch %d: partition %d, producer %d epoch %d seq %d, resent %v, tainted %v", s.batches, p, s.id, s.epoch, seq, resent, s.tainted))
	code, answered := sendProduce(w, txnID, walkTopic, w.env.topicID, p, batch)
	if w.mutated || !answered {
		s.tainted = true
	}
	if resent && w.mutated {
		// Its partition or producer may have changed: the tracked
		// records may now be in the log twice, or in another partition.
		w.env.ledger.untrack(s.lastValues[p])
	}
	if code != 0 || resent || seq != s.seq[p] {
		return code, nil, p
	}
	s.seq[p] += int32(len(values))
	s.last[p], s.lastValues[p] = batch, values
	if s.tainted {
		return code, nil, p
	}
	return code, values, p
}

// produceChurn sends a batch of one record to partition 0 of the churn
// topic, which the admin walker creates and deletes: a transaction may
// hold a partition of a topic deleted (and created again) under it. It
// returns the error code and the record's value when it was appended for
// sure: the topic may be deleted, so only an abort can be checked (its
// records must not be read).
func (s *producerSequences) produceChurn(w *walker, txnID *string) (int16, []string) {
	s.batches++
	value := fmt.Sprintf("%s batch %d churn", w.name, s.batches)
	w.env.journal(w.name, fmt.Sprintf("batch %d: churn partition 0, producer %d epoch %d seq %d", s.batches, s.id, s.epoch, s.churnSeq))
	batch := producerBatch(time.Now(), s.id, s.epoch, s.churnSeq, txnID != nil, []string{value})
	code, _ := sendProduce(w, txnID, walkChurn, w.env.churnID(), 0, batch)
	if code != 0 || w.mutated {
		return code, nil
	}
	s.churnSeq++
	return code, []string{value}
}

// sendProduce sends batch to partition p of topic with acks=all and
// returns the partition's error code, and whether it was answered.
func sendProduce(w *walker, txnID *string, topic string, topicID [16]byte, p int32, batch []byte) (int16, bool) {
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID, req.Acks, req.TimeoutMillis = txnID, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, ok := w.send(req).(*kmsg.ProduceResponse)
	if !ok || len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
		return -1, false
	}
	return resp.Topics[0].Partitions[0].ErrorCode, true
}

// producerBatch is a batch of records with values from producer id at
// epoch, its first sequence number seq, marked transactional when txn is
// set.
func producerBatch(ts time.Time, id int64, epoch int16, seq int32, txn bool, values []string) []byte {
	recs := make([]kmsg.Record, len(values))
	for i, v := range values {
		recs[i].Value = []byte(v)
	}
	var attrs int16
	if txn {
		attrs = 0x10
	}
	return encodeBatch(ts, recs, batchProducer{id: id, epoch: epoch, seq: seq, attrs: attrs})
}
