package api

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/metadata"
)

// The round trip of a verification with another broker's coordinator is
// bounded by the producer's own produce timeout, within these: a zero
// timeout (acks=0 producers may send one) must still leave time to ask,
// and the connection's next requests wait behind this one.
const (
	verifyPeerMinTimeout = time.Second
	verifyPeerMaxTimeout = 5 * time.Second
)

func verifyPeerTimeout(produceTimeoutMillis int32) time.Duration {
	return min(max(time.Duration(produceTimeoutMillis)*time.Millisecond, verifyPeerMinTimeout), verifyPeerMaxTimeout)
}

// batchAddPartitions is an AddPartitionsToTxn that a Requestor negotiates
// at v4 at most: franz-go picks the highest version both ends know, and v5
// is KIP-890 part 2's.
type batchAddPartitions struct {
	*kmsg.AddPartitionsToTxnRequest
}

func (batchAddPartitions) MaxVersion() int16 { return addPartitionsBatchVersion }

// remoteTxnCoordinator is the broker to verify transactional id's
// partitions with, when that is another broker this one can reach: the
// leader of the id's __transaction_state partition. false means the
// coordinator here is asked: on a single node (no Options.Peers), when
// this broker leads the partition, or when no broker does (the
// coordinator here then answers NOT_COORDINATOR, which the producer
// retries).
func (h *Handler) remoteTxnCoordinator(id string) (int32, bool) {
	if h.opts.Peers == nil {
		return 0, false
	}
	t, ok := h.opts.Meta.Image().Topics[h.txns.topic]
	if !ok || len(t.Partitions) == 0 {
		return 0, false
	}
	leader := t.Partitions[offsets.PartitionFor(id, int32(len(t.Partitions)))].Leader
	if leader == metadata.NoLeader || leader == h.opts.Broker.NodeID() {
		return 0, false
	}
	return leader, true
}

// verifyWithPeer asks broker leader, the coordinator of transactional id,
// about every partition of c.verify in one AddPartitionsToTxn v4 with
// VerifyOnly unless c adds them (Kafka's AddPartitionsToTxnManager), and
// returns each partition's code. A coordinator that cannot be asked in
// time is NOT_ENOUGH_REPLICAS, which the producer retries.
func (h *Handler) verifyWithPeer(ctx context.Context, leader int32, timeout time.Duration, id string, c *txnChecks) []int16 {
	codes := make([]int16, len(c.verify))
	unverified := func(code int16) []int16 {
		for i := range codes {
			codes[i] = code
		}
		return codes
	}
	peer, err := h.opts.Peers(leader)
	if err != nil {
		h.logger.Warn("no connection to the transaction coordinator to verify a produce", "broker", leader, "transactional_id", id, "err", err)
		return unverified(kerr.NotEnoughReplicas.Code)
	}
	req := verifyOnlyRequest(id, c)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kresp, err := peer.Request(ctx, batchAddPartitions{req})
	if err != nil {
		h.logger.Warn("verifying a produce with the transaction coordinator", "broker", leader, "transactional_id", id, "err", err)
		return unverified(kerr.NotEnoughReplicas.Code)
	}
	resp, ok := kresp.(*kmsg.AddPartitionsToTxnResponse)
	switch {
	case !ok:
		h.logger.Error("the transaction coordinator answered a verification with another response", "broker", leader, "response", fmt.Sprintf("%T", kresp))
		return unverified(kerr.NotEnoughReplicas.Code)
	case req.Version < addPartitionsBatchVersion:
		// As Kafka's AddPartitionsToTxnManager: a coordinator that cannot
		// verify (a broker of an older version, during an upgrade) lets
		// the produce through unverified. The request it got names no
		// transactional id at v0-3: it changed nothing.
		h.logger.Warn("the transaction coordinator does not verify (AddPartitionsToTxn v4); producing unverified", "broker", leader, "version", req.Version)
		return codes
	case resp.ErrorCode == clusterDenied:
		// As Kafka: a producer is not told about the brokers' ACLs.
		h.logger.Error("the transaction coordinator refuses this broker's verification: it needs CLUSTER_ACTION on the cluster", "broker", leader)
		return unverified(kerr.InvalidTxnState.Code)
	case resp.ErrorCode != 0:
		return unverified(resp.ErrorCode)
	}
	answers := map[base.TopicPartition]int16{}
	for _, rt := range resp.Transactions {
		if rt.TransactionalID != id {
			continue
		}
		for _, t := range rt.Topics {
			for _, p := range t.Partitions {
				answers[base.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
			}
		}
	}
	for i, v := range c.verify {
		code, ok := answers[v.tp]
		if !ok {
			// Not answered is not verified.
			code = kerr.NotEnoughReplicas.Code
		}
		codes[i] = code
	}
	return codes
}

// verifyOnlyRequest is the batched AddPartitionsToTxn of the partitions
// of c.verify, for transactional id: verify only, unless c adds them.
func verifyOnlyRequest(id string, c *txnChecks) *kmsg.AddPartitionsToTxnRequest {
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, c.pid, c.epoch, !c.add
	topicIndex := map[string]int{}
	for _, v := range c.verify {
		j, ok := topicIndex[v.tp.Topic]
		if !ok {
			j = len(tx.Topics)
			topicIndex[v.tp.Topic] = j
			t := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			t.Topic = v.tp.Topic
			tx.Topics = append(tx.Topics, t)
		}
		tx.Topics[j].Partitions = append(tx.Topics[j].Partitions, v.tp.Partition)
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = addPartitionsBatchVersion
	req.Transactions = append(req.Transactions, tx)
	return req
}
