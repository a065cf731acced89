package sharestate

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// The five requests, each answered partition by partition in the order of
// the request, as Kafka's ShareCoordinatorService splits a request into
// one shard operation per share-partition. A partition's operation sees
// the records of the partitions before it in the same request.

func (c *Coordinator) initialize(req *kmsg.InitializeShareGroupStateRequest, nowMs int64, res *runtime.Result) *kmsg.InitializeShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			r := c.initializePartition(partitionKey{req.GroupID, t.TopicID, p.Partition}, p, nowMs, res)
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, r.code(), r.text()
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// initializePartition starts k's state afresh (Kafka's initializeState):
// the request's state epoch and start offset, leader epoch 0, no batches,
// and a delivery complete count of 0 when the start is known (lag can be
// counted from it), unknown otherwise. It overwrites any state k has,
// unless the request's state epoch is older.
func (c *Coordinator) initializePartition(k partitionKey, p kmsg.InitializeShareGroupStateRequestTopicPartition, nowMs int64, res *runtime.Result) *refusal {
	if r := checkKey(k); r != nil {
		return r
	}
	start, ok := startFromWire(p.StartOffset)
	if !ok {
		return refuseWith(kerr.InvalidRequest, fmt.Sprintf("The start offset %d is invalid.", p.StartOffset))
	}
	old := c.states[k]
	if p.StateEpoch != -1 && old != nil && old.fenceStateEpoch > p.StateEpoch {
		return refuse(kerr.FencedStateEpoch)
	}
	if !c.topicKnown(k.topicID, k.partition) {
		return refuse(kerr.UnknownTopicOrPartition)
	}
	v := snapshotValue{stateEpoch: p.StateEpoch, start: start, createMs: nowMs, writeMs: nowMs}
	if old != nil {
		v.snapshotEpoch = old.snapshotEpoch + 1
	}
	if start.ok {
		v.deliveryComplete = some[int32](0)
	}
	c.persist(k, v, res)
	return nil
}

func (c *Coordinator) write(req *kmsg.WriteShareGroupStateRequest, nowMs int64, res *runtime.Result) *kmsg.WriteShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			r := c.writePartition(partitionKey{req.GroupID, t.TopicID, p.Partition}, req.Version, p, nowMs, res)
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, r.code(), r.text()
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// writePartition combines a partition leader's batches into k's state
// (Kafka's writeState). The state epoch and leader epoch of the state stay
// as they are: a write is fenced by them but does not raise them. The
// start offset moves to the request's unless that is -1, and the delivery
// complete count is the request's (unknown before version 1).
func (c *Coordinator) writePartition(k partitionKey, version int16, p kmsg.WriteShareGroupStateRequestTopicPartition, nowMs int64, res *runtime.Result) *refusal {
	w, r := parseWrite(k, version, p)
	if r != nil {
		return r
	}
	cur := c.states[k]
	switch {
	case cur == nil:
		return refuseWith(kerr.InvalidRequest, "Write operation on uninitialized share partition not allowed.")
	case p.LeaderEpoch != -1 && cur.fenceLeaderEpoch > p.LeaderEpoch:
		return refuse(kerr.FencedLeaderEpoch)
	case p.StateEpoch != -1 && cur.fenceStateEpoch > p.StateEpoch:
		return refuse(kerr.FencedStateEpoch)
	case !c.topicKnown(k.topicID, k.partition):
		return refuse(kerr.UnknownTopicOrPartition)
	}
	v := cur.snapshotValue
	v.snapshotEpoch++
	if w.start.ok {
		v.start = w.start
	}
	v.deliveryComplete = w.deliveryComplete
	v.batches = combineBatches(cur.batches, w.batches, v.start)
	v.createMs, v.writeMs = nowMs, nowMs
	c.persist(k, v, res)
	return nil
}

// parsedWrite is what a write request carries for one partition, checked.
type parsedWrite struct {
	start            optional[base.Offset]
	deliveryComplete optional[int32]
	batches          []stateBatch
}

// parseWrite validates a write at the gateway. Kafka takes any start
// offset, count and batch; here a start offset or count below -1 and a
// batch that is not a range of persistable states are INVALID_REQUEST, so
// that what is stored can always be read back.
func parseWrite(k partitionKey, version int16, p kmsg.WriteShareGroupStateRequestTopicPartition) (parsedWrite, *refusal) {
	if r := checkKey(k); r != nil {
		return parsedWrite{}, r
	}
	var w parsedWrite
	var ok bool
	if w.start, ok = startFromWire(p.StartOffset); !ok {
		return parsedWrite{}, refuseWith(kerr.InvalidRequest, fmt.Sprintf("The start offset %d is invalid.", p.StartOffset))
	}
	if version >= 1 {
		if w.deliveryComplete, ok = countFromWire(p.DeliveryCompleteCount); !ok {
			return parsedWrite{}, refuseWith(kerr.InvalidRequest, fmt.Sprintf("The delivery complete count %d is invalid.", p.DeliveryCompleteCount))
		}
	}
	for _, wb := range p.StateBatches {
		b, err := batchFromWire(wb.FirstOffset, wb.LastOffset, wb.DeliveryState, wb.DeliveryCount)
		if err != nil {
			return parsedWrite{}, refuseWith(kerr.InvalidRequest, "Invalid "+err.Error()+".")
		}
		w.batches = append(w.batches, b)
	}
	return w, nil
}

func (c *Coordinator) read(req *kmsg.ReadShareGroupStateRequest, nowMs int64, res *runtime.Result) *kmsg.ReadShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			s, r := c.readPartition(partitionKey{req.GroupID, t.TopicID, p.Partition}, p.LeaderEpoch, nowMs, res)
			if r != nil {
				rp.ErrorCode, rp.ErrorMessage = r.code(), r.text()
			} else {
				fillRead(&rp, s)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// readPartition returns k's state for its partition leader (Kafka's
// readStateAndMaybeUpdateLeaderEpoch). Unlike a write, a read with leader
// epoch -1 is fenced, by any stored epoch of 0 or more. A read with a higher leader epoch
// than the fence makes that the state's leader epoch, with a new snapshot;
// the answer is the state as it was read.
func (c *Coordinator) readPartition(k partitionKey, leaderEpoch int32, nowMs int64, res *runtime.Result) (*shareState, *refusal) {
	if r := checkKey(k); r != nil {
		return nil, r
	}
	cur := c.states[k]
	switch {
	case cur == nil:
		return nil, refuseWith(kerr.InvalidRequest, "Read operation on uninitialized share partition not allowed.")
	case cur.fenceLeaderEpoch > leaderEpoch:
		return nil, refuse(kerr.FencedLeaderEpoch)
	case !c.topicKnown(k.topicID, k.partition):
		return nil, refuse(kerr.UnknownTopicOrPartition)
	}
	if leaderEpoch != -1 && leaderEpoch != cur.fenceLeaderEpoch {
		v := cur.snapshotValue
		v.snapshotEpoch++
		v.leaderEpoch = leaderEpoch
		v.createMs, v.writeMs = nowMs, nowMs
		c.persist(k, v, res) // replaces c.states[k]; cur is left as read
	}
	return cur, nil
}

func fillRead(rp *kmsg.ReadShareGroupStateResponseTopicPartition, s *shareState) {
	rp.StateEpoch = s.stateEpoch
	rp.StartOffset = startToWire(s.start)
	rp.StateBatches = make([]kmsg.ReadShareGroupStateResponseTopicPartitionStateBatch, 0, len(s.batches))
	for _, b := range s.batches {
		wb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
		wb.FirstOffset, wb.LastOffset = b.firstOffset(), b.lastOffset()
		wb.DeliveryState, wb.DeliveryCount = int8(b.State), b.Deliveries
		rp.StateBatches = append(rp.StateBatches, wb)
	}
}

// readSummary answers from the state without fencing and without writing
// (Kafka's readStateSummary). A share-partition with no state is not an
// error: it has start offset -1, an unknown delivery complete count, and
// epochs 0.
func (c *Coordinator) readSummary(req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			k := partitionKey{req.GroupID, t.TopicID, p.Partition}
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition = p.Partition
			r := checkKey(k)
			if r == nil && !c.topicKnown(k.topicID, k.partition) {
				r = refuse(kerr.UnknownTopicOrPartition)
			}
			switch s := c.states[k]; {
			case r != nil:
				rp.ErrorCode, rp.ErrorMessage = r.code(), r.text()
			case s == nil:
				rp.StartOffset = -1 // and DeliveryCompleteCount is -1 by default
			default:
				rp.StateEpoch, rp.LeaderEpoch = s.stateEpoch, s.leaderEpoch
				rp.StartOffset = startToWire(s.start)
				rp.DeliveryCompleteCount = countToWire(s.deliveryComplete)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// deleteState removes the state of each partition with a tombstone (Kafka's
// deleteState); a partition with no state is deleted already, which
// succeeds without a record.
func (c *Coordinator) deleteState(req *kmsg.DeleteShareGroupStateRequest, res *runtime.Result) *kmsg.DeleteShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			k := partitionKey{req.GroupID, t.TopicID, p.Partition}
			r := checkKey(k)
			if r == nil && !c.topicKnown(k.topicID, k.partition) {
				r = refuse(kerr.UnknownTopicOrPartition)
			}
			if r == nil && c.states[k] != nil {
				c.remove(k, res)
			}
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, r.code(), r.text()
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
