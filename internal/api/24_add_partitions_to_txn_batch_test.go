package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/txn"
)

// withTxns gives the harness's api a transaction coordinator on the
// __transaction_state partitions it leads: of two, partition 0 is led by
// broker 1 and partition 1 by broker 2.
func (rh *replicaHarness) withTxns() {
	rh.t.Helper()
	rh.createTopic(txn.TopicName, nil, []int32{1}, []int32{2})
	rt := rh.coordinatorRuntime(txn.TopicName, func(int32) (runtime.Shard, error) {
		o := txn.DefaultOptions()
		o.NextProducerID = func() (int64, error) {
			id, err := rh.b.NextProducerID()
			return int64(id), err
		}
		o.GroupPartition = func(string) base.TopicPartition { return base.TopicPartition{Topic: offsets.TopicName} }
		return txn.New(o)
	}, txn.ErrorResponse)
	for _, p := range rh.meta.Image().Topics[txn.TopicName].Partitions {
		if p.Leader == rh.b.NodeID() {
			rt.Start(p.Index)
		}
	}
	opts := rh.h.opts
	opts.Txns = rt
	h, err := New(opts)
	if err != nil {
		rh.t.Fatal(err)
	}
	rh.h = h
}

// withPeers makes the harness's api reach other brokers through peers.
func (rh *replicaHarness) withPeers(peers func(int32) (kmsg.Requestor, error)) {
	rh.t.Helper()
	opts := rh.h.opts
	opts.Peers = peers
	var err error
	if rh.h, err = New(opts); err != nil {
		rh.t.Fatal(err)
	}
}

// txnIDsOn are n transactional ids that __transaction_state partition
// idx (of two) coordinates.
func txnIDsOn(t *testing.T, idx int32, n int) []string {
	t.Helper()
	var out []string
	for i := 0; len(out) < n && i < 1000; i++ {
		if id := fmt.Sprintf("txn-%d", i); offsets.PartitionFor(id, 2) == idx {
			out = append(out, id)
		}
	}
	if len(out) < n {
		t.Fatalf("not %d transactional ids on partition %d", n, idx)
	}
	return out
}

// retryLoading calls call until its code is not COORDINATOR_LOAD_IN_PROGRESS
// (the coordinator's partition loads once started) and returns that code.
func (rh *replicaHarness) retryLoading(call func() int16) int16 {
	rh.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code := call()
		if code != kerr.CoordinatorLoadInProgress.Code || time.Now().After(deadline) {
			return code
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// initProducer is an InitProducerID v4 of transactional id.
func (rh *replicaHarness) initProducer(principal, id string) (int64, int16) {
	rh.t.Helper()
	var resp *kmsg.InitProducerIDResponse
	code := rh.retryLoading(func() int16 {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.TransactionalID, r.TransactionTimeoutMillis = kmsg.StringPtr(id), 60_000
		resp = rh.handle(22, 4, r, principal).(*kmsg.InitProducerIDResponse)
		return resp.ErrorCode
	})
	if code != 0 {
		rh.t.Fatalf("InitProducerID of %q: error %d", id, code)
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// addPartitions is a producer's AddPartitionsToTxn v3 of data-idx.
func (rh *replicaHarness) addPartitions(principal, id string, pid int64, epoch int16, idx ...int32) {
	rh.t.Helper()
	code := rh.retryLoading(func() int16 {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.TransactionalID, r.ProducerID, r.ProducerEpoch = id, pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "data", idx
		r.Topics = append(r.Topics, rt)
		resp := rh.handle(24, 3, r, principal).(*kmsg.AddPartitionsToTxnResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return p.ErrorCode
				}
			}
		}
		return 0
	})
	if code != 0 {
		rh.t.Fatalf("AddPartitionsToTxn v3 of %q: error %d", id, code)
	}
}

// batchTx is one transaction of a batched AddPartitionsToTxn.
func batchTx(id string, pid int64, epoch int16, verifyOnly bool, tps ...base.TopicPartition) kmsg.AddPartitionsToTxnRequestTransaction {
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, verifyOnly
	for _, tp := range tps {
		t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
		tx.Topics = append(tx.Topics, t)
	}
	return tx
}

// batch is an AddPartitionsToTxn v4 of txs, as principal.
func (rh *replicaHarness) batch(principal string, txs ...kmsg.AddPartitionsToTxnRequestTransaction) *kmsg.AddPartitionsToTxnResponse {
	rh.t.Helper()
	r := kmsg.NewPtrAddPartitionsToTxnRequest()
	r.Transactions = txs
	return rh.handle(24, 4, r, principal).(*kmsg.AddPartitionsToTxnResponse)
}

// batchCodes are the codes of each transaction of a batched answer, by
// partition, in the order of the answer; it fails the test unless the
// answer names the transactions of ids, in that order.
func batchCodes(t *testing.T, resp *kmsg.AddPartitionsToTxnResponse, ids ...string) []map[base.TopicPartition]int16 {
	t.Helper()
	if resp.ErrorCode != 0 || len(resp.Transactions) != len(ids) {
		t.Fatalf("AddPartitionsToTxn v4 answered error %d with %d transactions, want %d", resp.ErrorCode, len(resp.Transactions), len(ids))
	}
	out := make([]map[base.TopicPartition]int16, len(ids))
	for i, rt := range resp.Transactions {
		if rt.TransactionalID != ids[i] {
			t.Fatalf("answer %d is of %q, want %q", i, rt.TransactionalID, ids[i])
		}
		out[i] = map[base.TopicPartition]int16{}
		for _, tt := range rt.Topics {
			for _, p := range tt.Partitions {
				tp := base.TopicPartition{Topic: tt.Topic, Partition: p.Partition}
				if _, dup := out[i][tp]; dup {
					t.Fatalf("%q: %v answered twice", ids[i], tp)
				}
				out[i][tp] = p.ErrorCode
			}
		}
	}
	return out
}

func dataTP(idx int32) base.TopicPartition { return base.TopicPartition{Topic: "data", Partition: idx} }

func wantCodes(t *testing.T, what string, got, want map[base.TopicPartition]int16) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: answered %v, want %v", what, got, want)
		return
	}
	for tp, code := range want {
		if got[tp] != code {
			t.Errorf("%s: %v error %d, want %d", what, tp, got[tp], code)
		}
	}
}

func TestAddPartitionsToTxnRegisteredAtV4(t *testing.T) {
	checkAdvertised(t, 24, 0, 4) // v5 is KIP-890 part 2's
}

// TestAddPartitionsToTxnBatchVerifyOnly: each transaction of a batch is
// answered on its own, each partition once, with the coordinator's code:
// in the ongoing transaction or not, a producer id or epoch that is not the
// current one, a transactional id coordinated elsewhere, no id, a
// partition that does not exist. Verifying adds nothing.
func TestAddPartitionsToTxnBatchVerifyOnly(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("data", nil, []int32{1}, []int32{1})
	rh.withTxns()
	here := txnIDsOn(t, 0, 2)
	there := txnIDsOn(t, 1, 1)[0]
	pid, epoch := rh.initProducer("User:ANONYMOUS", here[0])
	rh.addPartitions("User:ANONYMOUS", here[0], pid, epoch, 0)

	ids := []string{here[0], here[1], there, ""}
	got := batchCodes(t, rh.batch("User:broker",
		batchTx(here[0], pid, epoch, true, dataTP(0), dataTP(1), dataTP(0)),
		batchTx(here[1], 99, 0, true, dataTP(0)),
		batchTx(there, pid, epoch, true, dataTP(0)),
		batchTx("", pid, epoch, true, dataTP(0)),
	), ids...)
	wantCodes(t, "the ongoing transaction", got[0], map[base.TopicPartition]int16{dataTP(0): 0, dataTP(1): kerr.InvalidTxnState.Code})
	wantCodes(t, "an id without a producer", got[1], map[base.TopicPartition]int16{dataTP(0): kerr.InvalidProducerIDMapping.Code})
	wantCodes(t, "an id coordinated by broker 2", got[2], map[base.TopicPartition]int16{dataTP(0): kerr.NotCoordinator.Code})
	wantCodes(t, "no transactional id", got[3], map[base.TopicPartition]int16{dataTP(0): kerr.InvalidRequest.Code})

	got = batchCodes(t, rh.batch("User:broker", batchTx(here[0], pid, epoch+1, true, dataTP(0))), here[0])
	wantCodes(t, "a newer epoch", got[0], map[base.TopicPartition]int16{dataTP(0): kerr.ProducerFenced.Code})
	got = batchCodes(t, rh.batch("User:broker", batchTx(here[0], pid, epoch, true, dataTP(0), dataTP(7),
		base.TopicPartition{Topic: "nowhere"}, base.TopicPartition{Topic: txn.TopicName})), here[0])
	wantCodes(t, "partitions that cannot be in a transaction", got[0], map[base.TopicPartition]int16{
		dataTP(0): kerr.OperationNotAttempted.Code, dataTP(7): kerr.UnknownTopicOrPartition.Code,
		{Topic: "nowhere"}: kerr.UnknownTopicOrPartition.Code, {Topic: txn.TopicName}: kerr.InvalidTopicException.Code})

	got = batchCodes(t, rh.batch("User:broker", batchTx(here[0], pid, epoch, true, dataTP(1))), here[0])
	wantCodes(t, "verified again", got[0], map[base.TopicPartition]int16{dataTP(1): kerr.InvalidTxnState.Code})
}

// TestAddPartitionsToTxnBatchAdds: a transaction of a batch without
// VerifyOnly adds its partitions as a producer's v3 request does.
func TestAddPartitionsToTxnBatchAdds(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("data", nil, []int32{1}, []int32{1})
	rh.withTxns()
	id := txnIDsOn(t, 0, 1)[0]
	pid, epoch := rh.initProducer("User:ANONYMOUS", id)

	got := batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch+1, false, dataTP(0))), id)
	wantCodes(t, "adding with a newer epoch", got[0], map[base.TopicPartition]int16{dataTP(0): kerr.ProducerFenced.Code})
	got = batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, false, dataTP(0), dataTP(9))), id)
	wantCodes(t, "adding a partition that does not exist", got[0], map[base.TopicPartition]int16{
		dataTP(0): kerr.OperationNotAttempted.Code, dataTP(9): kerr.UnknownTopicOrPartition.Code})
	got = batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, true, dataTP(0))), id)
	wantCodes(t, "after refused adds", got[0], map[base.TopicPartition]int16{dataTP(0): kerr.InvalidTxnState.Code})

	got = batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, false, dataTP(0), dataTP(1))), id)
	wantCodes(t, "adding", got[0], map[base.TopicPartition]int16{dataTP(0): 0, dataTP(1): 0})
	got = batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, true, dataTP(1), dataTP(0))), id)
	wantCodes(t, "verifying the added partitions", got[0], map[base.TopicPartition]int16{dataTP(0): 0, dataTP(1): 0})
}

// TestAddPartitionsToTxnBatchNeedsClusterAction: with an authorizer, a
// sender without CLUSTER_ACTION on the cluster gets the top-level
// CLUSTER_AUTHORIZATION_FAILED and no results, even with WRITE on the
// transactional id; a super user (a broker) is served.
func TestAddPartitionsToTxnBatchNeedsClusterAction(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:broker",
	})
	rh.createTopic("data", nil, []int32{1})
	rh.withTxns()
	id := txnIDsOn(t, 0, 1)[0]
	pid, epoch := rh.initProducer("User:broker", id)
	rh.addPartitions("User:broker", id, pid, epoch, 0)
	for _, verifyOnly := range []bool{true, false} {
		resp := rh.batch("User:mallory", batchTx(id, pid, epoch, verifyOnly, dataTP(0)))
		if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(resp.Transactions) != 0 {
			t.Errorf("VerifyOnly %v without CLUSTER_ACTION: error %d and %d results, want CLUSTER_AUTHORIZATION_FAILED and none",
				verifyOnly, resp.ErrorCode, len(resp.Transactions))
		}
	}
	got := batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, true, dataTP(0))), id)
	wantCodes(t, "a broker's verification", got[0], map[base.TopicPartition]int16{dataTP(0): 0})
}

// handlerPeer is a kmsg.Requestor that another broker's Handler serves, as
// a connection to it would: the request and the response go through
// their wire encoding, at the highest version both ends know (maxVersion,
// when set, plays a broker that knows no more), as principal.
type handlerPeer struct {
	h          *Handler
	principal  string
	maxVersion int16
}

func (p handlerPeer) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	reg, ok := registry[req.Key()]
	if !ok {
		return nil, fmt.Errorf("key %d is not served", req.Key())
	}
	v := min(req.MaxVersion(), reg.max)
	if p.maxVersion > 0 {
		v = min(v, p.maxVersion)
	}
	req.SetVersion(v)
	body := kmsg.RequestForKey(req.Key())
	body.SetVersion(v)
	if err := body.ReadFrom(req.AppendTo(nil)); err != nil {
		return nil, err
	}
	reply := p.h.Handle(ctx, &Request{Key: req.Key(), Version: v, Body: body, Principal: p.principal})
	if reply.Release != nil {
		defer reply.Release()
	}
	resp := reply.Resp
	if reply.Wait != nil {
		resp = reply.Wait()
	}
	out := req.ResponseKind()
	if err := out.ReadFrom(resp.AppendTo(nil)); err != nil {
		return nil, err
	}
	return out, nil
}

// txnProduce is a Produce v9 of one batch of producer pid at epoch in
// transactional id's transaction to data-idx; it returns its code.
func (rh *replicaHarness) txnProduce(id string, pid int64, epoch int16, idx int32) int16 {
	rh.t.Helper()
	return rh.txnProduceAt(9, id, pid, epoch, idx)
}

// txnProduceAt is txnProduce at a Produce version.
func (rh *replicaHarness) txnProduceAt(version int16, id string, pid int64, epoch int16, idx int32) int16 {
	rh.t.Helper()
	r := kmsg.NewPtrProduceRequest()
	r.TransactionID, r.Acks, r.TimeoutMillis = kmsg.StringPtr(id), -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "data"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = idx, txnBatch(pid, epoch, 0, "in a transaction")
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	resp := rh.handle(0, version, r, "User:ANONYMOUS").(*kmsg.ProduceResponse)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// TestProduceVerifiesWithACoordinatorOnAnotherBroker: broker 1 leads the
// data partitions, broker 2 coordinates the transactional id (it leads
// its __transaction_state partition). Broker 1 asks broker 2, through a
// real Handler of broker 2, and tells its producer what Kafka's partition
// leaders do: the partition added is appended; one not added is
// INVALID_TXN_STATE; a stale epoch INVALID_PRODUCER_EPOCH; a coordinator
// that cannot be reached NOT_ENOUGH_REPLICAS (retried); one that refuses
// broker 1 (no CLUSTER_ACTION) INVALID_TXN_STATE; and one of an older
// version, which cannot verify, lets the produce through, as Kafka does.
func TestProduceVerifiesWithACoordinatorOnAnotherBroker(t *testing.T) {
	n2 := newReplicaHarnessAs(t, 2, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:broker",
	})
	n2.createTopic("data", nil, []int32{1}, []int32{1}, []int32{1})
	n2.withTxns()
	n1 := newReplicaHarness(t, nil)
	n1.createTopic("data", nil, []int32{1}, []int32{1}, []int32{1})
	n1.createTopic(txn.TopicName, nil, []int32{1}, []int32{2})
	peerAs := func(principal string, maxVersion int16) func(int32) (kmsg.Requestor, error) {
		return func(id int32) (kmsg.Requestor, error) {
			if id != 2 {
				return nil, fmt.Errorf("no broker %d", id)
			}
			return handlerPeer{h: n2.h, principal: principal, maxVersion: maxVersion}, nil
		}
	}
	n1.withPeers(peerAs("User:broker", 0))

	id := txnIDsOn(t, 1, 1)[0]
	pid, epoch := n2.initProducer("User:broker", id)
	n2.addPartitions("User:broker", id, pid, epoch, 0)
	if code := n1.txnProduce(id, pid, epoch, 0); code != 0 {
		t.Fatalf("a partition of the transaction: error %d", code)
	}
	if off := n1.partition("data", 0).Offsets(); off.LogEnd != 1 || off.LastStable != 0 {
		t.Fatalf("after the verified batch: offsets %+v, want it appended and open", off)
	}
	for _, tc := range []struct {
		name  string
		peers func(int32) (kmsg.Requestor, error)
		epoch int16
		want  int16
	}{
		{"a partition not in the transaction", peerAs("User:broker", 0), epoch, kerr.InvalidTxnState.Code},
		{"a newer epoch than the coordinator's", peerAs("User:broker", 0), epoch + 1, kerr.InvalidProducerEpoch.Code},
		{"no connection", func(int32) (kmsg.Requestor, error) { return nil, fmt.Errorf("unreachable") }, epoch, kerr.NotEnoughReplicas.Code},
		{"no CLUSTER_ACTION on broker 2", peerAs("User:mallory", 0), epoch, kerr.InvalidTxnState.Code},
	} {
		n1.withPeers(tc.peers)
		if got := n1.txnProduce(id, pid, tc.epoch, 1); got != tc.want {
			t.Errorf("%s: error %d, want %d", tc.name, got, tc.want)
		}
	}
	if end := n1.partition("data", 1).Offsets().LogEnd; end != 0 {
		t.Fatalf("a refused batch was appended: log end %d", end)
	}
	n1.withPeers(peerAs("User:broker", 3))
	if code := n1.txnProduce(id, pid, epoch, 2); code != 0 {
		t.Fatalf("a coordinator that serves AddPartitionsToTxn v0-3 only: error %d, want the batch appended unverified", code)
	}
}

func TestVerifyPeerTimeout(t *testing.T) {
	for _, tc := range []struct {
		produceMillis int32
		want          time.Duration
	}{{0, time.Second}, {1500, 1500 * time.Millisecond}, {30_000, 5 * time.Second}, {-1, time.Second}} {
		if got := verifyPeerTimeout(tc.produceMillis); got != tc.want {
			t.Errorf("produce timeout %dms: %v, want %v", tc.produceMillis, got, tc.want)
		}
	}
}

func TestProducerVerifyCode(t *testing.T) {
	for _, tc := range []struct {
		coordinator, want int16
	}{
		{0, 0},
		{kerr.NotCoordinator.Code, kerr.NotEnoughReplicas.Code},
		{kerr.CoordinatorLoadInProgress.Code, kerr.NotEnoughReplicas.Code},
		{kerr.CoordinatorNotAvailable.Code, kerr.NotEnoughReplicas.Code},
		{kerr.ConcurrentTransactions.Code, kerr.NotEnoughReplicas.Code},
		{kerr.OperationNotAttempted.Code, kerr.NotEnoughReplicas.Code},
		{kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code},
		{kerr.InvalidTxnState.Code, kerr.InvalidTxnState.Code},
		{kerr.InvalidProducerIDMapping.Code, kerr.InvalidProducerIDMapping.Code},
	} {
		if got := producerVerifyCode(tc.coordinator); got != tc.want {
			t.Errorf("coordinator code %d: producer code %d, want %d", tc.coordinator, got, tc.want)
		}
	}
	if got := producerVerifyCode(coordinatorVerifyCode(&txn.VerifyError{Code: kerr.ProducerFenced.Code})); got != kerr.InvalidProducerEpoch.Code {
		t.Errorf("a fenced producer, verified here: %d", got)
	}
	if got := producerVerifyCode(coordinatorVerifyCode(&runtime.CodeError{Code: kerr.NotCoordinator.Code})); got != kerr.NotEnoughReplicas.Code {
		t.Errorf("not the coordinator here: %d", got)
	}
	if got := producerVerifyCode(coordinatorVerifyCode(context.Canceled)); got != kerr.NotEnoughReplicas.Code {
		t.Errorf("an unknown failure: %d", got)
	}
}

// TestProduceV12AddsWithACoordinatorOnAnotherBroker: a client of
// transaction version 2 sends no AddPartitionsToTxn; broker 1, leading
// the data partitions, has broker 2 (the coordinator) add each partition
// its Produce v12 opens a transaction on, and appends the batch. A stale
// epoch is still refused, and nothing is appended for it.
func TestProduceV12AddsWithACoordinatorOnAnotherBroker(t *testing.T) {
	n2 := newReplicaHarnessAs(t, 2, nil)
	n2.createTopic("data", nil, []int32{1}, []int32{1})
	n2.withTxns()
	n1 := newReplicaHarness(t, nil)
	n1.createTopic("data", nil, []int32{1}, []int32{1})
	n1.createTopic(txn.TopicName, nil, []int32{1}, []int32{2})
	n1.withPeers(func(id int32) (kmsg.Requestor, error) { return handlerPeer{h: n2.h, principal: "User:broker"}, nil })

	id := txnIDsOn(t, 1, 1)[0]
	pid, epoch := n2.initProducer("User:broker", id)
	produce := func(epoch int16, idx int32) int16 { return n1.txnProduceAt(produceAddsVersion, id, pid, epoch, idx) }
	if code := produce(epoch, 0); code != 0 {
		t.Fatalf("a Produce v12 of a partition not yet in the transaction: error %d", code)
	}
	if off := n1.partition("data", 0).Offsets(); off.LogEnd != 1 || off.LastStable != 0 {
		t.Fatalf("after the added batch: offsets %+v, want it appended and open", off)
	}
	got := batchCodes(t, n2.batch("User:broker", batchTx(id, pid, epoch, true, dataTP(0))), id)
	wantCodes(t, "the coordinator's transaction", got[0], map[base.TopicPartition]int16{dataTP(0): 0})
	if code := produce(epoch+1, 1); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("a Produce v12 at a newer epoch than the coordinator's: error %d, want INVALID_PRODUCER_EPOCH", code)
	}
	if end := n1.partition("data", 1).Offsets().LogEnd; end != 0 {
		t.Fatalf("a refused batch was appended: log end %d", end)
	}
}

// The group coordinator of a version 2 client's TxnOffsetCommit adds the
// group's __consumer_offsets partition through the batched form; other
// internal topics stay refused.
func TestAddPartitionsToTxnBatchAddsTheOffsetsPartition(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic(offsets.TopicName, nil, []int32{1})
	rh.withTxns()
	id := txnIDsOn(t, 0, 1)[0]
	pid, epoch := rh.initProducer("User:ANONYMOUS", id)
	offsetsTP := base.TopicPartition{Topic: offsets.TopicName, Partition: 0}
	txnTP := base.TopicPartition{Topic: txn.TopicName, Partition: 0}
	got := batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, false, txnTP)), id)
	wantCodes(t, "adding a __transaction_state partition", got[0], map[base.TopicPartition]int16{txnTP: kerr.InvalidTopicException.Code})
	got = batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, false, offsetsTP)), id)
	wantCodes(t, "adding the group's partition", got[0], map[base.TopicPartition]int16{offsetsTP: 0})
	got = batchCodes(t, rh.batch("User:broker", batchTx(id, pid, epoch, true, offsetsTP)), id)
	wantCodes(t, "verifying it", got[0], map[base.TopicPartition]int16{offsetsTP: 0})
}
