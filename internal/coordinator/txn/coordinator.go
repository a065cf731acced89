package txn

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// TopicName is the internal topic of transaction state; a transactional
// id's partition is offsets.PartitionFor(id, count), as in Kafka.
const TopicName = "__transaction_state"

// MaxVersions are the request versions the coordinator serves, by API
// key, from 0 up to the value: EndTxn v5 is transaction version 2's
// (KIP-890 part 2, end.go); the adds of version 2 come as Verify events
// with Add. InitProducerId v5 and AddPartitionsToTxn v5 change nothing
// that version 2 needs and are not served. AddPartitionsToTxn v4, the batched form
// partition leaders send (KIP-890 part 1), never reaches the coordinator:
// the api splits it into one v3 request per transaction added to and one
// Verify event per partition verified.
var MaxVersions = map[int16]int16{
	kmsg.InitProducerID.Int16():       4,
	kmsg.AddPartitionsToTxn.Int16():   3,
	kmsg.AddOffsetsToTxn.Int16():      4,
	kmsg.EndTxn.Int16():               endTxnV2Version,
	kmsg.DescribeTransactions.Int16(): 0,
	kmsg.ListTransactions.Int16():     1,
}

// Coordinator holds the transactional ids of one __transaction_state
// partition. It implements runtime.Shard. Not safe for concurrent use.
type Coordinator struct {
	opts Options
	txns map[string]*txnMetadata
	// ticked is set by the first Tick, which emits the markers of the
	// transactions loaded in Prepare*.
	ticked      bool
	abortCheck  deadline // next scan for timed-out transactions
	expiryCheck deadline // next scan for expired transactional ids
}

var _ runtime.Shard = (*Coordinator)(nil)

// New returns an empty coordinator.
func New(opts Options) (*Coordinator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Coordinator{opts: opts, txns: map[string]*txnMetadata{}}, nil
}

// Handle applies one request or event. Requests of other types than those
// in MaxVersions, and events other than MarkersWritten and Verify, are a
// programmer error.
func (c *Coordinator) Handle(op runtime.Op, now time.Time) runtime.Result {
	var res runtime.Result
	nowMs := now.UnixMilli()
	if op.Req == nil {
		var err error
		switch ev := op.Event.(type) {
		case MarkersWritten:
			c.markersWritten(ev, nowMs, &res)
		case Verify:
			err = c.verify(ev, nowMs, &res)
		default:
			panic(fmt.Sprintf("txn: Handle of unknown event %T", op.Event))
		}
		res.Replies = append(res.Replies, runtime.Reply{Token: op.Token, Err: err})
		return res
	}
	var resp kmsg.Response
	switch req := op.Req.(type) {
	case *kmsg.InitProducerIDRequest:
		resp = c.initProducerID(req, nowMs, &res)
	case *kmsg.AddPartitionsToTxnRequest:
		resp = c.addPartitions(req, nowMs, &res)
	case *kmsg.AddOffsetsToTxnRequest:
		resp = c.addOffsets(req, nowMs, &res)
	case *kmsg.EndTxnRequest:
		resp = c.endTxn(req, nowMs, &res)
	case *kmsg.DescribeTransactionsRequest:
		resp = c.describeTransactions(req)
	case *kmsg.ListTransactionsRequest:
		resp = c.listTransactions(req, nowMs)
	default:
		panic(fmt.Sprintf("txn: Handle of unserved request %T", op.Req))
	}
	res.Replies = append(res.Replies, runtime.Reply{Token: op.Token, Resp: resp})
	return res
}
