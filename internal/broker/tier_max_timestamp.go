package broker

import (
	"cmp"
	"context"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// maxTimestampCandidates orders remote segments for a max-timestamp
// search: largest MaxTimestampMs first (by metadata, an upper bound on
// what the segment holds from the log start), the earlier segment first on
// a tie.
func maxTimestampCandidates(segs []remotemeta.RemoteSegment) []remotemeta.RemoteSegment {
	out := slices.Clone(segs)
	slices.SortStableFunc(out, func(a, b remotemeta.RemoteSegment) int {
		return cmp.Or(cmp.Compare(b.MaxTimestampMs, a.MaxTimestampMs), cmp.Compare(a.Range.Start, b.Range.Start))
	})
	return out
}

// beats reports whether a remote segment whose metadata says maxTs, and
// whose offsets start at start, could improve on best: a larger
// timestamp, or the same one at an earlier offset.
func beats(maxTs int64, start base.Offset, best base.Stamp) bool {
	return base.Stamp{Ts: maxTs, Offset: start, Ok: true}.Beats(best)
}

// MaxTimestamp is ListOffsets -3 (v7+) over the whole log, both tiers: the
// largest batch max timestamp in [logStart, logEnd) and the earliest
// offset carrying it; ok is false for an empty log. The local log answers
// from memory; the remote tier by its segments' metadata, then one index
// lookup (or, for the segment holding the log start, a scan from it) in
// the best candidate, bounded by remote.list.offsets.request.timeout.ms.
func (b *Broker) MaxTimestamp(ctx context.Context, p *partition.Partition) (ts int64, o base.Offset, ok bool, err error) {
	best, err := p.MaxTimestamp()
	if err != nil {
		return 0, 0, false, err
	}
	if b.opts.Tier == nil || !p.Tiered() {
		return best.Ts, best.Offset, best.Ok, nil
	}
	logStart := p.Offsets().LogStart
	ctx, cancel := context.WithTimeout(ctx, b.remoteListOffsetsTimeout())
	defer cancel()
	var won *remotemeta.RemoteSegment // where best was found, if remote
	for _, s := range maxTimestampCandidates(b.views(p).View().FinishedFrom(p.Lineage(), logStart)) {
		if !beats(s.MaxTimestampMs, max(s.Range.Start, logStart), best) {
			if best.Ok && s.MaxTimestampMs < best.Ts {
				break // the rest are bounded lower still
			}
			continue
		}
		found, err := b.remoteMaxTimestamp(ctx, s, logStart)
		if err != nil {
			return 0, 0, false, err
		}
		if found.Beats(best) {
			best, won = found, &s
		}
	}
	if won != nil {
		best = b.remoteRecordOfMax(ctx, *won, best, logStart)
	}
	return best.Ts, best.Offset, best.Ok, nil
}

// remoteRecordOfMax moves best, found in s, to the record that carries its
// timestamp, as the local log's answer is (Partition.MaxTimestamp): the
// search may have stopped at its batch's base offset or first record. A
// batch that cannot be read now leaves best at its batch.
func (b *Broker) remoteRecordOfMax(ctx context.Context, s remotemeta.RemoteSegment, best base.Stamp, logStart base.Offset) base.Stamp {
	o, ok, err := b.opts.Tier.Reader.RecordOfMaxTimestamp(ctx, s, best.Offset, best.Ts, logStart)
	if err != nil {
		b.logger.Warn("reading the batch of the remote max timestamp", "segment", s.ID.String(), "offset", int64(best.Offset), "err", err)
		return best
	}
	if ok {
		best.Offset = o
	}
	return best
}

// remoteMaxTimestamp is the max timestamp of s from logStart and where it
// is. A segment wholly at or above the log start has it in its metadata;
// only its offset needs the indexes.
func (b *Broker) remoteMaxTimestamp(ctx context.Context, s remotemeta.RemoteSegment, logStart base.Offset) (base.Stamp, error) {
	r := b.opts.Tier.Reader
	if s.Range.Start < logStart {
		ts, o, ok, err := r.MaxTimestampFrom(ctx, s, logStart)
		return base.Stamp{Ts: ts, Offset: o, Ok: ok}, err
	}
	o, ts, ok, err := r.OffsetForTimestamp(ctx, s, s.MaxTimestampMs, logStart)
	return base.Stamp{Ts: ts, Offset: o, Ok: ok}, err
}
