package txn

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeTransactions is Kafka's handleDescribeTransactions for the ids
// of this partition.
func (c *Coordinator) describeTransactions(req *kmsg.DescribeTransactionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		resp.TransactionStates = append(resp.TransactionStates, c.describe(id))
	}
	return resp
}

func (c *Coordinator) describe(id string) kmsg.DescribeTransactionsResponseTransactionState {
	out := kmsg.NewDescribeTransactionsResponseTransactionState()
	out.TransactionalID = id
	if id == "" {
		out.ErrorCode = kerr.InvalidRequest.Code
		return out
	}
	t, ok := c.txns[id]
	if !ok {
		out.ErrorCode = kerr.TransactionalIDNotFound.Code
		return out
	}
	out.State = t.state.String()
	out.TimeoutMillis = int32(t.timeout / time.Millisecond)
	out.StartTimestamp = orMinusOne(t.startMs)
	out.ProducerID = t.producerID
	out.ProducerEpoch = t.epoch
	for _, vt := range topicsOf(t.sortedPartitions()) {
		out.Topics = append(out.Topics, kmsg.DescribeTransactionsResponseTransactionStateTopic{Topic: vt.Topic, Partitions: vt.Partitions})
	}
	return out
}

// listTransactions is Kafka's listTransactionStates over this partition,
// sorted by transactional id. Unknown state names are echoed back and
// match nothing; the duration filter (v1) keeps transactions started more
// than that long ago (an id with no transaction counts as started at -1).
func (c *Coordinator) listTransactions(req *kmsg.ListTransactionsRequest, nowMs int64) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	states := map[txnState]bool{}
	for _, name := range req.StateFilters {
		if s, ok := parseState(name); ok {
			states[s] = true
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	pids := make(map[int64]bool, len(req.ProducerIDFilters))
	for _, pid := range req.ProducerIDFilters {
		pids[pid] = true
	}
	durationMs := int64(-1)
	if req.Version >= 1 {
		durationMs = req.DurationFilterMillis
	}
	for _, id := range slices.Sorted(maps.Keys(c.txns)) {
		t := c.txns[id]
		switch {
		case len(pids) > 0 && !pids[t.producerID]:
			continue
		case len(req.StateFilters) > 0 && !states[t.state]:
			continue
		case durationMs >= 0 && nowMs-orMinusOne(t.startMs) <= durationMs:
			continue
		}
		resp.TransactionStates = append(resp.TransactionStates, kmsg.ListTransactionsResponseTransactionState{
			TransactionalID: id, ProducerID: t.producerID, TransactionState: t.state.String(),
		})
	}
	return resp
}
