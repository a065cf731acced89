package tier

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestPlanFollowerLocal(t *testing.T) {
	// Local segments of 10 offsets and 100 bytes, the active one [40, 45).
	local := []LocalSegment{lseg(0, 10, 100), lseg(10, 20, 100), lseg(20, 30, 100), lseg(30, 40, 100), active(40, 45, 50)}
	fin := func(n int, start, end base.Offset) remotemeta.RemoteSegment {
		return rseg(n, start, end, 100, remotemeta.CopyFinished)
	}
	tiered30 := mustView(fin(1, 0, 10), fin(2, 10, 20), fin(3, 20, 30))
	keepTwo := retention.Policy{LocalRetentionBytes: retention.LimitOf(250)}
	keepNone := retention.Policy{LocalRetentionBytes: retention.LimitOf(0)}
	in := func(mod func(*FollowerLocalInput)) FollowerLocalInput {
		i := FollowerLocalInput{Local: local, Lineage: epoch0, HighWatermark: 45, Policy: keepTwo, NowMs: 1000}
		if mod != nil {
			mod(&i)
		}
		return i
	}
	for _, tc := range []struct {
		name   string
		in     FollowerLocalInput
		view   PartitionView
		want   []base.Range
		tiered retention.Tiered
	}{
		{name: "view not loaded", in: in(nil), view: PartitionView{}, tiered: retention.TieredUnknown()},
		{name: "nothing tiered yet", in: in(nil), view: mustView(), tiered: retention.NothingTiered()},
		{name: "only failed copies", in: in(nil), view: mustView(rseg(1, 0, 10, 100, remotemeta.Dangling)),
			tiered: retention.NothingTiered()},
		{
			name: "local.retention.bytes deletes the oldest tiered segments",
			in:   in(nil), view: tiered30, want: []base.Range{rng(0, 10), rng(10, 20)}, tiered: retention.TieredUpTo(30),
		},
		{
			name: "never what is not tiered, however small the limit",
			in:   in(func(i *FollowerLocalInput) { i.Policy = keepNone }), view: tiered30,
			want: []base.Range{rng(0, 10), rng(10, 20), rng(20, 30)}, tiered: retention.TieredUpTo(30),
		},
		{
			name: "no local limit deletes nothing",
			in:   in(func(i *FollowerLocalInput) { i.Policy = retention.Policy{} }), view: tiered30,
			tiered: retention.TieredUpTo(30),
		},
		{
			// The follower's high watermark trails what the leader tiered:
			// the tier is unknown at it (retention.Snapshot requires
			// tieredNext <= highWatermark), so nothing goes.
			name: "tieredNext above the follower's high watermark",
			in:   in(func(i *FollowerLocalInput) { i.Policy, i.HighWatermark = keepNone, 25 }), view: tiered30,
			tiered: retention.TieredUnknown(),
		},
		{
			// Total retention expires [0, 20) (the remote [0, 10) and the
			// local [10, 20)): the leader moves its log start to 20 and
			// deletes the local [0, 20). The follower keeps its log start
			// and deletes only what is tiered.
			name: "total retention past tieredNext: only the tiered part",
			in: in(func(i *FollowerLocalInput) {
				i.Local = []LocalSegment{lseg(0, 10, 100), lseg(10, 20, 100), lseg(20, 30, 100), active(30, 35, 50)}
				i.HighWatermark, i.Policy = 35, retention.Policy{RetentionBytes: retention.LimitOf(60)}
			}),
			view: mustView(fin(1, 0, 10)), want: []base.Range{rng(0, 10)}, tiered: retention.TieredUpTo(10),
		},
		{
			// [10, 20) failed to copy and [20, 30) was copied again after
			// (a hole no real leader leaves, but the quorum is the truth):
			// the local [10, 20) is the only copy of its offsets.
			name: "a hole in the remote tier stops the deletion",
			in:   in(func(i *FollowerLocalInput) { i.Policy = keepNone }),
			view: mustView(fin(1, 0, 10), rseg(2, 10, 20, 100, remotemeta.Dangling), fin(3, 20, 30)),
			want: []base.Range{rng(0, 10)}, tiered: retention.TieredUpTo(30),
		},
		{
			// The remote segments hold epoch 1 where this follower's log
			// holds epoch 0: a history it does not share vouches for none
			// of its offsets.
			name:   "remote segments of another lineage",
			in:     in(func(i *FollowerLocalInput) { i.Policy = keepNone }),
			view:   mustView(rseg(1, 0, 10, 100, remotemeta.CopyFinished, es(1, 0)), rseg(2, 10, 20, 100, remotemeta.CopyFinished, es(1, 10))),
			tiered: retention.NothingTiered(),
		},
		{
			// The log start (the leader's) is inside the first local
			// segment; the remote copy of [0, 5) is gone and the epoch
			// cache starts at the log start. Only [5, 10) must be held.
			name: "log start inside the first local segment",
			in: in(func(i *FollowerLocalInput) {
				i.Policy, i.LogStart, i.Lineage = keepNone, 5, []base.EpochStart{es(0, 5)}
			}),
			view: mustView(fin(2, 5, 20), fin(3, 20, 30)),
			want: []base.Range{rng(0, 10), rng(10, 20), rng(20, 30)}, tiered: retention.TieredUpTo(30),
		},
		{
			name: "the active segment stays",
			in: in(func(i *FollowerLocalInput) {
				i.Local, i.HighWatermark, i.Policy = []LocalSegment{active(0, 10, 100)}, 10, keepNone
			}),
			view: mustView(fin(1, 0, 10)), tiered: retention.TieredUpTo(10),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanFollowerLocal(tc.in, tc.view)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Deletions, tc.want) {
				t.Errorf("deletions %v, want %v", p.Deletions, tc.want)
			}
			if p.Tiered != tc.tiered {
				t.Errorf("tiered %+v, want %+v", p.Tiered, tc.tiered)
			}
			wantBefore := tc.in.Local[0].BaseOffset
			if n := len(tc.want); n > 0 {
				wantBefore = tc.want[n-1].End
			}
			if p.DeleteLocalBefore != wantBefore {
				t.Errorf("DeleteLocalBefore %d, want %d", p.DeleteLocalBefore, wantBefore)
			}
			if len(p.Deletions) > 0 && len(p.Reasons) == 0 {
				t.Error("deletions without reasons")
			}
		})
	}
}

func TestPlanFollowerLocalRefusesAnInvalidSnapshot(t *testing.T) {
	view := mustView(rseg(1, 0, 10, 100, remotemeta.CopyFinished))
	local := []LocalSegment{lseg(0, 10, 100), active(10, 20, 100)}
	for name, in := range map[string]FollowerLocalInput{
		"no local segment":          {Lineage: epoch0, HighWatermark: 10},
		"last not active":           {Local: local[:1], Lineage: epoch0, HighWatermark: 10},
		"log start above watermark": {Local: local, Lineage: epoch0, HighWatermark: 15, LogStart: 16},
		"watermark above log end": {Local: local, Lineage: epoch0, HighWatermark: 21,
			Policy: retention.Policy{LocalRetentionBytes: retention.LimitOf(0)}},
		"lineage not ascending": {Local: local, Lineage: []base.EpochStart{es(1, 0), es(0, 5)}, HighWatermark: 15},
		"negative limit": {Local: local, Lineage: epoch0, HighWatermark: 15,
			Policy: retention.Policy{LocalRetentionBytes: retention.Limit{Value: -1, Set: true}}},
	} {
		p, err := PlanFollowerLocal(in, view)
		if err == nil || len(p.Deletions) != 0 {
			t.Errorf("%s: plan %+v, err %v; want an error and no deletion", name, p, err)
		}
	}
}

// followerWorld is a random follower: its local segments, its lineage,
// offsets and policy, and the quorum's view of its remote segments (cut
// at boundaries of their own, with holes and other states at random).
type followerWorld struct {
	in   FollowerLocalInput
	view PartitionView
	// holes is true when a remote segment of the lineage is not
	// COPY_FINISHED.
	holes bool
}

func drawFollowerWorld(t *rapid.T) followerWorld {
	var w followerWorld
	at := base.Offset(rapid.IntRange(0, 40).Draw(t, "localStart"))
	ts := int64(rapid.IntRange(0, 100).Draw(t, "ts0"))
	for i, n := 0, rapid.IntRange(0, 6).Draw(t, "segments"); i <= n; i++ {
		active := i == n
		length := base.Offset(rapid.IntRange(1, 10).Draw(t, "length"))
		if active {
			length = base.Offset(rapid.IntRange(0, 10).Draw(t, "activeLength"))
		}
		ts += int64(rapid.IntRange(0, 50).Draw(t, "dts"))
		w.in.Local = append(w.in.Local, LocalSegment{BaseOffset: at, NextOffset: at + length,
			SizeBytes: int64(length) * bytesPerOffset, MaxTimestampMs: ts, Active: active})
		at += length
	}
	logEnd := at
	w.in.LogStart = base.Offset(rapid.IntRange(0, int(logEnd)).Draw(t, "logStart"))
	w.in.HighWatermark = base.Offset(rapid.IntRange(int(w.in.LogStart), int(logEnd)).Draw(t, "hw"))

	remoteStart := base.Offset(rapid.IntRange(0, int(w.in.LogStart)).Draw(t, "remoteStart"))
	lineageStart := remoteStart
	if rapid.Bool().Draw(t, "epochsTruncated") {
		lineageStart = w.in.LogStart
	}
	w.in.Lineage = []base.EpochStart{es(0, lineageStart)}
	if e := base.Offset(rapid.IntRange(0, int(logEnd)+5).Draw(t, "epoch1")); e > lineageStart && e < logEnd {
		w.in.Lineage = append(w.in.Lineage, es(1, e))
	}

	var segs []remotemeta.RemoteSegment
	// Mostly at or below the high watermark, where the tier is known.
	tierMax := w.in.HighWatermark
	if rapid.IntRange(0, 3).Draw(t, "tierPastWatermark") == 0 {
		tierMax = logEnd + 5
	}
	tierEnd := base.Offset(rapid.IntRange(int(remoteStart), int(tierMax)).Draw(t, "tierEnd"))
	for at, id := remoteStart, 1; at < tierEnd; id++ {
		end := min(at+base.Offset(rapid.IntRange(1, 12).Draw(t, "remoteLength")), tierEnd)
		st := remotemeta.CopyFinished
		if rapid.IntRange(0, 5).Draw(t, "hole") == 0 {
			st = rapid.SampledFrom([]remotemeta.State{remotemeta.Dangling, remotemeta.CopyStarted, remotemeta.DeleteStarted}).Draw(t, "state")
			w.holes = true
		}
		s := rseg(id, at, end, int64(end-at)*bytesPerOffset, st, epochsOf(w.in.Lineage, rng(at, end))...)
		s.MaxTimestampMs = int64(rapid.IntRange(0, 400).Draw(t, "remoteTs"))
		segs = append(segs, s)
		at = end
	}
	w.view = mustView(segs...)
	limit := func(label string) retention.Limit {
		if rapid.IntRange(0, 2).Draw(t, label+"Set") > 0 {
			return retention.LimitOf(int64(rapid.IntRange(0, 500).Draw(t, label)))
		}
		return retention.Limit{}
	}
	w.in.Policy = retention.Policy{RetentionBytes: limit("retentionBytes"), RetentionMs: limit("retentionMs"),
		LocalRetentionBytes: limit("localBytes"), LocalRetentionMs: limit("localMs")}
	w.in.NowMs = int64(rapid.IntRange(0, 600).Draw(t, "now"))
	return w
}

// epochsOf is the lineage restricted to r, as an upload records it.
func epochsOf(lineage []base.EpochStart, r base.Range) []base.EpochStart {
	out := []base.EpochStart{{Epoch: lineage[0].Epoch, Start: r.Start}}
	for _, e := range lineage {
		switch {
		case e.Start <= r.Start:
			out[0].Epoch = e.Epoch
		case e.Start < r.End && e.Epoch != out[len(out)-1].Epoch:
			out = append(out, e)
		}
	}
	return out
}

// TestPlanFollowerLocalProperties: whatever the follower's state, what it
// deletes is a prefix of its local segments without the active one, below
// tieredNext and its high watermark, every offset of it at or after the
// log start held by a COPY_FINISHED segment of its lineage (checked one
// offset at a time); it never deletes what the leader's plan on the same
// state keeps; and, when the remote tier has no hole, it deletes exactly
// the leader's local deletions that are tiered.
func TestPlanFollowerLocalProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawFollowerWorld(t)
		p, err := PlanFollowerLocal(w.in, w.view)
		if err != nil {
			t.Fatalf("valid snapshot refused: %v", err)
		}
		tiered, _ := w.view.RetentionTier(w.in.Lineage, w.in.HighWatermark)
		if p.Tiered != tiered {
			t.Fatalf("tiered %+v, the view says %+v", p.Tiered, tiered)
		}
		if len(p.Deletions) >= len(w.in.Local) {
			t.Fatalf("deletes %d of %d local segments: the active one too", len(p.Deletions), len(w.in.Local))
		}
		for i, r := range p.Deletions {
			if r != w.in.Local[i].Range() {
				t.Fatalf("deletion %d is %v, local segment %d is %v: not a prefix", i, r, i, w.in.Local[i].Range())
			}
			if !tiered.Known || !tiered.Any || r.End > tiered.Next || r.End > w.in.HighWatermark {
				t.Fatalf("deletes %v with tier %+v and high watermark %d", r, tiered, w.in.HighWatermark)
			}
			for o := max(r.Start, w.in.LogStart); o < r.End; o++ {
				if s, ok := w.view.SegmentAt(w.in.Lineage, o); !ok || s.State != remotemeta.CopyFinished {
					t.Fatalf("deletes %v, but no COPY_FINISHED segment of the lineage holds offset %d", r, o)
				}
			}
		}
		wantBefore := w.in.Local[0].BaseOffset
		if n := len(p.Deletions); n > 0 {
			wantBefore = p.Deletions[n-1].End
		}
		if p.DeleteLocalBefore != wantBefore {
			t.Fatalf("DeleteLocalBefore %d, deletions %v", p.DeleteLocalBefore, p.Deletions)
		}
		if !tiered.Known || !tiered.Any {
			return
		}

		// The leader's pass on the same state (Pass builds its snapshot so).
		_, remote := w.view.RetentionTier(w.in.Lineage, w.in.HighWatermark)
		snap := retention.Snapshot{LogStart: w.in.LogStart, HighWatermark: w.in.HighWatermark,
			Local: retentionSegments(w.in.Local), Remote: remote, Tiered: tiered}
		leader := retention.Plan(snap, w.in.Policy, w.in.NowMs)
		var leaderTiered []base.Range
		for _, s := range leader.LocalDeletions(snap.Local) {
			if s.Range.End <= tiered.Next {
				leaderTiered = append(leaderTiered, s.Range)
			}
		}
		if len(p.Deletions) > len(leaderTiered) || !slices.Equal(p.Deletions, leaderTiered[:len(p.Deletions)]) {
			t.Fatalf("follower deletes %v; the leader's plan deletes locally only %v", p.Deletions, leaderTiered)
		}
		if !w.holes && !slices.Equal(p.Deletions, leaderTiered) {
			t.Fatalf("follower deletes %v, the leader the tiered %v, with no hole in the tier", p.Deletions, leaderTiered)
		}
	})
}

// remoteHolds answers for every offset of the range, its end included:
// a remote tier that stops inside the range does not hold it.
func TestRemoteHolds(t *testing.T) {
	remote := []retention.Segment{{Range: rng(0, 10)}, {Range: rng(10, 20)}, {Range: rng(30, 40)}}
	for _, tc := range []struct {
		r    base.Range
		want bool
	}{
		{rng(0, 20), true},
		{rng(5, 15), true},
		{rng(5, 5), true}, // empty
		{rng(15, 25), false},
		{rng(20, 30), false},
		{rng(25, 35), false},
		{rng(30, 40), true},
		{rng(35, 45), false}, // past the tier's end
		{rng(40, 41), false},
	} {
		if got := remoteHolds(remote, tc.r); got != tc.want {
			t.Errorf("remoteHolds(%v) = %v, want %v", tc.r, got, tc.want)
		}
	}
	if remoteHolds(nil, rng(0, 1)) {
		t.Error("an empty tier holds [0, 1)")
	}
}
