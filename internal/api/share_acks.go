package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/share"
	"github.com/strata-broker/strata/internal/share/leader"
)

// wireAck is one acknowledgement batch as ShareFetch and ShareAcknowledge
// carry it: offsets inclusive, one type or one per offset.
type wireAck struct {
	first, last int64
	types       []int8
}

// maxAckType is the highest acknowledgement type a request may carry:
// Reject, or Renew for a v2 request that says it holds renewals (KIP-1222).
func maxAckType(version int16, isRenewAck bool) share.AckType {
	if version >= 2 && isRenewAck {
		return share.AckRenew
	}
	return share.AckReject
}

// acksOf turns a partition's wire batches into share.Acks, as Kafka's
// validateAcknowledgementBatches checks them: a malformed batch is
// INVALID_REQUEST for the whole partition.
func acksOf(batches []wireAck, maxType share.AckType) ([]share.Ack, int16) {
	acks := make([]share.Ack, 0, len(batches))
	for _, b := range batches {
		if b.first < 0 || b.last < b.first || len(b.types) == 0 {
			return nil, kerr.InvalidRequest.Code
		}
		types := make([]share.AckType, len(b.types))
		for i, t := range b.types {
			types[i] = share.AckType(t)
		}
		acks = append(acks, share.Ack{Offsets: base.Range{Start: base.Offset(b.first), End: base.Offset(b.last) + 1}, Types: types})
	}
	if share.ValidateAcks(acks, maxType) != nil {
		return nil, kerr.InvalidRequest.Code
	}
	return acks, 0
}

// shareErrorCode is the partition error code of an acknowledgement's or a
// fetch's failure.
func shareErrorCode(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, share.ErrInvalidRecordState):
		return kerr.InvalidRecordState.Code
	case errors.Is(err, share.ErrInvalidAcknowledgement):
		return kerr.InvalidRequest.Code
	case errors.Is(err, leader.ErrFenced):
		// This leadership's view is stale; the client finds the leader.
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, errShareStateUnavailable):
		return kerr.CoordinatorNotAvailable.Code
	}
	code, _ := errorCode(err)
	return code
}

// acknowledgeShare applies member's acks to one partition of group and
// returns the partition's code. The acknowledgement is durable when it
// returns 0.
func (h *Handler) acknowledgeShare(ctx context.Context, req *Request, group, member string, pk sharePartitionKey, batches []wireAck, maxType share.AckType, set shareSettings) int16 {
	acks, code := acksOf(batches, maxType)
	if code != 0 || len(acks) == 0 {
		return code
	}
	t, code := h.sharePartition(req, pk)
	if code != 0 {
		return code
	}
	key := leader.Key{Group: group, Topic: pk.topicID, Partition: pk.partition}
	return shareErrorCode(h.shares.Acknowledge(ctx, key, member, boundsOf(t.part), set.forPartition(ctx, h, t), acks))
}
