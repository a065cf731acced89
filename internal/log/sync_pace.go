package log

import "time"

// Pacing a log's small fdatasync rounds when they run back to back.
//
// Under a steady stream of small acks=all appends every round is asked for
// while the one before it still runs, so the log syncs back to back, each
// round covering the few KiB that arrived during the last. Starting the
// next round a little later lets it cover more for the same fdatasync:
// fewer device requests and less CPU per record. On the 2-vCPU bench VM
// the host pauses the disk less often for it (bench/RESULTS.md, session
// 47: at 10,000 records/s acks=all, e2e p99 3.6-4.2 ms against 7.7-9.7).
// Three limits keep the wait from costing where it does not pay:
//   - it is in proportion to the log's own sync time, so a fast disk waits
//     little, and never more than syncSpacingMax;
//   - it starts only after syncPacedAfter rounds in a row were asked for
//     early, so a lone producer, whom a round now and then serves, does not
//     wait;
//   - a round that synced syncPacedBelowBytes or more is big enough, so
//     bulk produce, whose rounds carry hundreds of KiB, does not wait.
const (
	syncSpacingMax      = 2 * time.Millisecond
	syncPacedAfter      = 2
	syncPacedBelowBytes = 64 << 10
)

// syncPacer holds a log's recent sync rounds; guarded by the log's mu.
type syncPacer struct {
	lastStart time.Time
	lastBytes int64         // appended bytes the last round covered
	avg       time.Duration // moving average of round durations, weight 1/8
	early     int           // rounds in a row asked for before the spacing was up
}

// spacing is how long after a round's start the next one should start when
// small rounds run back to back: twice the average round, so that the
// log's syncs keep the disk busy half the time at most.
func (p *syncPacer) spacing() time.Duration {
	return min(2*p.avg, syncSpacingMax)
}

// wait returns how long a round asked for at now waits before it starts,
// and counts the ask.
// Before the first round the spacing is 0 and due is long past.
func (p *syncPacer) wait(now time.Time) time.Duration {
	due := p.lastStart.Add(p.spacing())
	if !now.Before(due) {
		p.early = 0
		return 0
	}
	p.early++
	if p.early < syncPacedAfter || p.lastBytes >= syncPacedBelowBytes {
		return 0
	}
	return due.Sub(now)
}

// started records that a round covering bytes appended bytes started at now.
func (p *syncPacer) started(now time.Time, bytes int64) {
	p.lastStart, p.lastBytes = now, bytes
}

// finished records how long a round's fdatasyncs took.
func (p *syncPacer) finished(took time.Duration) {
	if p.avg == 0 {
		p.avg = took
		return
	}
	p.avg += (took - p.avg) / 8
}
