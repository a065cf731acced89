package api

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// TxnOffsetCommit: offsets committed inside a transaction, served by the
// group's __consumer_offsets partition: they stay pending until the
// transaction's marker commits (or aborts) them. Versions as the group
// coordinator implements them, and v5 (transaction version 2), whose
// client sends no AddOffsetsToTxn: the group's partition is added to its
// transaction here first (addOffsetsPartition), then the request goes on
// as v4, which it equals. Partitions of topics that do not exist get
// UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
func init() {
	if v := groupMax(28); v != txnCommitAddsVersion-1 {
		panic(fmt.Sprintf("api: the group coordinator serves TxnOffsetCommit v%d; v%d is forwarded as v%d", v, txnCommitAddsVersion, txnCommitAddsVersion-1))
	}
	register(28, 0, txnCommitAddsVersion, (*Handler).handleTxnOffsetCommit)
}

func (h *Handler) handleTxnOffsetCommit(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	if code := h.txnCommitDenial(req, r); code != 0 {
		return done(group.ErrorResponse(req.Body, code))
	}
	img := h.opts.Meta.Image()
	known, unknown := splitTxnCommitTopics(r.Topics, h.commitRefusal(req, img))
	if len(known) == 0 {
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = unknown
		return done(resp)
	}
	p, ok := h.groups.partitionFor(r.Group)
	if !ok {
		return done(group.ErrorResponse(req.Body, kerr.NotCoordinator.Code))
	}
	fwd := *r
	fwd.Topics = known
	timeout := h.opts.Config.OffsetsCommitTimeout
	if r.Version >= txnCommitAddsVersion {
		fwd.Version = txnCommitAddsVersion - 1
		if code := h.addOffsetsPartition(ctx, r, p, transactionsV2(img), timeout); code != 0 {
			return done(group.ErrorResponse(req.Body, code))
		}
	}
	ch := h.groups.submit(req, p, &fwd)
	return Reply{Wait: func() kmsg.Response {
		resp := awaitCommit(ctx, ch, &fwd, timeout).(*kmsg.TxnOffsetCommitResponse)
		resp.Version = r.Version
		resp.Topics = mergeByTopic(resp.Topics, unknown,
			func(t *kmsg.TxnOffsetCommitResponseTopic) string { return t.Topic },
			func(t *kmsg.TxnOffsetCommitResponseTopic) *[]kmsg.TxnOffsetCommitResponseTopicPartition {
				return &t.Partitions
			})
		return resp
	}}
}

// splitTxnCommitTopics separates the partitions to commit from those
// refusal refuses, answered with its code.
func splitTxnCommitTopics(topics []kmsg.TxnOffsetCommitRequestTopic, refusal func(topic string, p int32) int16) ([]kmsg.TxnOffsetCommitRequestTopic, []kmsg.TxnOffsetCommitResponseTopic) {
	var known []kmsg.TxnOffsetCommitRequestTopic
	var unknown []kmsg.TxnOffsetCommitResponseTopic
	for _, rt := range topics {
		keep := rt
		keep.Partitions = nil
		missing := kmsg.NewTxnOffsetCommitResponseTopic()
		missing.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			code := refusal(rt.Topic, rp.Partition)
			if code == 0 {
				keep.Partitions = append(keep.Partitions, rp)
				continue
			}
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			missing.Partitions = append(missing.Partitions, sp)
		}
		if len(keep.Partitions) > 0 {
			known = append(known, keep)
		}
		if len(missing.Partitions) > 0 {
			unknown = append(unknown, missing)
		}
	}
	return known, unknown
}

// txnCommitDenial is TRANSACTIONAL_ID_AUTHORIZATION_FAILED without WRITE on
// the transactional id, GROUP_AUTHORIZATION_FAILED without READ on the
// group, else 0 (Kafka checks in this order).
func (h *Handler) txnCommitDenial(req *Request, r *kmsg.TxnOffsetCommitRequest) int16 {
	switch {
	case !h.allowedTxn(req, acl.OpWrite, r.TransactionalID):
		return txnDenied
	case !h.allowedGroup(req, acl.OpRead, r.Group):
		return groupDenied
	}
	return 0
}

// addOffsetsPartition adds the group's __consumer_offsets partition p to
// the transaction of a version 2 client (what AddOffsetsToTxn does for a
// version 1 one), with the transaction's coordinator here or on its
// broker; unless add (transaction.version below 2 finalized) it only verifies the
// partition is in the transaction, as Kafka does (and not at all with
// transaction.partition.verification.enable=false). It returns 0 or the
// code every partition of the commit is answered with: a coordinator that
// is busy ending the previous transaction, loading or unreachable is
// COORDINATOR_NOT_AVAILABLE, which clients retry.
func (h *Handler) addOffsetsPartition(ctx context.Context, r *kmsg.TxnOffsetCommitRequest, p int32, add bool, timeout time.Duration) int16 {
	c := &txnChecks{pid: r.ProducerID, epoch: r.ProducerEpoch, add: add,
		verify: []txnVerify{{tp: base.TopicPartition{Topic: h.groups.topic, Partition: p}}}}
	if !c.add && !h.txnPartitionVerification() {
		return 0
	}
	code := producerVerifyCode(h.askTxnCoordinator(ctx, r.TransactionalID, min(max(timeout, verifyPeerMinTimeout), verifyPeerMaxTimeout), c)[0])
	if code == kerr.NotEnoughReplicas.Code {
		return kerr.CoordinatorNotAvailable.Code
	}
	return code
}
