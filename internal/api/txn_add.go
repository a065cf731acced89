package api

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A version 2 client starts its next transaction as soon as EndTxn
// answers, while the markers of the last one are still being written: its
// first add finds the coordinator completing (CONCURRENT_TRANSACTIONS).
// The add is tried again here for a while, as Kafka's
// add.partitions.to.txn.retry.backoff.ms and .max.ms do (100 ms in all),
// since the markers are usually a few milliseconds from written; a client
// told to retry would otherwise wait for a metadata refresh first (kgo's
// is rate limited to one per 5 s). The first wait is 2 ms, doubling
// (Kafka's is 20 ms): a local marker write with its fsync takes about
// that long, and the transaction's latency is that wait.
const (
	addRetryBackoff = 2 * time.Millisecond
	addRetryMax     = 100 * time.Millisecond
)

// askTxnCoordinator verifies the partitions of c.verify with transactional
// id's coordinator, or adds them when c.add, and returns each one's code
// as the coordinator answered it (NOT_ENOUGH_REPLICAS when it could not be
// asked). The coordinator is the one here, unless another broker leads
// the id's __transaction_state partition and this one can reach it
// (Options.Peers): then that broker is asked, within peerTimeout.
func (h *Handler) askTxnCoordinator(ctx context.Context, id string, peerTimeout time.Duration, c *txnChecks) []int16 {
	backoff, giveUp := addRetryBackoff, time.Now().Add(addRetryMax)
	for {
		var codes []int16
		if leader, ok := h.remoteTxnCoordinator(id); ok {
			codes = h.verifyWithPeer(ctx, leader, peerTimeout, id, c)
		} else {
			codes = h.verifyLocally(ctx, id, c)
		}
		wait := min(backoff, time.Until(giveUp))
		if !c.add || !slices.Contains(codes, kerr.ConcurrentTransactions.Code) || wait <= 0 {
			return codes
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return codes
		case <-t.C:
		}
		backoff *= 2
	}
}
