package broker

import (
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

// CleanerStatus is what the log cleaner has done, for metrics.
type CleanerStatus struct {
	// MaxDirtyRatio is the highest dirty ratio among the compacted
	// partitions when the cleaner last looked (Kafka's max-dirty-percent).
	MaxDirtyRatio float64
	// LastRun is when the last pass ended; zero before the first.
	LastRun time.Time
	// LastDuration is how long the last pass took; RecopyRatio is the
	// bytes it wrote over the bytes it read (cleaner-recopy-percent).
	LastDuration time.Duration
	RecopyRatio  float64
	// Uncleanable counts the partitions skipped since a pass over them
	// failed (uncleanable-partitions-count).
	Uncleanable int
	// Passes, BytesRead and BytesWritten count since the broker started.
	Passes                  int64
	BytesRead, BytesWritten int64
}

// cleanerState is the cleaner's memory between passes. Its own lock: the
// cleaner goroutine writes it, metric scrapes read it.
type cleanerState struct {
	mu     sync.Mutex
	status CleanerStatus
	// uncleanable holds the partitions whose pass failed, as Kafka's
	// LogCleanerManager marks them: cleaning them again would fail again
	// and, being the dirtiest, starve the others. A partition reopened
	// (a restart, a reassignment) is a new *Partition and is tried again.
	uncleanable map[*partition.Partition]error
	// cleaning holds the partitions a cleaner goroutine is cleaning now
	// (Kafka's LogCleanerManager inProgress): no two clean one at once.
	cleaning map[*partition.Partition]bool
}

func (s *cleanerState) isCleaning(p *partition.Partition) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cleaning[p]
}

// claim marks p as being cleaned; false when another goroutine has it.
func (s *cleanerState) claim(p *partition.Partition) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cleaning[p] {
		return false
	}
	if s.cleaning == nil {
		s.cleaning = map[*partition.Partition]bool{}
	}
	s.cleaning[p] = true
	return true
}

func (s *cleanerState) release(p *partition.Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cleaning, p)
}

func (s *cleanerState) isUncleanable(p *partition.Partition) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.uncleanable[p]
	return ok
}

func (s *cleanerState) markUncleanable(p *partition.Partition, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uncleanable == nil {
		s.uncleanable = map[*partition.Partition]error{}
	}
	s.uncleanable[p] = err
}

// forget drops the partitions no longer hosted from the uncleanable set.
func (s *cleanerState) forget(hosted []*partition.Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := make(map[*partition.Partition]bool, len(hosted))
	for _, p := range hosted {
		live[p] = true
	}
	for p := range s.uncleanable {
		if !live[p] {
			delete(s.uncleanable, p)
		}
	}
}

func (s *cleanerState) looked(maxDirty float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.MaxDirtyRatio = maxDirty
}

func (s *cleanerState) ran(stats partition.CleanStats, took time.Duration, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.LastRun, s.status.LastDuration = end, took
	s.status.RecopyRatio = 0
	if stats.BytesBefore > 0 {
		s.status.RecopyRatio = float64(stats.BytesAfter) / float64(stats.BytesBefore)
	}
	s.status.Passes++
	s.status.BytesRead += stats.BytesBefore
	s.status.BytesWritten += stats.BytesAfter
}

// CleanerStatus returns what the log cleaner has done so far.
func (b *Broker) CleanerStatus() CleanerStatus {
	s := &b.cleaner
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.status
	out.Uncleanable = len(s.uncleanable)
	return out
}
