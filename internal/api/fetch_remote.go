package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/partition"
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
// The reading goroutine sets read and err (or skipped), then hands the
// remoteRead back over a channel; only then does the fetch look at them.
type remoteRead struct {
	sp      *kmsg.FetchResponseTopicPartition
	t       fetchTarget
	iso     partition.Isolation
	limit   int
	first   bool
	read    broker.RemoteRead
	err     error
	skipped bool // the fetch stopped waiting before this read started
}

// discard closes what a read holds that no response will send.
func (rr *remoteRead) discard() {
	rr.read.Region.Close()
}

// readRemote reads reads in parallel and fills their partitions, waiting
// at most remote.fetch.max.wait.ms; it returns the record bytes added.
// Regions go into bufs, which the response's release closes; the reads
// the fetch stopped waiting for are discarded as they finish.
func (h *Handler) readRemote(reads []*remoteRead, bufs *fetchBuffers) int {
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
	for done := 0; done < len(reads); done++ {
		select {
		case rr := <-finished:
			total += h.applyRemoteRead(rr, bufs)
		case <-timer.C:
			close(abandoned) // reads not started yet are skipped
			go discardRemoteReads(finished, len(reads)-done)
			return total
		}
	}
	return total
}

// discardRemoteReads waits for the n reads a fetch stopped waiting for
// and closes what they hold.
func discardRemoteReads(finished <-chan *remoteRead, n int) {
	for range n {
		(<-finished).discard()
	}
}

// remoteReadWorker reads from queue until it is empty, handing every read
// back; once the fetch stopped waiting it starts no more reads. A read is
// bounded by the broker (its remote operation timeout), not by the fetch,
// so that a read the fetch gave up on still fills the cache.
func (h *Handler) remoteReadWorker(queue <-chan *remoteRead, finished chan<- *remoteRead, abandoned <-chan struct{}) {
	for rr := range queue {
		select {
		case <-abandoned:
			rr.skipped = true
		default:
			rr.read, rr.err = h.opts.Broker.ReadRemote(context.Background(), rr.t.part, rr.t.offset, rr.limit)
		}
		finished <- rr
	}
}

// applyRemoteRead puts one finished read into its partition's answer and
// returns the record bytes added.
func (h *Handler) applyRemoteRead(rr *remoteRead, bufs *fetchBuffers) int {
	if rr.err != nil {
		// Unclassified (bucket) errors answer KAFKA_STORAGE_ERROR: retriable.
		code, msg := errorCode(rr.err)
		h.logger.Warn("remote fetch", "partition", rr.t.part.TP().String(), "offset", int64(rr.t.offset), "err", msg)
		rr.sp.ErrorCode = code
		return 0
	}
	n := rr.read.Size()
	switch {
	case !rr.first && n > rr.limit:
		rr.discard()
		return 0
	case rr.read.Region.File != nil:
		rr.sp.RecordBatches = bufs.addRegion(rr.read.Region, rr.t.order)
		addAborted(rr.sp, rr.t, rr.iso, rr.read.Region.Next)
	case n > 0:
		rr.sp.RecordBatches = rr.read.Batches
		addAborted(rr.sp, rr.t, rr.iso, nextOffsetAfter(rr.read.Batches))
	}
	return n
}

// remoteFetchMaxWait is remote.fetch.max.wait.ms as this broker runs with
// it now (dynamic, as in Kafka).
func (h *Handler) remoteFetchMaxWait() time.Duration {
	if h.opts.Meta != nil && h.opts.Broker != nil {
		b := h.opts.Config.WithDynamic(dynamicOf(h.opts.Meta.Image(), h.opts.Broker.NodeID()))
		if w := b.RemoteSettings().FetchMaxWait; w > 0 {
			return w
		}
	}
	return defaultRemoteFetchMaxWait
}
