package tier

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-broker/strata/internal/base"
)

// Stats counts what the executors do, per partition, for Kafka's KIP-963
// meters: Remote{Copy,Fetch,Delete}{Requests,Errors}PerSec and
// Remote{Copy,Fetch}BytesPerSec. Copier, Reader and Deleter add to it;
// cmd reads Snapshot when /metrics is scraped (this package knows no
// metrics library). Counts only grow, and a partition's stay after its
// topic is deleted: a Prometheus counter must not go back, and the number
// of partitions ever tiered by one process bounds the map.
//
// A nil *Stats counts nothing, so an executor built without one (tests,
// tools) needs no special case. Safe for concurrent use.
type Stats struct {
	mu struct {
		sync.Mutex
		parts map[base.TopicPartition]*partitionCounters
	}
}

// partitionCounters are one partition's counts. They are atomics so that
// an executor holds Stats.mu only to find them, never while counting.
type partitionCounters struct {
	copyRequests, copyErrors, copyBytes    atomic.Int64
	fetchRequests, fetchErrors, fetchBytes atomic.Int64
	deleteRequests, deleteErrors           atomic.Int64
}

// PartitionStats is one partition's counts at one moment.
type PartitionStats struct {
	TP base.TopicPartition
	// CopyRequests counts upload attempts (RemoteCopyRequestsPerSec),
	// CopyErrors those that failed, CopyBytes the .log bytes of those that
	// reached COPY_FINISHED (RemoteCopyBytesPerSec).
	CopyRequests, CopyErrors, CopyBytes int64
	// FetchRequests counts remote reads (RemoteFetchRequestsPerSec),
	// FetchErrors those that failed, FetchBytes the batch bytes they
	// returned (RemoteFetchBytesPerSec).
	FetchRequests, FetchErrors, FetchBytes int64
	// DeleteRequests counts remote segment deletions
	// (RemoteDeleteRequestsPerSec), DeleteErrors those that failed.
	DeleteRequests, DeleteErrors int64
}

// Snapshot returns every partition's counts, sorted by topic and partition.
func (s *Stats) Snapshot() []PartitionStats {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PartitionStats, 0, len(s.mu.parts))
	for tp, c := range s.mu.parts {
		out = append(out, PartitionStats{
			TP:           tp,
			CopyRequests: c.copyRequests.Load(), CopyErrors: c.copyErrors.Load(), CopyBytes: c.copyBytes.Load(),
			FetchRequests: c.fetchRequests.Load(), FetchErrors: c.fetchErrors.Load(), FetchBytes: c.fetchBytes.Load(),
			DeleteRequests: c.deleteRequests.Load(), DeleteErrors: c.deleteErrors.Load(),
		})
	}
	slices.SortFunc(out, func(a, b PartitionStats) int {
		return cmp.Or(cmp.Compare(a.TP.Topic, b.TP.Topic), cmp.Compare(a.TP.Partition, b.TP.Partition))
	})
	return out
}

// of returns tp's counters, creating them on first use; nil when s is nil.
func (s *Stats) of(tp base.TopicPartition) *partitionCounters {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.mu.parts[tp]
	if !ok {
		if s.mu.parts == nil {
			s.mu.parts = make(map[base.TopicPartition]*partitionCounters)
		}
		c = &partitionCounters{}
		s.mu.parts[tp] = c
	}
	return c
}

// copyStarted counts an upload attempt of tp.
func (s *Stats) copyStarted(tp base.TopicPartition) {
	if c := s.of(tp); c != nil {
		c.copyRequests.Add(1)
	}
}

// copyFailed counts an upload attempt of tp that failed.
func (s *Stats) copyFailed(tp base.TopicPartition) {
	if c := s.of(tp); c != nil {
		c.copyErrors.Add(1)
	}
}

// copied counts sizeBytes uploaded by an attempt that finished.
func (s *Stats) copied(tp base.TopicPartition, sizeBytes int64) {
	if c := s.of(tp); c != nil {
		c.copyBytes.Add(sizeBytes)
	}
}

// fetched counts one remote read of tp that returned n bytes, or failed
// with err.
func (s *Stats) fetched(tp base.TopicPartition, n int, err error) {
	c := s.of(tp)
	if c == nil {
		return
	}
	c.fetchRequests.Add(1)
	if err != nil {
		c.fetchErrors.Add(1)
		return
	}
	c.fetchBytes.Add(int64(n))
}

// deleteStarted counts a deletion of one of tp's remote segments.
func (s *Stats) deleteStarted(tp base.TopicPartition) {
	if c := s.of(tp); c != nil {
		c.deleteRequests.Add(1)
	}
}

// deleteFailed counts a deletion of one of tp's remote segments that failed.
func (s *Stats) deleteFailed(tp base.TopicPartition) {
	if c := s.of(tp); c != nil {
		c.deleteErrors.Add(1)
	}
}
