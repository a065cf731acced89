package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLateTransactionalProduceCannotHangAPartition: a transactional batch
// for a partition its transaction never added (a late retry, a zombie
// producer) is refused with INVALID_TXN_STATE after the broker asks the
// coordinator (KIP-890 part 1). Appended, it would open a transaction
// nothing ever ends and hold the partition's last stable offset, and with
// it every read_committed consumer, forever (Kafka's hanging transactions
// before 3.6).
func TestLateTransactionalProduceCannotHangAPartition(t *testing.T) {
	t.Parallel()
	const topic, id = "txn-verify", "txn-verify-producer"
	s := startTxnProducer(t, topic, id)
	adm, cl, ctx, topicID, pid, epoch := s.adm, s.cl, s.ctx, s.topicID, s.pid, s.epoch

	produce := func(seq int32, value string) error {
		t.Helper()
		return rawTxnProduce(t, ctx, cl, topicID, topic, id, pid, epoch, seq, value)
	}
	requireStable := func(when string) {
		t.Helper()
		if lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false); lso != hw {
			t.Fatalf("%s: last stable offset %d behind the high watermark %d: a transaction hangs", when, lso, hw)
		}
	}

	if err := produce(0, "never added"); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("produce to a partition not in the transaction: %v, want INVALID_TXN_STATE", err)
	}
	requireStable("after the refused produce")

	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = id, pid, epoch
	at := kmsg.NewAddPartitionsToTxnRequestTopic()
	at.Topic, at.Partitions = topic, []int32{0}
	add.Topics = append(add.Topics, at)
	addResp := retryCoordinator(t, ctx, cl, add).(*kmsg.AddPartitionsToTxnResponse)
	if err := kerr.ErrorForCode(addResp.Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatalf("AddPartitionsToTxn: %v", err)
	}
	if err := produce(0, "in the transaction"); err != nil {
		t.Fatalf("produce to a partition in the transaction: %v", err)
	}
	if lso := listedOffset(t, adm, topic, true); lso != 0 {
		t.Fatalf("with the transaction open the last stable offset is %d, want 0", lso)
	}

	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 4 // transaction version 1: the epoch stays
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, false
	if err := kerr.ErrorForCode(retryCoordinator(t, ctx, cl, pinned{end}).(*kmsg.EndTxnResponse).ErrorCode); err != nil {
		t.Fatalf("EndTxn: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for listedOffset(t, adm, topic, true) != listedOffset(t, adm, topic, false) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	requireStable("after the abort")

	// The aborted transaction's producer retries late, in the same epoch.
	// While the coordinator completes the abort the answer is
	// NOT_ENOUGH_REPLICAS, which clients retry.
	err := produce(1, "late retry")
	for errors.Is(err, kerr.NotEnoughReplicas) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		err = produce(1, "late retry")
	}
	if !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("a late produce after the abort: %v, want INVALID_TXN_STATE", err)
	}
	requireStable("after the late produce")
}

// txnProducer is a broker with a one-partition topic and a transactional
// producer initialized on it, for tests that speak the protocol by hand.
type txnProducer struct {
	adm     *kadm.Client
	cl      *kgo.Client
	ctx     context.Context
	topicID [16]byte
	pid     int64
	epoch   int16
}

func startTxnProducer(t *testing.T, topic, id string) txnProducer {
	t.Helper()
	b := startBroker(t, t.TempDir())
	s := txnProducer{adm: newAdmin(t, b.Addr), cl: newClient(t, b.Addr), ctx: testContext(t, 30*time.Second)}
	createTopic(t, s.adm, topic, 1, nil)
	s.topicID = topicIDOf(t, s.adm, topic)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID = kmsg.StringPtr(id)
	init.TransactionTimeoutMillis = 60_000
	initResp := retryCoordinator(t, s.ctx, s.cl, init).(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(initResp.ErrorCode); err != nil {
		t.Fatalf("InitProducerId: %v", err)
	}
	s.pid, s.epoch = initResp.ProducerID, initResp.ProducerEpoch
	return s
}

// rawTxnProduce sends one transactional batch of producer pid for
// transactional id to partition 0 and returns the partition's error.
func rawTxnProduce(t *testing.T, ctx context.Context, cl *kgo.Client, topicID [16]byte, topic, id string, pid int64, epoch int16, seq int32, value string) error {
	t.Helper()
	return rawTxnProduceAt(t, ctx, cl, tv1ProduceVersion, topicID, topic, id, pid, epoch, seq, value)
}

// tv1ProduceVersion is the last Produce version of transaction version
// 1, whose clients add partitions themselves (AddPartitionsToTxn); from
// v12 on the broker adds them.
const tv1ProduceVersion = 11

// rawTxnProduceAt is rawTxnProduce at a Produce version.
func rawTxnProduceAt(t *testing.T, ctx context.Context, cl *kgo.Client, version int16, topicID [16]byte, topic, id string, pid int64, epoch int16, seq int32, value string) error {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.TransactionID = kmsg.StringPtr(id)
	req.Acks = -1
	req.TimeoutMillis = 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = transactionalBatch(pid, epoch, seq, []byte(value))
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Request(ctx, pinned{req})
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	return kerr.ErrorForCode(kresp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
}

// pinned is a request that a client sends at its own version.
type pinned struct{ kmsg.Request }

func (p pinned) MaxVersion() int16 { return p.GetVersion() }

// retryCoordinator sends a coordinator request until it is not answered
// with a retriable coordinator error.
func retryCoordinator(t *testing.T, ctx context.Context, cl *kgo.Client, req kmsg.Request) kmsg.Response {
	t.Helper()
	for {
		resp, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		var code int16
		switch r := resp.(type) {
		case *kmsg.InitProducerIDResponse:
			code = r.ErrorCode
		case *kmsg.EndTxnResponse:
			code = r.ErrorCode
		case *kmsg.AddPartitionsToTxnResponse:
			code = r.Topics[0].Partitions[0].ErrorCode
		}
		switch code {
		case kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.ConcurrentTransactions.Code:
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return resp
	}
}

// transactionalBatch is one record batch of a transactional producer with
// one record, and a correct CRC.
func transactionalBatch(pid int64, epoch int16, seq int32, v []byte) []byte {
	return encodeBatch(time.Now(), []kmsg.Record{{Value: v}}, batchProducer{id: pid, epoch: epoch, seq: seq, attrs: 0x10})
}

// TestVerificationCanBeTurnedOff: with
// transaction.partition.verification.enable=false the broker appends an
// unverified transactional batch as Kafka before 3.6 did, and the
// partition is left with a transaction its coordinator knows nothing of:
// the last stable offset stays behind it.
func TestVerificationCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "transaction.partition.verification.enable=false")
	const topic, id = "txn-unverified", "txn-unverified-producer"
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b.Addr)
	ctx := testContext(t, 30*time.Second)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID = kmsg.StringPtr(id)
	init.TransactionTimeoutMillis = 60_000
	initResp := retryCoordinator(t, ctx, cl, init).(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(initResp.ErrorCode); err != nil {
		t.Fatalf("InitProducerId: %v", err)
	}
	err := rawTxnProduce(t, ctx, cl, topicIDOf(t, adm, topic), topic, id, initResp.ProducerID, initResp.ProducerEpoch, 0, "never added")
	if err != nil {
		t.Fatalf("an unverified transactional produce: %v", err)
	}
	if lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false); lso != 0 || hw != 1 {
		t.Fatalf("last stable offset %d, high watermark %d; want 0 and 1 (a transaction nothing will end)", lso, hw)
	}
}

// TestVersion2TransactionAddsAndBumps: a client of transaction version 2
// (KIP-890 part 2) sends no AddPartitionsToTxn: its Produce v12 adds the
// partition to its transaction; EndTxn v5 bumps its epoch and hands it
// out; a late produce of the ended transaction, at the old epoch, is
// fenced instead of opening a transaction nothing would end; the next
// transaction runs at the new epoch.
func TestVersion2TransactionAddsAndBumps(t *testing.T) {
	t.Parallel()
	const topic, id = "txn-v2", "txn-v2-producer"
	s := startTxnProducer(t, topic, id)
	adm, cl, ctx, topicID, pid, epoch := s.adm, s.cl, s.ctx, s.topicID, s.pid, s.epoch
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	tv := int16(0)
	for _, f := range versions.FinalizedFeatures {
		if f.Name == "transaction.version" {
			tv = f.MaxVersionLevel
		}
	}
	if tv != 2 {
		t.Fatalf("finalized features %+v, want transaction.version 2", versions.FinalizedFeatures)
	}
	produce := func(epoch int16, seq int32, value string) error {
		t.Helper()
		return rawTxnProduceAt(t, ctx, cl, 12, topicID, topic, id, pid, epoch, seq, value)
	}
	if err := produce(epoch, 0, "added by the broker"); err != nil {
		t.Fatalf("produce v12 of a transaction: %v", err)
	}
	if lso := listedOffset(t, adm, topic, true); lso != 0 {
		t.Fatalf("with the transaction open the last stable offset is %d, want 0", lso)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 5
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	endResp := retryCoordinator(t, ctx, cl, pinned{end}).(*kmsg.EndTxnResponse)
	if err := kerr.ErrorForCode(endResp.ErrorCode); err != nil || endResp.ProducerID != pid || endResp.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn v5: %v, producer %d epoch %d; want producer %d epoch %d", err, endResp.ProducerID, endResp.ProducerEpoch, pid, epoch+1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for listedOffset(t, adm, topic, true) != 2 && time.Now().Before(deadline) { // the record and its marker
		time.Sleep(20 * time.Millisecond)
	}
	if lso := listedOffset(t, adm, topic, true); lso != 2 {
		t.Fatalf("after the commit the last stable offset is %d, want 2", lso)
	}

	err = produce(epoch, 1, "late, at the old epoch")
	if !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("a late produce at the ended transaction's epoch: %v, want it fenced", err)
	}
	if lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false); lso != hw {
		t.Fatalf("after the late produce the last stable offset %d is behind the high watermark %d: a transaction hangs", lso, hw)
	}
	if err := produce(epoch+1, 0, "the next transaction"); err != nil {
		t.Fatalf("the next transaction's produce: %v", err)
	}
}

// TestTransactionVersionDowngrade: `kafka-features downgrade
// --feature transaction.version=1` (UpdateFeatures) takes the cluster back
// to transaction version 1, across a restart: ApiVersions finalizes 1, so
// kgo adds its partitions itself and ends with EndTxn v4; transactions
// commit and abort as before. Upgrading again brings version 2 back.
func TestTransactionVersionDowngrade(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, partitions = "txn-tv1", 2
	createTopic(t, newAdmin(t, b.Addr), topic, partitions, nil)
	admin := newClient(t, b.Addr)
	setTV := func(level int16, upgradeType int8) {
		t.Helper()
		r := kmsg.NewPtrUpdateFeaturesRequest()
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", level, upgradeType
		r.FeatureUpdates = append(r.FeatureUpdates, u)
		resp, err := r.RequestWith(testContext(t, 10*time.Second), admin)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("UpdateFeatures to %d: %v %+v", level, err, resp)
		}
	}
	finalized := func() int16 {
		t.Helper()
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testContext(t, 10*time.Second), newClient(t, b.Addr))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range resp.FinalizedFeatures {
			if f.Name == "transaction.version" {
				return f.MaxVersionLevel
			}
		}
		return 0
	}
	setTV(1, 2) // a safe downgrade
	b.Stop()
	b.Restart()
	if level := finalized(); level != 1 {
		t.Fatalf("after the downgrade and a restart transaction.version is %d", level)
	}
	cl := txnClient(t, b.Addr, "txn-tv1-producer")
	committed := txnRecords(topic, "c", partitions, 10)
	aborted := txnRecords(topic, "a", partitions, 10)
	inTxn(t, cl, true, committed...)
	inTxn(t, cl, false, aborted...)
	setTV(2, 1)
	if level := finalized(); level != 2 {
		t.Fatalf("after the upgrade transaction.version is %d", level)
	}
	again := txnRecords(topic, "v2", partitions, 10)
	inTxn(t, txnClient(t, b.Addr, "txn-tv2-producer"), true, again...)
	writeSentinels(t, b.Addr, topic, partitions)
	requirePartitionValues(t, "read_committed", readToSentinels(t, b.Addr, topic, partitions, kgo.ReadCommitted()), valuesByPartition(committed, again))
}

// TestVerificationTurnedOffAtRunTime: transaction.partition.verification.enable
// is a dynamic broker config, as in Kafka: an unverified batch refused
// while it is on is appended once it is turned off cluster-wide.
func TestVerificationTurnedOffAtRunTime(t *testing.T) {
	t.Parallel()
	const topic, id = "txn-verify-dynamic", "txn-verify-dynamic-producer"
	s := startTxnProducer(t, topic, id)
	produce := func() error {
		t.Helper()
		return rawTxnProduce(t, s.ctx, s.cl, s.topicID, topic, id, s.pid, s.epoch, 0, "never added")
	}
	if err := produce(); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("with verification on: %v, want INVALID_TXN_STATE", err)
	}
	off := kadm.AlterConfig{Op: kadm.SetConfig, Name: "transaction.partition.verification.enable", Value: kadm.StringPtr("false")}
	if err := alterBrokerConfigs(t, s.adm, []kadm.AlterConfig{off}); err != nil {
		t.Fatalf("turning verification off cluster-wide: %v", err)
	}
	if err := produce(); err != nil {
		t.Fatalf("with verification turned off: %v", err)
	}
	if lso, hw := listedOffset(t, s.adm, topic, true), listedOffset(t, s.adm, topic, false); lso != 0 || hw != 1 {
		t.Fatalf("last stable offset %d, high watermark %d; want 0 and 1", lso, hw)
	}
}
