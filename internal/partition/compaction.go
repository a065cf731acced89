package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/cleaner"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// Compaction is a compacted topic's cleaning configuration, with Kafka's
// meanings.
type Compaction struct {
	MinCleanableRatio float64       // min.cleanable.dirty.ratio
	MinLag            time.Duration // min.compaction.lag.ms
	MaxLag            time.Duration // max.compaction.lag.ms; 0 = no limit
	DeleteRetention   time.Duration // delete.retention.ms: how long tombstones stay
}

// CleaningPlan is the cleaner's decision for one partition, so the broker
// can hold one without knowing the cleaner.
type CleaningPlan = cleaner.Decision

// CleanerMap is the memory one cleaner reuses from pass to pass: the key
// to latest-offset map (log.cleaner.dedupe.buffer.size) and its read and
// write buffers.
type CleanerMap struct {
	offsets  *cleaner.OffsetMap
	read     []byte
	out      []byte
	throttle func(bytes int)
}

// NewCleanerMap sizes a cleaner's offset map to bytes of memory.
func NewCleanerMap(bytes int64) *CleanerMap {
	return &CleanerMap{offsets: cleaner.NewOffsetMap(bytes)}
}

// SetThrottle makes the passes that use cm call throttle with the bytes of
// each window of the log they read and each group of cleaned batches they
// write, before they go on (log.cleaner.io.max.bytes.per.second); throttle
// may sleep.
func (cm *CleanerMap) SetThrottle(throttle func(bytes int)) { cm.throttle = throttle }

// moved reports n bytes read or written to the throttle, if any.
func (cm *CleanerMap) moved(n int) {
	if cm.throttle != nil && n > 0 {
		cm.throttle(n)
	}
}

// CleanStats is what one cleaning pass did.
type CleanStats struct {
	FirstDirty, MapEnd base.Offset // the pass deduplicated [FirstDirty, MapEnd)
	Segments           int         // segments rewritten
	Result             cleaner.BatchResult
	BytesBefore        int64
	BytesAfter         int64
	// Stale is true when retention, DeleteRecords or a truncation changed
	// the segments while they were being cleaned: the rest of the pass was
	// dropped and the next pass starts again.
	Stale bool
}

// errOvertaken: retention, DeleteRecords or a truncation removed or cut
// segments that the pass was reading or replacing. The pass stops; the
// next one plans again on what is left.
var errOvertaken = errors.New("partition: cleaning overtaken by a change of the log")

// overtakenOr is errOvertaken when err says the log changed under the
// cleaner, else err.
func overtakenOr(err error) error {
	switch {
	case errors.Is(err, log.ErrOffsetOutOfRange), errors.Is(err, log.ErrNotSealed),
		errors.Is(err, log.ErrReplacementStale), errors.Is(err, log.ErrClosed):
		return fmt.Errorf("%w: %w", errOvertaken, err)
	}
	return err
}

// cleanReadBytes is how much of the log the cleaner reads per call.
const cleanReadBytes = 1 << 20

// PlanCleaning decides, on a snapshot, whether the log needs cleaning
// now. It never cleans past the active segment, the high watermark or the
// last stable offset (Kafka's firstUncleanableOffset): an open
// transaction may still abort, and its records must supersede nothing.
func (p *Partition) PlanCleaning(nowMs int64) (cleaner.Decision, error) {
	p.mu.Lock()
	cfg, logStart, closed := p.mu.cfg, p.mu.logStart, p.mu.closed
	lso := p.offsetsLocked().LastStable // <= the high watermark
	p.mu.Unlock()
	if closed {
		return cleaner.Decision{}, ErrClosed
	}
	if !cfg.Compact {
		return cleaner.Decision{Reason: "not compacted"}, nil
	}
	checkpoint, checkpointOK, err := readCleanerCheckpoint(p.opts.Dir)
	if err != nil {
		return cleaner.Decision{}, fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	segs := p.log.Segments()
	in := cleaner.PlanInput{
		Segments:           cleanerSegments(segs),
		LogStart:           logStart,
		Checkpoint:         checkpoint.FirstDirty,
		CheckpointOK:       checkpointOK,
		NextHorizonMs:      checkpoint.NextHorizonMs,
		HasNextHorizon:     checkpoint.HasNextHorizon,
		CleanableEnd:       min(segs[len(segs)-1].BaseOffset, lso),
		NowMs:              nowMs,
		MinCompactionLagMs: cfg.Compaction.MinLag.Milliseconds(),
		MaxCompactionLagMs: cfg.Compaction.MaxLag.Milliseconds(),
		MinCleanableRatio:  cfg.Compaction.MinCleanableRatio,
	}
	if cfg.Compaction.MaxLag > 0 {
		in.FirstDirtyTimestampMs, in.FirstDirtyTimestampOK = p.firstBatchTimestamp(in)
	}
	return cleaner.Plan(in), nil
}

func cleanerSegments(segs []log.SegmentInfo) []cleaner.Segment {
	out := make([]cleaner.Segment, len(segs))
	for i, s := range segs {
		out[i] = cleaner.Segment{
			Base:           s.BaseOffset,
			Next:           s.NextOffset,
			SizeBytes:      s.SizeBytes,
			MaxTimestampMs: s.MaxTimestamp,
			HasTimestamp:   s.HasTimestamp,
		}
	}
	return out
}

// firstBatchTimestamp is the max timestamp of the first batch at or after
// the offset the planner will take as first dirty, for max.compaction.lag.ms.
func (p *Partition) firstBatchTimestamp(in cleaner.PlanInput) (int64, bool) {
	from := in.LogStart
	if in.CheckpointOK && in.Checkpoint >= in.LogStart && in.Checkpoint <= in.CleanableEnd {
		from = in.Checkpoint
	}
	if from >= in.CleanableEnd {
		return 0, false
	}
	b, err := p.log.Read(from, record.HeaderSize, nil)
	if err != nil || len(b) < record.HeaderSize {
		return 0, false
	}
	h, err := record.ParseHeader(b)
	if err != nil {
		return 0, false
	}
	return h.MaxTimestamp, true
}

// Clean runs one cleaning pass that PlanCleaning decided on: it maps each
// key of the dirty range [d.FirstDirty, d.FirstUncleanable) to its latest
// offset (stopping early if the map fills), rewrites every segment below
// the map's end keeping only the latest record of each key (and tombstones
// until their delete horizon), swaps the rewritten segments in, and
// records how far the log is clean. Appends, reads and retention go on
// meanwhile; a swap that retention overtook is dropped (Stats.Stale). A
// partition closed or deleted meanwhile, or a closed stop, ends the pass
// with ErrClosed.
func (p *Partition) Clean(d CleaningPlan, cm *CleanerMap, nowMs int64, stop <-chan struct{}) (CleanStats, error) {
	stats, err := p.clean(d, cm, nowMs, stop)
	if err != nil {
		p.mu.Lock()
		closed := p.mu.closed
		p.mu.Unlock()
		if closed { // closed or deleted meanwhile: whatever failed, that is why
			return stats, ErrClosed
		}
	}
	return stats, err
}

func (p *Partition) clean(d CleaningPlan, cm *CleanerMap, nowMs int64, stop <-chan struct{}) (CleanStats, error) {
	stats := CleanStats{FirstDirty: d.FirstDirty}
	p.mu.Lock()
	cfg, closed, logStart, truncations := p.mu.cfg, p.mu.closed, p.mu.logStart, p.mu.truncations
	lastBatches := lastBatchOfProducers(p.mu.producers.Entries())
	aborted := cleanerAborted(p.mu.aborted)
	p.mu.Unlock()
	if closed {
		return stats, ErrClosed
	}
	// Clean only what is durable: a crash must not find a cleaned copy of
	// data that was never synced.
	if err := p.log.SyncTo(d.FirstUncleanable); err != nil {
		return stats, err
	}
	// Aborted records supersede nothing (the map leaves them out) and are
	// dropped; each index is seeded with the transactions that end at or
	// after where its walk starts (DESIGN §5).
	mapEnd, err := p.buildOffsetMap(d, cm, cleaner.NewAbortedTxns(aborted, d.FirstDirty))
	if errors.Is(err, errOvertaken) {
		stats.Stale = true
		return stats, nil
	}
	if err != nil {
		return stats, err
	}
	stats.MapEnd = mapEnd
	rules := cleaner.Rules{
		Map:               cm.offsets,
		NowMs:             nowMs,
		DeleteRetentionMs: cfg.Compaction.DeleteRetention.Milliseconds(),
		LastBatchOfProducer: func(pid int64, last base.Offset) bool {
			o, ok := lastBatches[pid]
			return ok && o == last
		},
		Pass:    cleaner.NewPass(),
		Aborted: cleaner.NewAbortedTxns(aborted, logStart),
	}
	var toClean []cleaner.Segment
	for _, s := range cleanerSegments(p.log.Segments()) {
		if s.Base < mapEnd {
			toClean = append(toClean, s)
		}
	}
	for _, group := range cleaner.GroupSegments(toClean, cfg.SegmentBytes) {
		select {
		case <-stop:
			return stats, ErrClosed
		default:
		}
		before, after, err := p.cleanGroup(group, rules, cm, &stats.Result)
		if errors.Is(err, errOvertaken) {
			stats.Stale = true
			return stats, nil
		}
		if err != nil {
			return stats, err
		}
		stats.Segments += len(group)
		stats.BytesBefore += before
		stats.BytesAfter += after
	}
	cp := cleanerCheckpoint{FirstDirty: mapEnd, NextHorizonMs: stats.Result.NextHorizonMs, HasNextHorizon: stats.Result.HasNextHorizon}
	return stats, p.recordCleaned(cp, truncations, &stats)
}

// recordCleaned writes the checkpoint of a pass that began when the
// partition had seen truncations truncations, unless one came since: the
// batches it mapped may have been replaced by a new leader's, which are
// not clean (the pass is then Stale). cleanerCheckpoint orders this against
// a truncation's own clamp of the checkpoint.
func (p *Partition) recordCleaned(cp cleanerCheckpoint, truncations uint64, stats *CleanStats) error {
	p.cleanerCheckpoint.Lock()
	defer p.cleanerCheckpoint.Unlock()
	p.mu.Lock()
	truncated := p.mu.truncations != truncations
	p.mu.Unlock()
	if truncated {
		stats.Stale = true
		return nil
	}
	if err := writeCleanerCheckpoint(p.opts.Dir, cp); err != nil {
		return fmt.Errorf("partition %v: cleaner checkpoint: %w", p.opts.TP, err)
	}
	return nil
}

// lastBatchOfProducers maps each idempotent producer to the last offset of
// its last batch: that batch keeps at least one record, so the producer's
// sequence survives cleaning (see cleaner.Rules.LastBatchOfProducer).
func lastBatchOfProducers(entries []producers.Entry) map[int64]base.Offset {
	out := make(map[int64]base.Offset, len(entries))
	for _, e := range entries {
		if n := len(e.Batches); n > 0 {
			out[int64(e.ProducerID)] = e.Batches[n-1].LastOffset
		}
	}
	return out
}

// cleanerAborted is the aborted-transaction list as the cleaner takes it.
func cleanerAborted(list []AbortedTxn) []cleaner.AbortedTxn {
	out := make([]cleaner.AbortedTxn, len(list))
	for i, t := range list {
		out[i] = cleaner.AbortedTxn{ProducerID: int64(t.ProducerID), First: t.FirstOffset, Last: t.LastOffset}
	}
	return out
}

// buildOffsetMap fills cm's offset map from the dirty range, whole batches
// at a time, and returns the offset it reached: the first batch that did
// not fit, or d.FirstUncleanable.
func (p *Partition) buildOffsetMap(d cleaner.Decision, cm *CleanerMap, aborted *cleaner.AbortedTxns) (base.Offset, error) {
	cm.offsets.Reset()
	reached, err := p.scanBatches(d.FirstDirty, d.FirstUncleanable, cm, func(batch []byte, h record.Header) (bool, error) {
		fits, err := cm.offsets.AddBatch(batch, aborted)
		if errors.Is(err, cleaner.ErrMapTooSmall) {
			return false, fmt.Errorf("partition %v: %w; raise log.cleaner.dedupe.buffer.size", p.opts.TP, err)
		}
		if err != nil {
			return false, fmt.Errorf("partition %v: cleaner at offset %d: %w", p.opts.TP, h.BaseOffset, err)
		}
		return fits, nil
	}, nil)
	return min(reached, d.FirstUncleanable), err
}

// scanBatches reads the log from from one window at a time and calls take
// on each whole batch that ends after from and starts before end, in
// order, until take declines one; after each window it calls windowDone,
// if set. It returns where reading would go on: the base offset of the
// batch take declined, end once a batch starts there, or the end of the
// last batch read when the log ends first. A read the log refuses because
// it changed meanwhile is errOvertaken. It reads into cm's buffer and reports
// each window read to cm's throttle.
func (p *Partition) scanBatches(from, end base.Offset, cm *CleanerMap, take func([]byte, record.Header) (bool, error), windowDone func() error) (base.Offset, error) {
	buf := &cm.read
	for from < end {
		var err error
		*buf, err = p.log.Read(from, cleanReadBytes, (*buf)[:0])
		if err != nil {
			return from, overtakenOr(fmt.Errorf("partition %v: cleaner read at %d: %w", p.opts.TP, from, err))
		}
		if len(*buf) == 0 {
			return from, nil
		}
		cm.moved(len(*buf))
		reached, stopped := from, false
		for it := record.SplitBatches(*buf); !stopped; {
			batch, h, ok := it.Next()
			switch {
			case !ok:
				stopped = true
				continue
			case h.NextOffset() <= from:
				continue
			case h.BaseOffset >= end:
				reached, stopped = end, true
				continue
			}
			took, err := take(batch, h)
			if err != nil {
				return from, err
			}
			if !took {
				reached, stopped = h.BaseOffset, true
				end = reached // read no further
				continue
			}
			reached = h.NextOffset()
		}
		if windowDone != nil {
			if err := windowDone(); err != nil {
				return from, err
			}
		}
		if reached == from { // nothing taken: the log ends here
			return from, nil
		}
		from = reached
	}
	return from, nil
}

// cleanGroup rewrites one group of consecutive sealed segments into one
// and swaps it in. It returns the sizes before and after.
func (p *Partition) cleanGroup(group []cleaner.Segment, rules cleaner.Rules, cm *CleanerMap, total *cleaner.BatchResult) (before, after int64, err error) {
	bases := make([]base.Offset, len(group))
	for i, s := range group {
		bases[i] = s.Base
		before += s.SizeBytes
	}
	r, err := p.log.BeginReplacement(bases)
	if err != nil {
		return 0, 0, overtakenOr(err)
	}
	defer r.Abort()
	cm.out = cm.out[:0]
	_, err = p.scanBatches(group[0].Base, group[len(group)-1].Next, cm, func(batch []byte, h record.Header) (bool, error) {
		var res cleaner.BatchResult
		var err error
		if cm.out, res, err = cleaner.CleanBatch(cm.out, batch, rules); err != nil {
			return false, fmt.Errorf("partition %v: cleaning the batch at %d: %w", p.opts.TP, h.BaseOffset, err)
		}
		total.Add(res)
		return true, nil
	}, func() error {
		if len(cm.out) == 0 {
			return nil
		}
		after += int64(len(cm.out))
		err := r.Append(cm.out)
		cm.moved(len(cm.out))
		cm.out = cm.out[:0]
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	if err := r.Commit(); err != nil {
		return 0, 0, overtakenOr(err)
	}
	return before, after, nil
}
