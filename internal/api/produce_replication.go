package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// awaitReplication holds the answer of the acks=all batches appended to
// partitions with other replicas until each is replicated, as Kafka's
// DelayedProduce: the partition's high watermark has reached the batch's
// end (broker.AcksAllDone, which answers NOT_ENOUGH_REPLICAS_AFTER_APPEND
// if the ISR shrank below min.insync.replicas meanwhile, and
// NOT_LEADER_OR_FOLLOWER if this node stopped leading). Those not
// replicated by deadline (the request's timeout), or when the server stops
// (stop closed: a controlled shutdown that could not move the leadership
// away), get REQUEST_TIMED_OUT.
//
// It waits on the partitions' change channels, which fire when the high
// watermark moves, on the request's own goroutine: a single node's
// partitions have one replica and never get here.
func (h *Handler) awaitReplication(ctx context.Context, stop <-chan struct{}, pending []pendingSync, deadline time.Time) {
	var chans []<-chan struct{}
	for {
		chans = chans[:0]
		for i := range pending {
			ps := &pending[i]
			if ps.replicated == nil {
				continue
			}
			// The channel first: a move after the check still wakes us.
			ch := ps.replicated.Changed()
			done, err := h.opts.Broker.AcksAllDone(ps.replicated, ps.end)
			if !done {
				chans = append(chans, ch)
				continue
			}
			if err != nil {
				ps.part.ErrorCode, _ = errorCode(err)
				ps.part.BaseOffset = -1
			}
			ps.replicated = nil
		}
		if len(chans) == 0 {
			return
		}
		if !waitAny(ctx, stop, chans, deadline) {
			break
		}
	}
	for i := range pending {
		if ps := &pending[i]; ps.replicated != nil {
			ps.part.ErrorCode = kerr.RequestTimedOut.Code
			ps.part.BaseOffset = -1
			ps.replicated = nil
		}
	}
}
