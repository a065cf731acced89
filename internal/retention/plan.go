package retention

import "github.com/strata-broker/strata/internal/base"

// Plan decides what one retention pass deletes. See the package
// documentation for the rules; it panics if s or p fails Validate.
func Plan(s Snapshot, p Policy, nowMs int64) Decision {
	if err := s.Validate(); err != nil {
		panic("retention.Plan: " + err.Error())
	}
	if err := p.Validate(); err != nil {
		panic("retention.Plan: " + err.Error())
	}

	newStart := max(s.LogStart, s.DeleteRecordsTo)
	var reasons []Reason
	if first, ok := tierDataStart(s); ok && first > newStart {
		reasons = append(reasons, Reason{Kind: KindNeitherTier, Range: base.Range{Start: newStart, End: first}})
		newStart = first
	}
	if s.Tiered.Known {
		counted := countedSegments(s)
		k, rs := totalCut(counted, s.DeleteRecordsTo, p, nowMs)
		reasons = append(reasons, rs...)
		if k > 0 {
			newStart = max(newStart, counted[k-1].seg.Range.End)
		}
	}

	named := make(map[tierRange]bool, len(reasons))
	for _, r := range reasons {
		named[tierRange{r.Tier, r.Range}] = true
	}
	d := Decision{NewLogStart: newStart, DeleteLocalBefore: newStart}
	if s.Tiered.Known {
		for _, seg := range s.Remote {
			if seg.Range.End > newStart {
				break
			}
			d.DeleteRemote = append(d.DeleteRemote, seg.Range)
			if !named[tierRange{TierRemote, seg.Range}] {
				reasons = append(reasons, belowLogStart(s, TierRemote, seg))
			}
		}
	}
	for _, seg := range s.Local[:len(s.Local)-1] {
		if seg.Range.End > newStart {
			break
		}
		if !named[tierRange{TierLocal, seg.Range}] {
			reasons = append(reasons, belowLogStart(s, TierLocal, seg))
		}
	}

	localBefore, rs := localCut(s, p, newStart, nowMs)
	d.DeleteLocalBefore = max(d.DeleteLocalBefore, localBefore)
	d.Reasons = append(reasons, rs...)
	return d
}

// tierDataStart is where a tiered log's data begins when the remote tier
// holds any of it: the first offset of the first remote segment (of the
// current lineage, COPY_FINISHED). The copier starts at the first local
// segment, which holds the log start, and the tier only grows upward from
// there, so offsets between the log start and the first remote segment
// were deleted from the tier by retention: a log start below them is one
// this replica learned before (ok is false when nothing is tiered or the
// tier is unknown).
func tierDataStart(s Snapshot) (base.Offset, bool) {
	if !s.Tiered.Known || !s.Tiered.Any || len(s.Remote) == 0 {
		return 0, false
	}
	return s.Remote[0].Range.Start, true
}

// CountedBytes is the size of the log as retention.bytes sees it, counted
// once per offset; ok is false when the tiered state is unknown, because
// then the size cannot be known.
func CountedBytes(s Snapshot) (bytes int64, ok bool) {
	if !s.Tiered.Known {
		return 0, false
	}
	for _, c := range countedSegments(s) {
		bytes += c.seg.SizeBytes
	}
	return bytes, true
}

type tierRange struct {
	tier Tier
	r    base.Range
}

// counted is a segment whose bytes count toward the log's size.
type counted struct {
	seg       Segment
	tier      Tier
	deletable bool // ends at or below the high watermark and is not active
}

// countedSegments returns, in offset order, the segments that make up the
// log's size: remote segments that end after LogStart, then local segments
// that end after LogStart and start at or after tieredNext. Comparing the
// base offset with the exclusive tieredNext (not with the last tiered
// offset) is what keeps a tiered one-record segment from being counted
// twice (KAFKA-17212). Requires s.Tiered.Known.
func countedSegments(s Snapshot) []counted {
	out := make([]counted, 0, len(s.Remote)+len(s.Local))
	for _, seg := range s.Remote {
		if seg.Range.End > s.LogStart {
			out = append(out, counted{seg, TierRemote, seg.Range.End <= s.HighWatermark})
		}
	}
	active := len(s.Local) - 1
	for i, seg := range s.Local {
		if seg.Range.End <= s.LogStart {
			continue
		}
		if s.Tiered.Any && seg.Range.Start < s.Tiered.Next {
			continue // tiered already, or straddling: counting it could overcount
		}
		out = append(out, counted{seg, TierLocal, i != active && seg.Range.End <= s.HighWatermark})
	}
	return out
}

// totalCut returns how many of the counted segments total retention
// deletes (always a prefix of the deletable ones) and a reason for each.
func totalCut(cs []counted, deleteRecordsTo base.Offset, p Policy, nowMs int64) (int, []Reason) {
	segs := make([]Segment, len(cs))
	eligible := len(cs)
	for i, c := range cs {
		segs[i] = c.seg
		if !c.deletable && eligible == len(cs) {
			eligible = i
		}
	}
	kRecords := 0
	for kRecords < eligible && segs[kRecords].Range.End <= deleteRecordsTo {
		kRecords++
	}
	byMs := cutPrefix(segs, eligible, kRecords, p.RetentionMs, p.RetentionBytes, nowMs)

	reasons := make([]Reason, 0, len(byMs))
	total := sumBytes(segs)
	for i, seg := range segs[:len(byMs)] {
		r := Reason{Tier: cs[i].tier, Range: seg.Range}
		switch {
		case i < kRecords:
			r.Kind = KindDeleteRecords
		case byMs[i]:
			r.Kind, r.AgeMs, r.LimitMs = KindRetentionMs, nowMs-seg.MaxTimestampMs, p.RetentionMs.Value
		default:
			r.Kind, r.TotalBytes, r.LimitBytes = KindRetentionBytes, total, p.RetentionBytes.Value
		}
		total -= seg.SizeBytes
		reasons = append(reasons, r)
	}
	return len(byMs), reasons
}

// localCut applies local retention to the local segments that survive
// total retention. Only segments entirely below tieredNext may go, so it
// does nothing unless the tiered state is known and something is tiered.
// It returns the end of the last segment it deletes, or newStart.
func localCut(s Snapshot, p Policy, newStart base.Offset, nowMs int64) (base.Offset, []Reason) {
	if !s.Tiered.Known || !s.Tiered.Any || (!p.LocalRetentionBytes.Set && !p.LocalRetentionMs.Set) {
		return newStart, nil
	}
	first := 0
	for first < len(s.Local)-1 && s.Local[first].Range.End <= newStart {
		first++
	}
	kept := s.Local[first:] // the active segment is its last element
	eligible := 0
	// tieredNext <= HighWatermark, so this also keeps below the watermark.
	for eligible < len(kept)-1 && kept[eligible].Range.End <= s.Tiered.Next {
		eligible++
	}
	byMs := cutPrefix(kept, eligible, 0, p.LocalRetentionMs, p.LocalRetentionBytes, nowMs)
	k := len(byMs)
	if k == 0 {
		return newStart, nil
	}
	reasons := make([]Reason, 0, k)
	total := sumBytes(kept)
	for i, seg := range kept[:k] {
		r := Reason{Tier: TierLocal, Range: seg.Range}
		if byMs[i] {
			r.Kind, r.AgeMs, r.LimitMs = KindLocalRetentionMs, nowMs-seg.MaxTimestampMs, p.LocalRetentionMs.Value
		} else {
			r.Kind, r.TotalBytes, r.LimitBytes = KindLocalRetentionBytes, total, p.LocalRetentionBytes.Value
		}
		total -= seg.SizeBytes
		reasons = append(reasons, r)
	}
	return kept[k-1].Range.End, reasons
}

// cutPrefix applies the time and size rules to segs, whose first k0 are
// already going, and returns one entry per segment of the deleted prefix:
// true where the time rule took it. Only the first eligible segments may
// go. The rules are repeated until neither takes more, because a segment
// that blocked the time rule may itself go by size; stopping earlier would
// leave work for the next pass, and a pass must be idempotent.
func cutPrefix(segs []Segment, eligible, k0 int, msLimit, bytesLimit Limit, nowMs int64) []bool {
	byMs := make([]bool, k0)
	kBytes := sizePrefix(segs, eligible, bytesLimit)
	for k := k0; ; {
		kMs := k + expiredPrefix(segs[k:eligible], msLimit, nowMs)
		next := max(kMs, kBytes)
		if next == k {
			return byMs
		}
		for i := k; i < next; i++ {
			byMs = append(byMs, i < kMs)
		}
		k = next
	}
}

// expiredPrefix is the length of the leading run of segs older than limit.
// It stops at the first segment that is not expired: time retention
// deletes a prefix, never a hole.
func expiredPrefix(segs []Segment, limit Limit, nowMs int64) int {
	if !limit.Set {
		return 0
	}
	k := 0
	for k < len(segs) && nowMs-segs[k].MaxTimestampMs > limit.Value {
		k++
	}
	return k
}

// sizePrefix is how many of the first eligible segments size retention
// removes: a segment goes only if what remains of segs is still >= limit.
func sizePrefix(segs []Segment, eligible int, limit Limit) int {
	if !limit.Set {
		return 0
	}
	total := sumBytes(segs)
	k := 0
	for k < eligible && total-segs[k].SizeBytes >= limit.Value {
		total -= segs[k].SizeBytes
		k++
	}
	return k
}

func sumBytes(segs []Segment) int64 {
	var n int64
	for _, seg := range segs {
		n += seg.SizeBytes
	}
	return n
}

func belowLogStart(s Snapshot, tier Tier, seg Segment) Reason {
	kind := KindBelowLogStart
	if seg.Range.End > s.LogStart && seg.Range.End <= s.DeleteRecordsTo {
		kind = KindDeleteRecords
	}
	return Reason{Kind: kind, Tier: tier, Range: seg.Range}
}
