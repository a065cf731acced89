package replication

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// rseg is a remote segment [start, end) with id n and epochs given as
// epoch, start pairs.
func rseg(n byte, start, end int64, st remotemeta.State, epochs ...int64) remotemeta.RemoteSegment {
	s := remotemeta.RemoteSegment{ID: remotemeta.SegmentID{n}, Range: base.Range{Start: off(start), End: off(end)}, State: st}
	for i := 0; i+1 < len(epochs); i += 2 {
		s.LeaderEpochs = append(s.LeaderEpochs, base.EpochStart{Epoch: base.Epoch(epochs[i]), Start: off(epochs[i+1])})
	}
	return s
}

func fin(n byte, start, end int64, epochs ...int64) remotemeta.RemoteSegment {
	return rseg(n, start, end, remotemeta.CopyFinished, epochs...)
}

func lin(pairs ...int64) []base.EpochStart {
	var out []base.EpochStart
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, base.EpochStart{Epoch: base.Epoch(pairs[i]), Start: off(pairs[i+1])})
	}
	return out
}

// TestPlanAuxState drives PlanAuxState as the fetcher does, answering its
// questions from a leader's lineage and log end (EndOffsetForEpoch, the
// leader's OffsetForLeaderEpoch), and checks where the follower's state
// comes from.
func TestPlanAuxState(t *testing.T) {
	for name, tc := range map[string]struct {
		segs           []remotemeta.RemoteSegment
		leader         []base.EpochStart
		leaderEnd      int64
		logStart       int64
		target         int64
		kind           AuxKind
		top            byte // id of the top segment
		chain          []byte
		wantLogStart   int64
		wantLineage    []base.EpochStart
		asks           []base.Epoch
		wantLocalStart int64
	}{
		"one epoch, back to the log start": {
			segs:   []remotemeta.RemoteSegment{fin(1, 0, 100, 0, 0), fin(2, 100, 200, 0, 100)},
			leader: lin(0, 0), leaderEnd: 300, target: 200,
			kind: AuxReady, top: 2, chain: []byte{1, 2}, wantLineage: lin(0, 0), asks: []base.Epoch{0}, wantLocalStart: 200,
		},
		"an epoch change at a segment boundary is asked about": {
			segs:   []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0), fin(2, 100, 200, 3, 100)},
			leader: lin(1, 0, 3, 100), leaderEnd: 300, target: 200,
			kind: AuxReady, top: 2, chain: []byte{1, 2}, wantLineage: lin(1, 0, 3, 100), asks: []base.Epoch{3, 1}, wantLocalStart: 200,
		},
		"epochs inside segments, continued across boundaries": {
			segs: []remotemeta.RemoteSegment{
				fin(1, 0, 100, 1, 0, 2, 40), fin(2, 100, 200, 2, 100, 5, 150), fin(3, 200, 260, 5, 200),
			},
			leader: lin(1, 0, 2, 40, 5, 150, 6, 280), leaderEnd: 300, target: 260,
			kind: AuxReady, top: 3, chain: []byte{1, 2, 3}, wantLineage: lin(1, 0, 2, 40, 5, 150), asks: []base.Epoch{5}, wantLocalStart: 260,
		},
		// A deposed leader of epoch 2 uploaded [0, 100) with offsets the
		// leader's log does not have; the leader's own upload of the same
		// range is chosen.
		"a diverged predecessor ending at the same offset is passed over": {
			segs: []remotemeta.RemoteSegment{
				fin(1, 0, 100, 1, 0, 2, 60), fin(2, 0, 100, 1, 0), fin(3, 100, 200, 3, 100),
			},
			leader: lin(1, 0, 3, 100), leaderEnd: 300, target: 200,
			kind: AuxReady, top: 3, chain: []byte{2, 3}, wantLineage: lin(1, 0, 3, 100), asks: []base.Epoch{3, 2, 1}, wantLocalStart: 200,
		},
		"a diverged top is passed over": {
			segs: []remotemeta.RemoteSegment{
				fin(1, 0, 100, 1, 0), fin(2, 100, 200, 2, 100), fin(3, 100, 200, 3, 100),
			},
			leader: lin(1, 0, 3, 100), leaderEnd: 300, target: 200,
			kind: AuxReady, top: 3, chain: []byte{1, 3}, wantLineage: lin(1, 0, 3, 100), asks: []base.Epoch{2, 3, 1}, wantLocalStart: 200,
		},
		"the tier begins above the log start": {
			segs:   []remotemeta.RemoteSegment{fin(1, 100, 200, 1, 100)},
			leader: lin(1, 0), leaderEnd: 300, target: 200,
			kind: AuxReady, top: 1, chain: []byte{1}, wantLogStart: 100, wantLineage: lin(1, 100), asks: []base.Epoch{1}, wantLocalStart: 200,
		},
		"the log start inside the top segment": {
			segs:     []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0), fin(2, 100, 200, 1, 100, 2, 150)},
			leader:   lin(1, 120, 2, 150),
			logStart: 120, leaderEnd: 300, target: 200,
			kind: AuxReady, top: 2, chain: []byte{2}, wantLogStart: 120, wantLineage: lin(1, 120, 2, 150), asks: []base.Epoch{2}, wantLocalStart: 200,
		},
		"the log start cuts the epochs of the chain": {
			segs:     []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0, 2, 50), fin(2, 100, 200, 2, 100)},
			leader:   lin(2, 60),
			logStart: 60, leaderEnd: 300, target: 200,
			kind: AuxReady, top: 2, chain: []byte{1, 2}, wantLogStart: 60, wantLineage: lin(2, 60), asks: []base.Epoch{2}, wantLocalStart: 200,
		},
		"a top segment ending past the target": {
			segs:     []remotemeta.RemoteSegment{fin(1, 50, 150, 1, 50)},
			leader:   lin(1, 50),
			logStart: 50, leaderEnd: 300, target: 100,
			kind: AuxReady, top: 1, chain: []byte{1}, wantLogStart: 50, wantLineage: lin(1, 50), asks: []base.Epoch{1}, wantLocalStart: 150,
		},
		"segments that are not finished hold nothing": {
			segs: []remotemeta.RemoteSegment{
				rseg(1, 0, 100, remotemeta.CopyStarted, 1, 0), rseg(2, 0, 100, remotemeta.Dangling, 1, 0),
				rseg(3, 0, 100, remotemeta.DeleteStarted, 1, 0),
			},
			leader: lin(1, 0), leaderEnd: 300, target: 100,
			kind: AuxMissing,
		},
		"nothing holds the offset before the target": {
			segs:   []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0)},
			leader: lin(1, 0), leaderEnd: 300, target: 250,
			kind: AuxMissing,
		},
		"the leader never had the tier's epoch": {
			segs:   []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0)},
			leader: lin(2, 0), leaderEnd: 300, target: 100,
			kind: AuxMissing, asks: []base.Epoch{1},
		},
		// The leader's epoch 1 ends at 99, exclusive: its offset 99 is of
		// epoch 2, the segment's is of epoch 1.
		"the leader's epoch ends at the top's last offset": {
			segs:   []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0)},
			leader: lin(1, 0, 2, 99), leaderEnd: 300, target: 100,
			kind: AuxMissing, asks: []base.Epoch{1},
		},
		// The leader's log starts where the top segment starts: the
		// segment below it is no part of the follower's log (nor are its
		// aborted transactions).
		"a segment below the log start is not in the chain": {
			segs:     []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0), fin(2, 100, 200, 1, 100)},
			leader:   lin(1, 100),
			logStart: 100, leaderEnd: 300, target: 200,
			kind: AuxReady, top: 2, chain: []byte{2}, wantLogStart: 100, wantLineage: lin(1, 100), asks: []base.Epoch{1}, wantLocalStart: 200,
		},
		"an epoch that starts at the log start begins the lineage": {
			segs:     []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0, 2, 50), fin(2, 100, 200, 2, 100)},
			leader:   lin(2, 50),
			logStart: 50, leaderEnd: 300, target: 200,
			kind: AuxReady, top: 2, chain: []byte{1, 2}, wantLogStart: 50, wantLineage: lin(2, 50), asks: []base.Epoch{2}, wantLocalStart: 200,
		},
		// A deposed leader of a newer epoch 4 (elected uncleanly at 50)
		// uploaded [0, 100); a segment whose last epoch is newer than the
		// next one's first cannot precede it, and is not asked about.
		"a predecessor of a newer epoch is not asked about": {
			segs: []remotemeta.RemoteSegment{
				fin(1, 0, 100, 1, 0, 4, 50), fin(2, 0, 100, 1, 0), fin(3, 100, 200, 3, 100),
			},
			leader: lin(1, 0, 3, 100, 5, 200), leaderEnd: 300, target: 200,
			kind: AuxReady, top: 3, chain: []byte{2, 3}, wantLineage: lin(1, 0, 3, 100), asks: []base.Epoch{3, 1}, wantLocalStart: 200,
		},
		"the leader's epoch ends before the top's last offset": {
			segs:   []remotemeta.RemoteSegment{fin(1, 0, 100, 1, 0)},
			leader: lin(1, 0, 2, 90), leaderEnd: 300, target: 100,
			kind: AuxMissing, asks: []base.Epoch{1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			answers := map[base.Epoch]LeaderAnswer{}
			var asks []base.Epoch
			var plan AuxPlan
			for range 20 {
				plan = PlanAuxState(tc.segs, off(tc.logStart), off(tc.target), answers)
				if plan.Kind != AuxAsk {
					break
				}
				if _, dup := answers[plan.Ask]; dup {
					t.Fatalf("asked about epoch %d twice", plan.Ask)
				}
				asks = append(asks, plan.Ask)
				if e, end, ok := EndOffsetForEpoch(tc.leader, off(tc.leaderEnd), plan.Ask); ok {
					answers[plan.Ask] = EpochEndAnswer(EpochEnd{Epoch: e, End: end})
				} else {
					answers[plan.Ask] = UndefinedAnswer()
				}
			}
			if plan.Kind != tc.kind {
				t.Fatalf("kind %v, want %v (plan %+v)", plan.Kind, tc.kind, plan)
			}
			if !slices.Equal(asks, tc.asks) {
				t.Errorf("asked about epochs %v, want %v", asks, tc.asks)
			}
			if tc.kind != AuxReady {
				return
			}
			var chain []byte
			for _, s := range plan.Chain {
				chain = append(chain, s.ID[0])
			}
			if plan.Top.ID[0] != tc.top || !slices.Equal(chain, tc.chain) {
				t.Errorf("top %d, chain %v; want %d, %v", plan.Top.ID[0], chain, tc.top, tc.chain)
			}
			if plan.LogStart != off(tc.wantLogStart) || plan.Top.Range.End != off(tc.wantLocalStart) {
				t.Errorf("log start %d, local start %d; want %d, %d", plan.LogStart, plan.Top.Range.End, tc.wantLogStart, tc.wantLocalStart)
			}
			if !slices.Equal(plan.Lineage, tc.wantLineage) {
				t.Errorf("lineage %v, want %v", plan.Lineage, tc.wantLineage)
			}
		})
	}
}

// TestPlanAuxStateNeedsTheEpochNamed: only an answer that names the
// segment's epoch with an end past its offset says the leader holds it;
// an end offset alone (OffsetForLeaderEpoch v0's answer, whose epoch
// reads as 0), an undefined answer or an older epoch do not.
func TestPlanAuxStateNeedsTheEpochNamed(t *testing.T) {
	for name, tc := range map[string]struct {
		segEpoch int64
		answer   LeaderAnswer
		want     AuxKind
	}{
		"the epoch, ending past the offset": {0, EpochEndAnswer(EpochEnd{Epoch: 0, End: 300}), AuxReady},
		"an end offset alone":               {0, OffsetOnlyAnswer(300), AuxMissing},
		"undefined":                         {0, UndefinedAnswer(), AuxMissing},
		"an older epoch":                    {2, EpochEndAnswer(EpochEnd{Epoch: 1, End: 300}), AuxMissing},
	} {
		segs := []remotemeta.RemoteSegment{fin(1, 0, 100, tc.segEpoch, 0)}
		answers := map[base.Epoch]LeaderAnswer{base.Epoch(tc.segEpoch): tc.answer}
		if got := PlanAuxState(segs, 0, 100, answers); got.Kind != tc.want {
			t.Errorf("%s: plan %v, want %v", name, got.Kind, tc.want)
		}
	}
}

func TestPlanAuxStatePanicsAtTheLogStart(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a target at the log start")
		}
	}()
	PlanAuxState(nil, 100, 100, nil)
}

// TestTieredBootstrap is KIP-1023's choice of an empty follower's start,
// from its leader's earliest pending upload (-6), log start (-2) and
// earliest local (-4) offsets.
func TestTieredBootstrap(t *testing.T) {
	for name, tc := range map[string]struct {
		pending              int64
		known                bool
		logStart, localStart int64
		kind                 BootstrapKind
		at                   int64
	}{
		"tiered past the local log start":       {pending: 500, known: true, logStart: 0, localStart: 300, kind: BootstrapFromTier, at: 500},
		"tiered up to the local log start":      {pending: 300, known: true, logStart: 0, localStart: 300, kind: BootstrapFromTier, at: 300},
		"tiered, log start moved up":            {pending: 500, known: true, logStart: 200, localStart: 300, kind: BootstrapFromTier, at: 500},
		"nothing tiered":                        {pending: 0, known: true, logStart: 0, localStart: 0, kind: BootstrapFromLogStart, at: 0},
		"nothing tiered, trimmed log":           {pending: 70, known: true, logStart: 70, localStart: 70, kind: BootstrapFromLogStart, at: 70},
		"tier stopped below the log start":      {pending: 100, known: true, logStart: 200, localStart: 200, kind: BootstrapFromLogStart, at: 200},
		"unknown, nothing uploaded yet":         {known: false, logStart: 40, localStart: 40, kind: BootstrapFromLogStart, at: 40},
		"unknown, uploaded but leader unaware":  {known: false, logStart: 0, localStart: 300, kind: BootstrapRetry},
		"unknown, local start past a log start": {known: false, logStart: 10, localStart: 11, kind: BootstrapRetry},
	} {
		kind, at := TieredBootstrap(off(tc.pending), tc.known, off(tc.logStart), off(tc.localStart))
		if kind != tc.kind || (kind != BootstrapRetry && at != off(tc.at)) {
			t.Errorf("%s: TieredBootstrap = %v, %d; want %v, %d", name, kind, at, tc.kind, tc.at)
		}
	}
}

func TestEmptyFollower(t *testing.T) {
	for _, tc := range []struct {
		logStart, logEnd int64
		want             bool
	}{
		{0, 0, true},     // a new replica
		{300, 300, true}, // one that started over at its leader's log start
		{0, 10, false},
		{0, 300, false}, // one that rebuilt [0, 300) from the tier
	} {
		if got := EmptyFollower(off(tc.logStart), off(tc.logEnd)); got != tc.want {
			t.Errorf("EmptyFollower(%d, %d) = %v, want %v", tc.logStart, tc.logEnd, got, tc.want)
		}
	}
}
