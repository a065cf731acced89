package api

import (
	"context"
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/metadata"
)

// WriteTxnMarkers: v0-1, the transaction coordinator of another broker
// writing the COMMIT or ABORT marker of a completing transaction to
// partitions led here (v2 carries KIP-890's TransactionVersion, which
// Strata does not do). As Kafka's KafkaApis.handleWriteTxnMarkersRequest:
//   - it needs CLUSTER_ACTION on the cluster; refused, every partition is
//     CLUSTER_AUTHORIZATION_FAILED;
//   - a __consumer_offsets partition hands the marker to the group
//     coordinator here (group.TxnCompleted, as the local marker writer
//     does), which writes it and settles the producer's pending offsets. A
//     coordinator that is not here (yet) is NOT_LEADER_OR_FOLLOWER, as
//     Kafka translates NOT_COORDINATOR and the loading codes for the sender;
//   - any other partition must be led here (NOT_LEADER_OR_FOLLOWER;
//     UNKNOWN_TOPIC_OR_PARTITION when the image has none); its marker is
//     answered once fdatasynced and taken by the ISR (REQUEST_TIMED_OUT if
//     the ISR does not take it in time);
//   - a marker a newer one already overtook (an older producer epoch, an
//     older coordinator epoch) is INVALID_PRODUCER_EPOCH or
//     TRANSACTION_COORDINATOR_FENCED: the sender drops it.
//
// Every partition of the request is answered, in request order.
func init() { register(27, 0, 1, (*Handler).handleWriteTxnMarkers) }

// markerWait completes the answer of one partition whose write started.
type markerWait struct {
	code *int16
	wait func(ctx context.Context) int16
}

func (h *Handler) handleWriteTxnMarkers(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.WriteTxnMarkersRequest)
	resp := r.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	allowed := h.allowedCluster(req, acl.OpClusterAction)
	img := h.opts.Meta.Image()
	var waits []markerWait
	// Every slice below is made at its final length: waits point into them.
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(r.Markers))
	for i, m := range r.Markers {
		rm := &resp.Markers[i]
		*rm = kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		rm.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(m.Topics))
		for j, mt := range m.Topics {
			rt := &rm.Topics[j]
			*rt = kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = mt.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(mt.Partitions))
			for k, idx := range mt.Partitions {
				sp := &rt.Partitions[k]
				*sp = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				sp.Partition = idx
				if !allowed {
					sp.ErrorCode = clusterDenied
					continue
				}
				code, wait := h.startMarker(img, m, mt.Topic, idx)
				sp.ErrorCode = code
				if wait != nil {
					waits = append(waits, markerWait{code: &sp.ErrorCode, wait: wait})
				}
			}
		}
	}
	if len(waits) == 0 {
		return done(resp)
	}
	return Reply{Wait: func() kmsg.Response {
		// Different partitions are different files and ISRs: their waits
		// run in parallel rather than one after another.
		var wg sync.WaitGroup
		for _, w := range waits {
			wg.Add(1)
			go func() {
				defer wg.Done()
				*w.code = w.wait(ctx)
			}()
		}
		wg.Wait()
		return resp
	}}
}

// startMarker starts writing marker m to partition idx of topic. It
// returns the partition's code, and while that is 0 what to wait for
// before answering (nil: nothing).
func (h *Handler) startMarker(img *metadata.Image, m kmsg.WriteTxnMarkersRequestMarker, topic string, idx int32) (int16, func(context.Context) int16) {
	if m.ProducerID < 0 || m.ProducerEpoch < 0 || m.CoordinatorEpoch < 0 {
		// Only a transactional producer's transactions have markers, and
		// only a coordinator's partition epoch fences them.
		return kerr.InvalidRequest.Code, nil
	}
	t := img.Topics[topic]
	if t == nil || idx < 0 || int(idx) >= len(t.Partitions) {
		return kerr.UnknownTopicOrPartition.Code, nil
	}
	switch topic {
	case h.groups.topic:
		return h.startGroupMarker(m, idx)
	case h.txns.topic:
		// No transaction holds a partition of it (AddPartitionsToTxn
		// refuses internal topics), and a marker there would be in the
		// way of its coordinator's records.
		return kerr.InvalidTopicException.Code, nil
	}
	p, code := h.hostedPartition(t, idx, false, true)
	if code != 0 {
		return code, nil
	}
	_, wait, err := p.AppendMarker(base.ProducerID(m.ProducerID), m.ProducerEpoch, m.Committed, m.CoordinatorEpoch)
	if err != nil {
		code, _ := errorCode(err)
		return code, nil
	}
	return 0, func(context.Context) int16 {
		// Bounded by the partition's replication timeout.
		code, _ := errorCode(wait())
		return code
	}
}

// startGroupMarker hands marker m of __consumer_offsets partition idx to
// the group coordinator here.
func (h *Handler) startGroupMarker(m kmsg.WriteTxnMarkersRequestMarker, idx int32) (int16, func(context.Context) int16) {
	rt := h.groups.rt
	if rt == nil {
		return kerr.NotLeaderForPartition.Code, nil
	}
	ch := make(chan error, 1)
	ev := group.TxnCompleted{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Commit: m.Committed, CoordinatorEpoch: m.CoordinatorEpoch}
	rt.SubmitEvent(idx, ev, func(err error) { ch <- err })
	return 0, func(ctx context.Context) int16 {
		select {
		case err := <-ch:
			return groupMarkerCode(err)
		case <-ctx.Done():
			// The connection is going away; the sender retries.
			return kerr.RequestTimedOut.Code
		}
	}
}

// groupMarkerCode is the code of the group coordinator's answer to a
// TxnCompleted.
func groupMarkerCode(err error) int16 {
	var ce *runtime.CodeError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, group.ErrFencedCoordinator): // before ErrStaleMarker, which it matches too
		return kerr.TransactionCoordinatorFenced.Code
	case errors.Is(err, group.ErrStaleMarker):
		return kerr.InvalidProducerEpoch.Code
	case errors.As(err, &ce):
		switch ce.Code {
		case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
			// The sender knows partitions, not coordinators: the
			// partition's coordinator is not ready here.
			return kerr.NotLeaderForPartition.Code
		}
		return ce.Code
	}
	code, _ := errorCode(err)
	return code
}
