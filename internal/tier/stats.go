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
// metrics library).
//
// Stats counts only the partitions it tracks: the broker calls Track when
// it opens a partition and Forget when it closes one (its topic deleted,
// or no longer hosted here), as Kafka removes a partition's metrics with
// it. So the partitions hosted now bound the map, a deleted topic's
// series leave /metrics, and a topic created again under the same name
// counts from zero (Prometheus reads a series that went and came back as
// a counter reset). What finishes for a partition while it is not
// tracked (a remote read that was in flight at Forget) counts nowhere:
// counting it would bring the series back, and nothing would remove it
// again. Between Track and Forget a partition's counts only grow.
//
// A nil *Stats counts nothing, so an executor built without one (tests,
// tools) needs no special case. Safe for concurrent use.
type Stats struct {
	mu struct {
		sync.Mutex
		// parts holds the tracked partitions; a partition's counters are
		// made on its first count (nil until then), so one that never
		// used the remote tier has no series.
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
		if c == nil {
			continue
		}
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

// Track starts counting tp, from zero; a partition already tracked keeps
// its counts.
func (s *Stats) Track(tp base.TopicPartition) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.parts[tp]; ok {
		return
	}
	if s.mu.parts == nil {
		s.mu.parts = make(map[base.TopicPartition]*partitionCounters)
	}
	s.mu.parts[tp] = nil
}

// Forget drops tp's counts and stops counting it until it is tracked again.
func (s *Stats) Forget(tp base.TopicPartition) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.parts, tp)
}

// of returns tp's counters, making them on its first count; nil when s is
// nil or does not track tp.
func (s *Stats) of(tp base.TopicPartition) *partitionCounters {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, tracked := s.mu.parts[tp]
	if !tracked {
		return nil
	}
	if c == nil {
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
