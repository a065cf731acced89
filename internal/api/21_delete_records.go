package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
)

// DeleteRecords: v0-2. Moves the log start forward; -1 means the high
// watermark. Whole segments below the new start are deleted. Needs DELETE
// on the topic. As Kafka's DelayedDeleteRecords, a partition is answered
// once its low watermark (the least log start of its live replicas,
// broker.LowWatermark) has reached the new start, which is then the
// answer's low watermark: every live replica has dropped the records, and
// no failover brings them back. One not there by the request's timeout
// gets REQUEST_TIMED_OUT. A single node's partitions are there at once.
func init() { register(21, 0, 2, (*Handler).handleDeleteRecords) }

// lowWatermarkPoll is how often a DeleteRecords waiting for followers
// looks at its partitions' low watermarks again: they move with the
// followers' fetches, which wake no one.
const lowWatermarkPoll = 10 * time.Millisecond

// lowWatermarkWait is one partition of a DeleteRecords waiting for its low
// watermark to reach start.
type lowWatermarkWait struct {
	p            *partition.Partition
	start        base.Offset
	topic, entry int // the answer's indexes
}

func (h *Handler) handleDeleteRecords(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	deadline := time.Now().Add(time.Duration(r.TimeoutMillis) * time.Millisecond)
	img := h.opts.Meta.Image()
	var waits []lowWatermarkWait
	for _, rt := range r.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		denied := !h.allowedTopic(req, acl.OpDelete, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			p, code := h.fetchPartition(img.Topics[rt.Topic], rp.Partition, false)
			if denied {
				code = topicDenied
			} else if code == 0 {
				before := base.Offset(rp.Offset)
				if rp.Offset == -1 {
					before = p.Offsets().HighWatermark
				}
				start, err := p.DeleteRecords(before)
				code, _ = errorCode(err)
				if err == nil {
					waits = append(waits, lowWatermarkWait{p: p, start: start, topic: len(resp.Topics), entry: len(st.Partitions)})
				}
			}
			sp.ErrorCode = code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if waits = h.settleLowWatermarks(resp, waits); len(waits) == 0 {
		return done(resp)
	}
	return Reply{Wait: func() kmsg.Response {
		h.awaitLowWatermarks(ctx, req.Stopping, resp, waits, deadline)
		return resp
	}}
}

// settleLowWatermarks answers each wait whose partition's low watermark
// has reached its start (or that failed) and returns those still waiting.
func (h *Handler) settleLowWatermarks(resp *kmsg.DeleteRecordsResponse, waits []lowWatermarkWait) []lowWatermarkWait {
	left := waits[:0]
	for _, w := range waits {
		sp := &resp.Topics[w.topic].Partitions[w.entry]
		low, err := h.opts.Broker.LowWatermark(w.p)
		switch {
		case err != nil:
			sp.ErrorCode, _ = errorCode(err)
		case low >= w.start:
			sp.LowWatermark = int64(low)
		default:
			left = append(left, w)
		}
	}
	return left
}

// awaitLowWatermarks polls the waits until each is settled, answering
// those left at deadline (or when the connection goes, or the server
// stops) REQUEST_TIMED_OUT.
func (h *Handler) awaitLowWatermarks(ctx context.Context, stop <-chan struct{}, resp *kmsg.DeleteRecordsResponse, waits []lowWatermarkWait, deadline time.Time) {
	tick := time.NewTicker(lowWatermarkPoll)
	defer tick.Stop()
	for len(waits) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			deadline = time.Now()
			continue
		case <-stop:
			deadline = time.Now()
			continue
		case <-tick.C:
		}
		waits = h.settleLowWatermarks(resp, waits)
	}
	for _, w := range waits {
		resp.Topics[w.topic].Partitions[w.entry].ErrorCode = kerr.RequestTimedOut.Code
	}
}
