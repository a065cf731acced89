package txn

import (
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	testCoordinatorEpoch = 7
	offsetsTopic         = "__consumer_offsets"
	testTimeoutMs        = 60_000
)

var errAllocator = errors.New("producer id block not available")

// harness drives a Coordinator like the runtime does, with a manual clock:
// it records every record and effect, and checks that each op gets exactly
// one reply, from the Handle that received it.
type harness struct {
	tb      tb
	opts    Options
	c       *Coordinator
	now     time.Time
	token   uint64
	records []runtime.Record
	effects []WriteMarkers
	lastPID int64
	pidErr  error // NextProducerID fails while set
}

func newHarness(tb tb) *harness { return newHarnessWith(tb, func(*Options) {}) }

// newHarnessWith lets a test change the options before the coordinator is
// made.
func newHarnessWith(tb tb, mutate func(*Options)) *harness {
	h := &harness{tb: tb, now: t0, lastPID: 999}
	h.opts = DefaultOptions()
	h.opts.CoordinatorEpoch = testCoordinatorEpoch
	h.opts.NextProducerID = func() (int64, error) {
		if h.pidErr != nil {
			return 0, h.pidErr
		}
		h.lastPID++
		return h.lastPID, nil
	}
	h.opts.GroupPartition = groupPartition
	mutate(&h.opts)
	h.c = h.newCoordinator()
	h.absorb(h.c.Tick(h.now))
	return h
}

func groupPartition(group string) base.TopicPartition {
	return base.TopicPartition{Topic: offsetsTopic, Partition: int32(len(group) % 50)}
}

func (h *harness) newCoordinator() *Coordinator {
	c, err := New(h.opts)
	if err != nil {
		h.tb.Fatal(err)
	}
	return c
}

// absorb collects a Result that answers no op.
func (h *harness) absorb(res runtime.Result) {
	h.tb.Helper()
	if len(res.Replies) != 0 {
		h.tb.Fatalf("a tick replied to %d ops", len(res.Replies))
	}
	h.collect(res)
}

func (h *harness) collect(res runtime.Result) {
	h.tb.Helper()
	if res.Txn != nil || len(res.Markers) != 0 {
		h.tb.Fatalf("the transaction coordinator wrote a transactional batch or markers: %+v", res)
	}
	h.records = append(h.records, res.Records...)
	for _, e := range res.Effects {
		wm, ok := e.(WriteMarkers)
		if !ok {
			h.tb.Fatalf("effect of type %T", e)
		}
		h.effects = append(h.effects, wm)
	}
}

// handle runs one op and returns its only reply.
func (h *harness) handle(op runtime.Op) runtime.Reply {
	h.tb.Helper()
	h.token++
	op.Token = h.token
	res := h.c.Handle(op, h.now)
	if len(res.Replies) != 1 || res.Replies[0].Token != h.token {
		h.tb.Fatalf("op %d (%T %T) got replies %+v", h.token, op.Req, op.Event, res.Replies)
	}
	h.collect(res)
	return res.Replies[0]
}

func (h *harness) do(req kmsg.Request) kmsg.Response {
	h.tb.Helper()
	r := h.handle(runtime.Op{Req: req, ClientID: "client", ClientHost: "/10.0.0.1"})
	if r.Resp == nil || r.Err != nil {
		h.tb.Fatalf("request %T answered with %+v", req, r)
	}
	return r.Resp
}

// written delivers a MarkersWritten event.
func (h *harness) written(ev MarkersWritten) {
	h.tb.Helper()
	r := h.handle(runtime.Op{Event: ev})
	if r.Resp != nil || r.Err != nil {
		h.tb.Fatalf("event answered with %+v", r)
	}
}

// flushMarkers writes every pending marker effect, in order.
func (h *harness) flushMarkers() {
	h.tb.Helper()
	effects := h.effects
	h.effects = nil
	for _, wm := range effects {
		h.written(MarkersWritten{TransactionalID: wm.TransactionalID, ProducerID: wm.ProducerID, ProducerEpoch: wm.ProducerEpoch})
	}
}

func (h *harness) advance(d time.Duration) {
	h.tb.Helper()
	h.now = h.now.Add(d)
	h.absorb(h.c.Tick(h.now))
}

// reload replaces the coordinator with one replayed from every record so
// far, and ticks it once, as the runtime does after a load.
func (h *harness) reload() {
	h.tb.Helper()
	h.c = replayAll(h.tb, h.opts, h.records)
	h.absorb(h.c.Tick(h.now))
}

func replayAll(tb tb, opts Options, records []runtime.Record) *Coordinator {
	tb.Helper()
	c, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	for i, r := range records {
		if err := c.Replay(r.Key, r.Value); err != nil {
			tb.Fatalf("replay of record %d: %v", i, err)
		}
	}
	return c
}

// Requests.

func initReq(id string, version int16) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = version
	req.TransactionalID = kmsg.StringPtr(id)
	req.TransactionTimeoutMillis = testTimeoutMs
	return req
}

func initWith(id string, version int16, pid int64, epoch int16) *kmsg.InitProducerIDRequest {
	req := initReq(id, version)
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return req
}

func addReq(id string, pid int64, epoch int16, version int16, tps ...base.TopicPartition) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	for _, tp := range tps {
		if n := len(req.Topics); n > 0 && req.Topics[n-1].Topic == tp.Topic {
			req.Topics[n-1].Partitions = append(req.Topics[n-1].Partitions, tp.Partition)
			continue
		}
		req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
	}
	return req
}

func offsetsReq(id string, pid int64, epoch int16, version int16, group string) *kmsg.AddOffsetsToTxnRequest {
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = id, pid, epoch, group
	return req
}

func endReq(id string, pid int64, epoch int16, version int16, commit bool) *kmsg.EndTxnRequest {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return req
}

func tp(topic string, p int32) base.TopicPartition {
	return base.TopicPartition{Topic: topic, Partition: p}
}

// Answers.

func (h *harness) init(req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	h.tb.Helper()
	return h.do(req).(*kmsg.InitProducerIDResponse)
}

// mustInit initializes id (v4, no KIP-360 fields) and returns its producer.
func (h *harness) mustInit(id string) (int64, int16) {
	h.tb.Helper()
	r := h.init(initReq(id, 4))
	wantCode(h.tb, "init "+id, r.ErrorCode, nil)
	return r.ProducerID, r.ProducerEpoch
}

// addCodes returns the code of every partition in an AddPartitionsToTxn
// response.
func (h *harness) addCodes(req *kmsg.AddPartitionsToTxnRequest) []int16 {
	h.tb.Helper()
	var out []int16
	for _, t := range h.do(req).(*kmsg.AddPartitionsToTxnResponse).Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

// addCode returns the one code of an AddPartitionsToTxn response.
func (h *harness) addCode(req *kmsg.AddPartitionsToTxnRequest) int16 {
	h.tb.Helper()
	codes := h.addCodes(req)
	if len(codes) == 0 {
		h.tb.Fatal("AddPartitionsToTxn answered no partition")
	}
	for _, c := range codes {
		if c != codes[0] {
			h.tb.Fatalf("AddPartitionsToTxn codes differ: %v", codes)
		}
	}
	return codes[0]
}

func (h *harness) offsetsCode(req *kmsg.AddOffsetsToTxnRequest) int16 {
	h.tb.Helper()
	return h.do(req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
}

func (h *harness) endCode(req *kmsg.EndTxnRequest) int16 {
	h.tb.Helper()
	return h.do(req).(*kmsg.EndTxnResponse).ErrorCode
}

func (h *harness) describe(id string) kmsg.DescribeTransactionsResponseTransactionState {
	h.tb.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	states := h.do(req).(*kmsg.DescribeTransactionsResponse).TransactionStates
	if len(states) != 1 {
		h.tb.Fatalf("describe of one id answered %d", len(states))
	}
	return states[0]
}

func (h *harness) wantState(id string, state string) kmsg.DescribeTransactionsResponseTransactionState {
	h.tb.Helper()
	d := h.describe(id)
	wantCode(h.tb, "describe "+id, d.ErrorCode, nil)
	if d.State != state {
		h.tb.Fatalf("%s is %s, want %s", id, d.State, state)
	}
	return d
}

func wantCode(tb tb, what string, got int16, want *kerr.Error) {
	tb.Helper()
	w := int16(0)
	if want != nil {
		w = want.Code
	}
	if got != w {
		tb.Fatalf("%s: error code %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// lastValue decodes the last record; it must be a value of id.
func (h *harness) lastValue(id string) kmsg.TxnMetadataValue {
	h.tb.Helper()
	if len(h.records) == 0 {
		h.tb.Fatal("no record")
	}
	return decodeRecord(h.tb, h.records[len(h.records)-1], id)
}

func decodeRecord(tb tb, r runtime.Record, id string) kmsg.TxnMetadataValue {
	tb.Helper()
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(r.Key); err != nil || k.Version != 0 || k.TransactionalID != id {
		tb.Fatalf("record key %+v (%v), want version 0 of %q", k, err, id)
	}
	if r.Value == nil {
		tb.Fatalf("record of %q is a tombstone", id)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(r.Value); err != nil || v.Version != 0 {
		tb.Fatalf("record value %+v (%v), want version 0", v, err)
	}
	return v
}

// snapshot is what a reload must reproduce: each id's persisted value.
func snapshotOf(c *Coordinator) map[string]string {
	s := map[string]string{}
	for id, t := range c.txns {
		s[id] = hex.EncodeToString(txnValue(t))
	}
	return s
}

// preparing lists the markers the coordinator still owes, by id.
func preparing(c *Coordinator) []WriteMarkers {
	var out []WriteMarkers
	for _, t := range c.txns {
		if t.state.preparing() {
			out = append(out, c.writeMarkers(t))
		}
	}
	slices.SortFunc(out, func(a, b WriteMarkers) int { return strings.Compare(a.TransactionalID, b.TransactionalID) })
	return out
}

// checkInvariants asserts the invariants of doc.go.
func checkInvariants(tb tb, c *Coordinator) {
	tb.Helper()
	for id, t := range c.txns {
		if t.id != id {
			tb.Fatalf("txn %q stored under %q", t.id, id)
		}
		switch t.state {
		case stateEmpty, stateOngoing, statePrepareCommit, statePrepareAbort, stateCompleteCommit, stateCompleteAbort:
		default:
			tb.Fatalf("%q held in state %v", id, t.state)
		}
		if t.producerID < 0 || t.epoch < 0 {
			tb.Fatalf("%q has producer %d epoch %d", id, t.producerID, t.epoch)
		}
		if t.state == stateOngoing && t.epoch == math.MaxInt16 {
			tb.Fatalf("%q is Ongoing at epoch %d", id, t.epoch)
		}
		if (t.state == stateOngoing || t.state.preparing()) && !t.startMs.ok {
			tb.Fatalf("%q is %v without a start time", id, t.state)
		}
		if t.state.idle() && len(t.partitions) > 0 {
			tb.Fatalf("%q is %v with partitions %v", id, t.state, t.sortedPartitions())
		}
		if t.state == stateEmpty && t.startMs.ok {
			tb.Fatalf("%q is Empty with a start time", id)
		}
		if t.timeout <= 0 {
			tb.Fatalf("%q has timeout %v", id, t.timeout)
		}
		if t.nextProducerID.ok && !t.state.preparing() {
			tb.Fatalf("%q is %v with a next producer id", id, t.state)
		}
		if t.clientVersion != 0 && t.clientVersion != maxClientVersion {
			tb.Fatalf("%q has client transaction version %d", id, t.clientVersion)
		}
	}
}
