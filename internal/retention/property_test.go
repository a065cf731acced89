package retention

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func drawSegments(t *rapid.T, label string, start, end base.Offset, allowEmptyLast bool) []Segment {
	var segs []Segment
	ts := rapid.Int64Range(0, 50).Draw(t, label+"ts0")
	for o := start; o < end || (allowEmptyLast && len(segs) == 0); {
		n := min(base.Offset(rapid.Int64Range(1, 4).Draw(t, label+"len")), end-o)
		ts += rapid.Int64Range(-10, 30).Draw(t, label+"dts") // not monotone
		segs = append(segs, seg(o, o+n, rapid.Int64Range(0, 60).Draw(t, label+"size"), ts))
		o += n
	}
	return segs
}

// genSnapshot draws a valid snapshot: local segments (with an occasional
// gap, as compaction leaves), a remote tier with its own boundaries that
// overlaps the local log, and every tiered state.
func genSnapshot(t *rapid.T) Snapshot {
	localStart := base.Offset(rapid.Int64Range(0, 12).Draw(t, "localStart"))
	var local []Segment
	o := localStart
	for i, n := 0, rapid.IntRange(1, 6).Draw(t, "nLocal"); i < n; i++ {
		o += base.Offset(rapid.Int64Range(0, 1).Draw(t, "gap"))
		lo := int64(1)
		if i == n-1 {
			lo = 0 // the active segment may be empty
		}
		end := o + base.Offset(rapid.Int64Range(lo, 4).Draw(t, "len"))
		size := rapid.Int64Range(0, 60).Draw(t, "size")
		if end == o {
			size = 0
		}
		local = append(local, seg(o, end, size, rapid.Int64Range(0, 120).Draw(t, "ts")))
		o = end
	}
	logEnd := o
	s := Snapshot{Local: local, Tiered: NothingTiered()}
	s.HighWatermark = base.Offset(rapid.Int64Range(int64(localStart), int64(logEnd)).Draw(t, "hw"))
	lo := localStart

	mode := rapid.IntRange(0, 2).Draw(t, "tieredMode") // 0 unknown, 1 nothing tiered, 2 tiered
	if mode != 1 {
		remoteStart := base.Offset(rapid.Int64Range(0, int64(localStart)).Draw(t, "remoteStart"))
		if minNext := max(localStart, remoteStart+1); minNext <= s.HighWatermark {
			next := base.Offset(rapid.Int64Range(int64(minNext), int64(s.HighWatermark)).Draw(t, "tieredNext"))
			s.Remote = drawSegments(t, "remote", remoteStart, next, false)
			s.Tiered = TieredUpTo(next)
			lo = remoteStart
		}
		if mode == 0 {
			s.Tiered = TieredUnknown()
		}
	}
	s.LogStart = base.Offset(rapid.Int64Range(int64(lo), int64(s.HighWatermark)).Draw(t, "logStart"))
	if rapid.Bool().Draw(t, "deleteRecords") {
		s.DeleteRecordsTo = base.Offset(rapid.Int64Range(0, int64(s.HighWatermark)).Draw(t, "deleteRecordsTo"))
	}
	return s
}

func genLimit(t *rapid.T, label string, maxValue int64) Limit {
	if !rapid.Bool().Draw(t, label+"Set") {
		return Limit{}
	}
	return LimitOf(rapid.Int64Range(0, maxValue).Draw(t, label))
}

func genPolicy(t *rapid.T) Policy {
	return Policy{
		RetentionBytes:      genLimit(t, "retentionBytes", 400),
		RetentionMs:         genLimit(t, "retentionMs", 150),
		LocalRetentionBytes: genLimit(t, "localRetentionBytes", 300),
		LocalRetentionMs:    genLimit(t, "localRetentionMs", 150),
	}
}

// naiveCountedBytes restates rule 2 directly: remote bytes for the tier
// above log start, plus local segments that start at or after tieredNext.
func naiveCountedBytes(s Snapshot) int64 {
	var n int64
	for _, r := range s.Remote {
		if r.Range.End > s.LogStart {
			n += r.SizeBytes
		}
	}
	for _, l := range s.Local {
		if l.Range.End > s.LogStart && (!s.Tiered.Any || l.Range.Start >= s.Tiered.Next) {
			n += l.SizeBytes
		}
	}
	return n
}

// apply is a model executor: it does what d says to s.
func apply(t *rapid.T, s Snapshot, d Decision) Snapshot {
	out := s
	out.LogStart = d.NewLogStart
	out.Local = s.Local[len(d.LocalDeletions(s.Local)):]
	if len(d.DeleteRemote) > len(s.Remote) {
		t.Fatalf("deletes %d remote segments of %d", len(d.DeleteRemote), len(s.Remote))
	}
	for i, r := range d.DeleteRemote {
		if s.Remote[i].Range != r {
			t.Fatalf("DeleteRemote %v is not a prefix of the remote tier", d.DeleteRemote)
		}
	}
	out.Remote = s.Remote[len(d.DeleteRemote):]
	return out
}

func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, p := genSnapshot(t), genPolicy(t)
		nowMs := rapid.Int64Range(0, 250).Draw(t, "nowMs")
		if err := s.Validate(); err != nil {
			t.Fatalf("generator made an invalid snapshot: %v", err)
		}
		d := Plan(s, p, nowMs)
		after := apply(t, s, d)
		if err := after.Validate(); err != nil {
			t.Fatalf("applying the plan leaves an invalid snapshot: %v", err)
		}
		checkBounds(t, s, d)
		checkBoundary(t, s, d)
		checkReasons(t, s, d)

		if !s.Tiered.Known {
			want := max(s.LogStart, s.DeleteRecordsTo)
			if len(d.DeleteRemote) != 0 || d.NewLogStart != want || d.DeleteLocalBefore != want {
				t.Fatalf("tiered state unknown, yet plan %+v (want only log start %d)", d, want)
			}
			return
		}
		before, afterBytes := naiveCountedBytes(s), naiveCountedBytes(after)
		if got, _ := CountedBytes(s); got != before {
			t.Fatalf("CountedBytes = %d, naive count %d", got, before)
		}
		if afterBytes > before {
			t.Fatalf("counted size grew from %d to %d", before, afterBytes)
		}
		if p.RetentionBytes.Set && !p.RetentionMs.Set && s.DeleteRecordsTo <= s.LogStart &&
			afterBytes < min(before, p.RetentionBytes.Value) {
			t.Fatalf("size retention took the log from %d to %d bytes, limit %d", before, afterBytes, p.RetentionBytes.Value)
		}
		checkCountedDisjoint(t, s)

		again := Plan(after, p, nowMs)
		if again.NewLogStart != after.LogStart || len(again.DeleteRemote) != 0 || len(again.LocalDeletions(after.Local)) != 0 {
			t.Fatalf("not idempotent: second plan %+v", again)
		}
	})
}

// checkBounds: log start only moves forward; nothing at or after the high
// watermark, and never the active segment, is deleted; local deletion is of
// tiered data or data outside the log.
func checkBounds(t *rapid.T, s Snapshot, d Decision) {
	if d.NewLogStart < s.LogStart || d.NewLogStart > s.HighWatermark {
		t.Fatalf("NewLogStart %d outside [logStart %d, hw %d]", d.NewLogStart, s.LogStart, s.HighWatermark)
	}
	if d.DeleteLocalBefore < d.NewLogStart || d.DeleteLocalBefore > s.HighWatermark {
		t.Fatalf("DeleteLocalBefore %d outside [%d, hw %d]", d.DeleteLocalBefore, d.NewLogStart, s.HighWatermark)
	}
	for _, r := range d.DeleteRemote {
		if r.End > s.HighWatermark || r.End > d.NewLogStart {
			t.Fatalf("remote %v deleted, hw %d, new log start %d", r, s.HighWatermark, d.NewLogStart)
		}
	}
	for i, l := range d.LocalDeletions(s.Local) {
		if i == len(s.Local)-1 || l.Range.End > s.HighWatermark {
			t.Fatalf("local %v deleted (active or above hw %d)", l.Range, s.HighWatermark)
		}
		tiered := s.Tiered.Known && s.Tiered.Any && l.Range.End <= s.Tiered.Next
		if !tiered && l.Range.End > d.NewLogStart {
			t.Fatalf("local %v deleted: neither tiered nor below new log start %d", l.Range, d.NewLogStart)
		}
	}
}

// checkBoundary: the new log start is the old one, the DeleteRecords
// offset or the end of a segment.
func checkBoundary(t *rapid.T, s Snapshot, d Decision) {
	if d.NewLogStart == s.LogStart || d.NewLogStart == s.DeleteRecordsTo {
		return
	}
	for _, seg := range slices.Concat(s.Local, s.Remote) {
		if seg.Range.End == d.NewLogStart {
			return
		}
	}
	t.Fatalf("NewLogStart %d is not a segment boundary", d.NewLogStart)
}

// checkReasons: each deleted segment has exactly one reason, and only they.
func checkReasons(t *rapid.T, s Snapshot, d Decision) {
	want := map[tierRange]int{}
	for _, r := range d.DeleteRemote {
		want[tierRange{TierRemote, r}]++
	}
	for _, l := range d.LocalDeletions(s.Local) {
		want[tierRange{TierLocal, l.Range}]++
	}
	for _, r := range d.Reasons {
		k := tierRange{r.Tier, r.Range}
		if want[k] != 1 {
			t.Fatalf("reason %v for a segment not deleted, or twice", r)
		}
		want[k]--
	}
	for k, n := range want {
		if n != 0 {
			t.Fatalf("%v %v deleted without a reason", k.tier, k.r)
		}
	}
}

// checkCountedDisjoint: no offset is counted twice.
func checkCountedDisjoint(t *rapid.T, s Snapshot) {
	cs := countedSegments(s)
	for i := 1; i < len(cs); i++ {
		if cs[i].seg.Range.Start < cs[i-1].seg.Range.End {
			t.Fatalf("counted segments %v and %v overlap", cs[i-1].seg.Range, cs[i].seg.Range)
		}
	}
}
