package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The partitions of one fetch that lie below their local log start are
// read from the remote tier after the local ones, in parallel, and the
// fetch waits for them at most remote.fetch.max.wait.ms (Kafka's
// DelayedRemoteFetch): a partition not read by then is answered with no
// records and no error, while its read goes on in the background and
// warms the chunk cache for the consumer's next fetch.

// remoteReadParallel bounds the partitions of one fetch read from the
// remote tier at once.
const remoteReadParallel = 8

// defaultRemoteFetchMaxWait is remote.fetch.max.wait.ms's default, for a
// Config that leaves it unset.
const defaultRemoteFetchMaxWait = 500 * time.Millisecond

// remoteRead is one partition of a fetch to read from the remote tier.
// limit was reserved from the fetch's byte budget in request order; first
// says no partition before it has data, so it may exceed limit (KIP-74).
// The reading goroutine sets records and err, then hands the remoteRead
// back over a channel; only then does the fetch look at them.
type remoteRead struct {
	sp      *kmsg.FetchResponseTopicPartition
	t       fetchTarget
	limit   int
	first   bool
	records []byte
	err     error
}

// readRemote reads reads in parallel and fills their partitions, waiting
// at most remote.fetch.max.wait.ms; it returns the record bytes added.
func (h *Handler) readRemote(reads []*remoteRead) int {
	queue := make(chan *remoteRead, len(reads))
	for _, rr := range reads {
		queue <- rr
	}
	close(queue)
	// Buffered for every read, so a worker never blocks on a fetch that
	// stopped waiting.
	finished := make(chan *remoteRead, len(reads))
	abandoned := make(chan struct{})
	for range min(remoteReadParallel, len(reads)) {
		go h.remoteReadWorker(queue, finished, abandoned)
	}
	timer := time.NewTimer(h.remoteFetchMaxWait())
	defer timer.Stop()
	total := 0
	for range reads {
		select {
		case rr := <-finished:
			total += h.applyRemoteRead(rr)
		case <-timer.C:
			close(abandoned) // reads not started yet are skipped
			return total
		}
	}
	return total
}

// remoteReadWorker reads from queue until it is empty; once the fetch
// stopped waiting it starts no more reads. A read is bounded by the
// broker (its remote operation timeout), not by the fetch, so that a read
// the fetch gave up on still fills the cache.
func (h *Handler) remoteReadWorker(queue <-chan *remoteRead, finished chan<- *remoteRead, abandoned <-chan struct{}) {
	for rr := range queue {
		select {
		case <-abandoned:
			continue
		default:
		}
		rr.records, rr.err = h.opts.Broker.ReadRemote(context.Background(), rr.t.part, rr.t.offset, rr.limit)
		finished <- rr
	}
}

// applyRemoteRead puts one finished read into its partition's answer and
// returns the record bytes added.
func (h *Handler) applyRemoteRead(rr *remoteRead) int {
	if rr.err != nil {
		// Unclassified (bucket) errors answer KAFKA_STORAGE_ERROR: retriable.
		code, msg := errorCode(rr.err)
		h.logger.Warn("remote fetch", "partition", rr.t.part.TP().String(), "offset", int64(rr.t.offset), "err", msg)
		rr.sp.ErrorCode = code
		return 0
	}
	if !rr.first && len(rr.records) > rr.limit {
		return 0
	}
	if len(rr.records) > 0 {
		rr.sp.RecordBatches = rr.records
	}
	return len(rr.records)
}

func (h *Handler) remoteFetchMaxWait() time.Duration {
	if w := h.opts.Config.RemoteTier.FetchMaxWait; w > 0 {
		return w
	}
	return defaultRemoteFetchMaxWait
}
