package broker

import (
	"errors"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

// CleanerOptions turns the log cleaner on (log.cleaner.enable).
type CleanerOptions struct {
	// Backoff is how long the cleaner sleeps when no log needs cleaning
	// (log.cleaner.backoff.ms).
	Backoff time.Duration
	// DedupeBytes is the memory of its key maps, shared out among the
	// threads (log.cleaner.dedupe.buffer.size).
	DedupeBytes int64
	// Threads is how many partitions are cleaned at once, each by its own
	// goroutine with its share of DedupeBytes (log.cleaner.threads); 0 is
	// 1.
	Threads int
	// IOBytesPerSecond bounds the bytes the threads read and write
	// together (log.cleaner.io.max.bytes.per.second); 0 does not throttle.
	IOBytesPerSecond float64
}

// Validate reports the first unusable option.
func (o CleanerOptions) Validate() error {
	switch {
	case o.Backoff <= 0:
		return errors.New("broker: Cleaner.Backoff must be positive")
	case o.DedupeBytes <= 0:
		return errors.New("broker: Cleaner.DedupeBytes must be positive")
	case o.IOBytesPerSecond < 0:
		return errors.New("broker: Cleaner.IOBytesPerSecond must not be negative")
	}
	return nil
}

// threads is how many goroutines clean.
func (o CleanerOptions) threads() int { return max(o.Threads, 1) }

// mapBytes is each thread's share of DedupeBytes.
func (o CleanerOptions) mapBytes() int64 { return max(o.DedupeBytes/int64(o.threads()), 1) }

// cleanerCandidate is one compacted partition's cleaning decision.
type cleanerCandidate struct {
	ratio  float64
	forced bool // max.compaction.lag.ms has passed for its oldest dirty record
}

// pickDirtiest chooses which log to clean next, as Kafka's cleaner
// manager does: a log past its max.compaction.lag.ms first, then the
// highest dirty ratio. ok is false when none is eligible.
func pickDirtiest(cs []cleanerCandidate) (int, bool) {
	best := -1
	for i, c := range cs {
		if best < 0 || c.forced && !cs[best].forced ||
			c.forced == cs[best].forced && c.ratio > cs[best].ratio {
			best = i
		}
	}
	return best, best >= 0
}

// cleanDirtiest cleans the dirtiest partition that no other cleaner
// goroutine is cleaning, once, and reports whether it found one to clean.
func (b *Broker) cleanDirtiest(cm **partition.CleanerMap, mapBytes int64) bool {
	now := b.opts.Clock.Now().UnixMilli()
	var parts []*partition.Partition
	var cands []cleanerCandidate
	var plans []partition.CleaningPlan
	maxDirty := 0.0
	hosted := b.Partitions()
	b.cleaner.forget(hosted)
	for _, p := range hosted {
		if b.cleaner.isUncleanable(p) || b.cleaner.isCleaning(p) {
			continue
		}
		d, err := p.PlanCleaning(now)
		if err != nil {
			if !errors.Is(err, partition.ErrClosed) {
				b.logger.Error("planning log cleaning", "partition", p.TP().String(), "err", err)
			}
			continue
		}
		maxDirty = max(maxDirty, d.Ratio)
		if !d.Clean {
			continue
		}
		parts = append(parts, p)
		cands = append(cands, cleanerCandidate{ratio: d.Ratio, forced: d.Forced})
		plans = append(plans, d)
	}
	b.cleaner.looked(maxDirty)
	i, ok := pickDirtiest(cands)
	if !ok {
		return false
	}
	if *cm == nil {
		*cm = partition.NewCleanerMap(mapBytes)
		if t := b.cleaners.throttle; t != nil {
			(*cm).SetThrottle(func(n int) { t.moved(n, b.stop) })
		}
	}
	p := parts[i]
	if !b.cleaner.claim(p) {
		return true // another goroutine took it meanwhile: look again
	}
	defer b.cleaner.release(p)
	start := b.opts.Clock.Now()
	stats, err := p.Clean(plans[i], *cm, now, b.stop)
	if errors.Is(err, partition.ErrClosed) {
		return false
	}
	if err != nil {
		b.cleaner.markUncleanable(p, err)
		b.logger.Error("cleaning log failed; the partition is not cleaned again until it is reopened (a restart)",
			"partition", p.TP().String(), "err", err)
		return true // the others may still need cleaning
	}
	end := b.opts.Clock.Now()
	b.cleaner.ran(stats, end.Sub(start), end)
	b.logger.Info("cleaned log", "partition", p.TP().String(),
		"dirty_from", int64(stats.FirstDirty), "clean_to", int64(stats.MapEnd),
		"segments", stats.Segments, "bytes_before", stats.BytesBefore, "bytes_after", stats.BytesAfter,
		"ratio", cands[i].ratio, "stale", stats.Stale, "took", end.Sub(start).String())
	// A pass that moved nothing forward would be chosen again at once.
	return stats.Stale || stats.MapEnd > stats.FirstDirty
}

// RunCleaner cleans every compacted partition that needs it now, for
// tests.
func (b *Broker) RunCleaner(dedupeBytes int64) {
	var cm *partition.CleanerMap
	for range maxCleanerPassesPerRun {
		if !b.cleanDirtiest(&cm, dedupeBytes) {
			return
		}
	}
}

// maxCleanerPassesPerRun bounds RunCleaner.
const maxCleanerPassesPerRun = 1000
