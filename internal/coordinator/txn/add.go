package txn

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// addPartitions is Kafka's handleAddPartitionsToTransaction for a client
// (v0-v3): one outcome for the whole request, on every partition.
func (c *Coordinator) addPartitions(req *kmsg.AddPartitionsToTxnRequest, nowMs int64, res *runtime.Result) kmsg.Response {
	if req.Version >= 4 {
		panic(fmt.Sprintf("txn: AddPartitionsToTxn v%d is not served", req.Version))
	}
	var tps []base.TopicPartition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, base.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	code := fencedFor(c.add(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps, 0, nowMs, res), req.Version, 2)
	return addPartitionsResponse(req, func(base.TopicPartition) int16 { return code })
}

// addOffsets adds the group's __consumer_offsets partition, so that the
// transaction's offset commits get its markers.
func (c *Coordinator) addOffsets(req *kmsg.AddOffsetsToTxnRequest, nowMs int64, res *runtime.Result) kmsg.Response {
	tps := []base.TopicPartition{c.opts.GroupPartition(req.Group)}
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	resp.ErrorCode = fencedFor(c.add(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps, 0, nowMs, res), req.Version, 2)
	return resp
}

// add puts tps into the producer's transaction, starting one if none is
// open (Kafka's prepareAddPartitions); a write records the client's
// transaction version (clientVersion: 0 for the requests of version 1, 2
// for the adds a partition leader or the group coordinator makes for a
// version 2 client).
func (c *Coordinator) add(id string, pid int64, epoch int16, tps []base.TopicPartition, clientVersion int16, nowMs int64, res *runtime.Result) int16 {
	if id == "" {
		return kerr.InvalidRequest.Code
	}
	t, ok := c.txns[id]
	switch {
	case ok && t.movingTo(pid):
		return kerr.ConcurrentTransactions.Code
	case !ok || t.producerID != pid:
		return kerr.InvalidProducerIDMapping.Code
	case t.epoch != epoch:
		return kerr.ProducerFenced.Code
	case t.state.preparing():
		return kerr.ConcurrentTransactions.Code
	case t.state == stateOngoing && t.hasAll(tps):
		return 0 // nothing new: Kafka answers without an append
	}
	if t.state != stateOngoing {
		t.startMs = some(nowMs)
	}
	for _, tp := range tps {
		t.partitions[tp] = struct{}{}
	}
	t.clientVersion = clientVersion
	t.transitionTo(stateOngoing, nowMs)
	c.write(t, res)
	return 0
}

// movingTo reports whether t's markers are being written by an end that
// moves its producer to pid: that producer's next transaction waits.
func (t *txnMetadata) movingTo(pid int64) bool {
	return t.state.preparing() && t.nextProducerID.ok && t.nextProducerID.v == pid
}
