package cleaner

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

const planNow = int64(10_000_000)

// fourSegments: three sealed segments of 1000 bytes and an active one.
func fourSegments() []Segment {
	return []Segment{
		{Base: 0, Next: 100, SizeBytes: 1000, MaxTimestampMs: planNow - 50_000, HasTimestamp: true},
		{Base: 100, Next: 200, SizeBytes: 1000, MaxTimestampMs: planNow - 40_000, HasTimestamp: true},
		{Base: 200, Next: 300, SizeBytes: 1000, MaxTimestampMs: planNow - 30_000, HasTimestamp: true},
		{Base: 300, Next: 350, SizeBytes: 500, MaxTimestampMs: planNow - 1, HasTimestamp: true},
	}
}

func basePlan() PlanInput {
	return PlanInput{
		Segments:           fourSegments(),
		CleanableEnd:       300,
		NowMs:              planNow,
		MaxCompactionLagMs: math.MaxInt64,
		MinCleanableRatio:  0.5,
	}
}

func TestPlan(t *testing.T) {
	type want struct {
		dirty, uncleanable base.Offset
		cleanB, dirtyB     int64
		clean              bool
	}
	for _, tc := range []struct {
		name string
		edit func(*PlanInput)
		want want
	}{
		{"no checkpoint: the whole log is dirty", func(in *PlanInput) {},
			want{0, 300, 0, 3000, true}},
		{"checkpoint at a segment base", func(in *PlanInput) { in.Checkpoint, in.CheckpointOK = 200, true },
			want{200, 300, 2000, 1000, false}},
		{"ratio at the minimum cleans", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK = 200, true
			in.Segments[2].SizeBytes = 2000
		}, want{200, 300, 2000, 2000, true}},
		{"ratio just under the minimum does not", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK = 200, true
			in.Segments[2].SizeBytes = 1999
		}, want{200, 300, 2000, 1999, false}},
		{"ratio 0 cleans anything dirty", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK, in.MinCleanableRatio = 200, true, 0
		}, want{200, 300, 2000, 1000, true}},
		{"checkpoint below the log start resets to it", func(in *PlanInput) {
			in.LogStart, in.Checkpoint, in.CheckpointOK = 100, 50, true
		}, want{100, 300, 0, 2000, true}},
		{"checkpoint past the cleanable end resets to the log start", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK = 320, true
		}, want{0, 300, 0, 3000, true}},
		{"checkpoint ignored when not OK", func(in *PlanInput) { in.Checkpoint = 200 },
			want{0, 300, 0, 3000, true}},
		{"checkpoint at the cleanable end: nothing dirty", func(in *PlanInput) { in.Checkpoint, in.CheckpointOK = 300, true },
			want{300, 300, 3000, 0, false}},
		{"checkpoint mid-segment: that segment counts once, dirty", func(in *PlanInput) { in.Checkpoint, in.CheckpointOK = 150, true },
			want{150, 300, 1000, 2000, true}},
		{"cleanable end mid-segment rounds down", func(in *PlanInput) { in.CleanableEnd = 250 },
			want{0, 200, 0, 2000, true}},
		{"checkpoint and cleanable end in one segment: nothing", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK, in.CleanableEnd = 210, true, 250
		}, want{210, 210, 2000, 0, false}},
		{"log start past the cleanable end: nothing", func(in *PlanInput) { in.LogStart, in.CleanableEnd = 320, 300 },
			want{320, 320, 0, 0, false}},
		{"segments below the log start count nowhere", func(in *PlanInput) {
			in.LogStart, in.Checkpoint, in.CheckpointOK = 100, 200, true
		}, want{200, 300, 1000, 1000, true}},
		{"min lag: a young segment ends the range", func(in *PlanInput) {
			in.MinCompactionLagMs = 35_000
		}, want{0, 200, 0, 2000, true}},
		{"min lag: exactly old enough is cleanable", func(in *PlanInput) {
			in.MinCompactionLagMs = 30_000
		}, want{0, 300, 0, 3000, true}},
		{"min lag: one ms short is not", func(in *PlanInput) {
			in.MinCompactionLagMs = 30_001
		}, want{0, 200, 0, 2000, true}},
		{"min lag: young first dirty segment, straddled: nothing", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK, in.MinCompactionLagMs = 150, true, 45_000
		}, want{150, 150, 1000, 0, false}},
		{"min lag: young segments before the dirty range do not matter", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK, in.MinCompactionLagMs = 200, true, 25_000
			in.Segments[0].MaxTimestampMs = planNow
		}, want{200, 300, 2000, 1000, false}},
		{"min lag: a young segment ending at the checkpoint is clean, it does not matter", func(in *PlanInput) {
			in.Checkpoint, in.CheckpointOK, in.MinCompactionLagMs, in.MinCleanableRatio = 200, true, 25_000, 0.3
			in.Segments[1].MaxTimestampMs = planNow
		}, want{200, 300, 2000, 1000, true}},
		{"min lag 0: a future timestamp does not hold cleaning back (Kafka checks the lag only when > 0)", func(in *PlanInput) {
			in.Segments[1].MaxTimestampMs = planNow + 1_000
		}, want{0, 300, 0, 3000, true}},
		{"min lag: a segment without timestamps is cleanable", func(in *PlanInput) {
			in.MinCompactionLagMs = 35_000
			in.Segments[2].HasTimestamp = false
		}, want{0, 300, 0, 3000, true}},
		{"min lag: a future timestamp is young", func(in *PlanInput) {
			in.MinCompactionLagMs = 1
			in.Segments[1].MaxTimestampMs = planNow + 1_000
		}, want{0, 100, 0, 1000, true}},
	} {
		in := basePlan()
		tc.edit(&in)
		d := Plan(in)
		got := want{d.FirstDirty, d.FirstUncleanable, d.CleanBytes, d.DirtyBytes, d.Clean}
		if got != tc.want {
			t.Errorf("%s:\n got %+v (%s)\nwant %+v", tc.name, got, d.Reason, tc.want)
		}
	}
}

func TestPlanMaxCompactionLag(t *testing.T) {
	const lag = 60_000
	for _, tc := range []struct {
		name    string
		ts      int64
		tsOK    bool
		maxLag  int64
		cpAt    base.Offset
		wantCln bool
	}{
		{"first dirty record older than the lag forces cleaning", planNow - lag - 1, true, lag, 200, true},
		{"exactly the lag does not", planNow - lag, true, lag, 200, false},
		{"an unknown timestamp never forces", planNow - lag - 1, false, lag, 200, false},
		{"max lag 0 forces any past record", planNow - 1, true, 0, 200, true},
		{"the default (max int64) never forces, even for 1970", 0, true, math.MaxInt64, 200, false},
		{"no overflow at the extremes", math.MinInt64, true, math.MaxInt64, 200, true},
		{"forcing still needs dirty bytes", planNow - lag - 1, true, lag, 300, false},
		{"a first dirty timestamp in the future never forces", planNow + 1_000, true, lag, 200, false},
		{"nor with max lag 0", planNow + 1, true, 0, 200, false},
		{"nor at the extremes", math.MaxInt64, true, 0, 200, false},
	} {
		in := basePlan()
		in.MinCleanableRatio = 0.9 // the ratio (1/3 at most) never cleans here
		in.Checkpoint, in.CheckpointOK = tc.cpAt, true
		in.FirstDirtyTimestampMs, in.FirstDirtyTimestampOK, in.MaxCompactionLagMs = tc.ts, tc.tsOK, tc.maxLag
		if d := Plan(in); d.Clean != tc.wantCln || d.Forced != tc.wantCln {
			t.Errorf("%s: Clean %v, Forced %v (%s), want %v", tc.name, d.Clean, d.Forced, d.Reason, tc.wantCln)
		}
	}
}

func TestPlanDeleteHorizon(t *testing.T) {
	for _, tc := range []struct {
		name      string
		horizon   int64
		has       bool
		cpAt      base.Offset
		wantClean bool
	}{
		{"a passed horizon cleans a log with nothing dirty", planNow, true, 300, true},
		{"a horizon still ahead does not", planNow + 1, true, 300, false},
		{"no horizon does not", planNow - 1, false, 300, false},
		{"a passed horizon cleans a log whose ratio is low", planNow - 1, true, 200, true},
		{"nothing clean to revisit: no pass", planNow - 1, true, 0, false},
	} {
		in := basePlan()
		in.MinCleanableRatio = 0.9
		in.Checkpoint, in.CheckpointOK = tc.cpAt, true
		in.NextHorizonMs, in.HasNextHorizon = tc.horizon, tc.has
		if tc.cpAt == 0 {
			in.CleanableEnd = 0 // nothing below the checkpoint, nothing dirty
		}
		if d := Plan(in); d.Clean != tc.wantClean || d.Forced {
			t.Errorf("%s: Clean %v, Forced %v (%s), want Clean %v", tc.name, d.Clean, d.Forced, d.Reason, tc.wantClean)
		}
	}
}

func TestPlanPanicsOnInvalidInput(t *testing.T) {
	for name, edit := range map[string]func(*PlanInput){
		"overlapping segments": func(in *PlanInput) { in.Segments[1].Base = 99 },
		"backwards segment":    func(in *PlanInput) { in.Segments[1].Next = 99 },
		"negative size":        func(in *PlanInput) { in.Segments[0].SizeBytes = -1 },
		"ratio above 1":        func(in *PlanInput) { in.MinCleanableRatio = 1.5 },
		"ratio NaN":            func(in *PlanInput) { in.MinCleanableRatio = math.NaN() },
		"negative min lag":     func(in *PlanInput) { in.MinCompactionLagMs = -1 },
	} {
		in := basePlan()
		edit(&in)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Plan did not panic", name)
				}
			}()
			Plan(in)
		}()
	}
}

// Invariants of any plan, over random logs.
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var segs []Segment
		next := base.Offset(rapid.Int64Range(0, 50).Draw(t, "first"))
		for range rapid.IntRange(0, 6).Draw(t, "segments") {
			next += base.Offset(rapid.Int64Range(0, 3).Draw(t, "gap"))
			n := base.Offset(rapid.Int64Range(0, 40).Draw(t, "len"))
			segs = append(segs, Segment{Base: next, Next: next + n,
				SizeBytes:      rapid.Int64Range(0, 5000).Draw(t, "size"),
				MaxTimestampMs: rapid.Int64Range(0, 2000).Draw(t, "ts"), HasTimestamp: rapid.Bool().Draw(t, "hasTs")})
			next += n
		}
		in := PlanInput{
			Segments:              segs,
			LogStart:              base.Offset(rapid.Int64Range(0, 100).Draw(t, "logStart")),
			Checkpoint:            base.Offset(rapid.Int64Range(0, 300).Draw(t, "checkpoint")),
			CheckpointOK:          rapid.Bool().Draw(t, "checkpointOK"),
			CleanableEnd:          base.Offset(rapid.Int64Range(0, 300).Draw(t, "cleanableEnd")),
			NowMs:                 2000,
			MinCompactionLagMs:    rapid.Int64Range(0, 2000).Draw(t, "minLag"),
			MaxCompactionLagMs:    rapid.Int64Range(0, 3000).Draw(t, "maxLag"),
			MinCleanableRatio:     rapid.Float64Range(0, 1).Draw(t, "ratio"),
			FirstDirtyTimestampMs: rapid.Int64Range(0, 2000).Draw(t, "firstDirtyTs"),
			FirstDirtyTimestampOK: rapid.Bool().Draw(t, "firstDirtyTsOK"),
		}
		d := Plan(in)
		if d.FirstDirty < in.LogStart || d.FirstUncleanable < d.FirstDirty {
			t.Fatalf("order broken: %+v", d)
		}
		if d.FirstUncleanable > max(d.FirstDirty, in.CleanableEnd) {
			t.Fatalf("uncleanable %d past cleanable end %d", d.FirstUncleanable, in.CleanableEnd)
		}
		var total int64
		for _, s := range segs {
			total += s.SizeBytes
			if d.FirstUncleanable > d.FirstDirty && s.Base < d.FirstUncleanable && d.FirstUncleanable < s.Next {
				t.Fatalf("segment %+v straddles first uncleanable %d", s, d.FirstUncleanable)
			}
			dirty := s.Base < d.FirstUncleanable && s.Next > d.FirstDirty && d.FirstUncleanable > d.FirstDirty
			if dirty && in.MinCompactionLagMs > 0 && s.HasTimestamp && s.MaxTimestampMs > in.NowMs-in.MinCompactionLagMs {
				t.Fatalf("segment %+v younger than min lag %d is in the dirty range %+v", s, in.MinCompactionLagMs, d)
			}
		}
		if d.CleanBytes < 0 || d.DirtyBytes < 0 || d.CleanBytes+d.DirtyBytes > total {
			t.Fatalf("bytes %d + %d of %d", d.CleanBytes, d.DirtyBytes, total)
		}
		if d.Clean && d.DirtyBytes == 0 || d.Forced && !d.Clean || d.Ratio < 0 || d.Ratio > 1 {
			t.Fatalf("bad decision %+v", d)
		}
		if d.DirtyBytes > 0 && d.Ratio >= in.MinCleanableRatio && !d.Clean {
			t.Fatalf("ratio %v >= %v but not cleaning", d.Ratio, in.MinCleanableRatio)
		}
	})
}

func TestGroupSegments(t *testing.T) {
	seg := func(b, n base.Offset, size int64) Segment { return Segment{Base: b, Next: n, SizeBytes: size} }
	const u32 = base.Offset(math.MaxUint32)
	for _, tc := range []struct {
		name     string
		segs     []Segment
		maxBytes int64
		want     []int // group lengths
	}{
		{"none", nil, 100, nil},
		{"fill up to the limit", []Segment{seg(0, 10, 100), seg(10, 20, 200), seg(20, 30, 300), seg(30, 40, 400), seg(40, 50, 50)}, 600, []int{3, 2}},
		{"a lone large segment is its own group", []Segment{seg(0, 10, 700), seg(10, 20, 100), seg(20, 30, 900)}, 600, []int{1, 1, 1}},
		{"empty segments merge freely", []Segment{seg(0, 0, 0), seg(0, 10, 600), seg(10, 10, 0)}, 600, []int{3}},
		{"offset span at the uint32 limit merges", []Segment{seg(0, 10, 1), seg(10, u32, 1)}, 600, []int{2}},
		{"offset span past the uint32 limit splits", []Segment{seg(0, 10, 1), seg(10, u32+1, 1), seg(u32+1, u32+5, 1)}, 600, []int{1, 2}},
	} {
		groups := GroupSegments(tc.segs, tc.maxBytes)
		var lens []int
		var flat []Segment
		for _, g := range groups {
			lens = append(lens, len(g))
			flat = append(flat, g...)
		}
		if len(lens) != len(tc.want) {
			t.Errorf("%s: groups %v, want %v", tc.name, lens, tc.want)
			continue
		}
		for i := range lens {
			if lens[i] != tc.want[i] {
				t.Errorf("%s: groups %v, want %v", tc.name, lens, tc.want)
			}
		}
		if len(flat) != len(tc.segs) {
			t.Errorf("%s: groups cover %d of %d segments", tc.name, len(flat), len(tc.segs))
		}
		for i := range flat {
			if flat[i] != tc.segs[i] {
				t.Errorf("%s: segment %d out of order", tc.name, i)
			}
		}
	}
}
