package replication

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestTruncationPointTable(t *testing.T) {
	// The follower: epoch 1 on [0, 10), 3 on [10, 20), 5 on [20, 30).
	lineage := lin(1, 0, 3, 10, 5, 20)
	const logEnd, hw = 30, 8
	for _, tc := range []struct {
		name   string
		answer LeaderAnswer
		want   Truncation
	}{
		{"no end offset: the high watermark", UndefinedAnswer(), Truncation{Offset: hw, Completed: true}},
		{"an offset without an epoch, below the log end", OffsetOnlyAnswer(12), Truncation{Offset: 12, Completed: true}},
		{"an offset without an epoch, past the log end", OffsetOnlyAnswer(40), Truncation{Offset: 30, Completed: true}},
		{"same epoch, the leader's end is lower", EpochEndAnswer(EpochEnd{3, 15}), Truncation{Offset: 15, Completed: true}},
		{"same epoch, the follower's end is lower", EpochEndAnswer(EpochEnd{3, 25}), Truncation{Offset: 20, Completed: true}},
		{"the latest epoch, the leader has more", EpochEndAnswer(EpochEnd{5, 35}), Truncation{Offset: 30, Completed: true}},
		{"an epoch the follower never had: step to its next epoch and ask again", EpochEndAnswer(EpochEnd{4, 26}), Truncation{Offset: 20, Completed: false}},
		{"an epoch the follower never had, between its first two", EpochEndAnswer(EpochEnd{2, 5}), Truncation{Offset: 10, Completed: false}},
		{"an epoch below all the follower's: its first start", EpochEndAnswer(EpochEnd{0, 5}), Truncation{Offset: 0, Completed: true}},
		{"an epoch above the follower's latest: the leader's end", EpochEndAnswer(EpochEnd{6, 22}), Truncation{Offset: 22, Completed: true}},
		{"an epoch above the follower's latest, past its end", EpochEndAnswer(EpochEnd{6, 45}), Truncation{Offset: 30, Completed: true}},
	} {
		if got := TruncationPoint(lineage, logEnd, hw, tc.answer); got != tc.want {
			t.Errorf("%s: TruncationPoint = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got, want := TruncationPoint(nil, 7, 4, EpochEndAnswer(EpochEnd{2, 5})), (Truncation{Offset: 5, Completed: true}); got != want {
		t.Errorf("empty follower lineage: %+v, want %+v", got, want)
	}
}

func TestTruncationPointPanics(t *testing.T) {
	for name, call := range map[string]func(){
		"hw above the log end": func() { TruncationPoint(nil, 5, 6, UndefinedAnswer()) },
		"zero answer kind":     func() { TruncationPoint(nil, 5, 5, LeaderAnswer{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			call()
		}()
	}
}

// TestTruncationDropsAnEmptyEpochAtTheEnd pins why a follower truncates its
// lineage Kafka's way (TruncateLineage drops an epoch starting exactly at
// the new end): this follower led epoch 3 from offset 10 without appending.
// The leader never had epoch 3 and answers with epoch 2; the follower's step
// is its own log end, so nothing is truncated, and only dropping epoch 3
// makes the next question a different one.
func TestTruncationDropsAnEmptyEpochAtTheEnd(t *testing.T) {
	follower := lin(1, 0, 3, 10)
	leader := lin(1, 0, 2, 6, 4, 15)
	const followerEnd, leaderEnd = 10, 18
	e, end, _ := EndOffsetForEpoch(leader, leaderEnd, 3)
	step := TruncationPoint(follower, followerEnd, 0, EpochEndAnswer(EpochEnd{e, end}))
	if step != (Truncation{Offset: 10, Completed: false}) {
		t.Fatalf("first step %+v, want 10, not completed", step)
	}
	follower = TruncateLineage(follower, min(step.Offset, followerEnd))
	if latest, _ := LatestEpoch(follower); latest != 1 {
		t.Fatalf("after the step the follower would ask about epoch %d again", latest)
	}
	e, end, _ = EndOffsetForEpoch(leader, leaderEnd, 1)
	if got := TruncationPoint(follower, followerEnd, 0, EpochEndAnswer(EpochEnd{e, end})); got != (Truncation{Offset: 6, Completed: true}) {
		t.Fatalf("second step %+v, want 6, completed", got)
	}
}

// simLog is one replica's log in the KIP-279 simulation: its lineage and its
// log end (every log starts at offset 0).
type simLog struct {
	lineage []base.EpochStart
	end     base.Offset
}

func (l *simLog) lead(epoch base.Epoch, records int64) {
	l.lineage = append(l.lineage, base.EpochStart{Epoch: epoch, Start: l.end})
	l.end += base.Offset(records)
}

func (l simLog) clone() simLog { return simLog{lineage: slices.Clone(l.lineage), end: l.end} }

// genDiverged draws a leader and a follower whose logs are identical on
// [0, d) and differ at d (or one ends there), the way real histories do:
//   - a common prefix of epochs, each with data;
//   - the last common epoch continued past d by at most one of them (its
//     leader wrote more than the other replica copied);
//   - then epochs that each of the two led alone, some without data, with
//     no epoch in both (one leader per epoch);
//   - and the leader's current epoch last, above every epoch the follower
//     has, possibly still empty.
func genDiverged(t *rapid.T) (leader, follower simLog, d base.Offset) {
	var prefix simLog
	epoch := base.Epoch(0)
	for i, n := 0, rapid.IntRange(0, 4).Draw(t, "prefixEpochs"); i < n; i++ {
		epoch += base.Epoch(rapid.Int32Range(1, 3).Draw(t, "gap"))
		prefix.lead(epoch, rapid.Int64Range(1, 4).Draw(t, "prefixLen"))
	}
	d = prefix.end
	leader, follower = prefix.clone(), prefix.clone()
	if len(prefix.lineage) > 0 {
		more := base.Offset(rapid.Int64Range(1, 4).Draw(t, "continuedLen"))
		switch rapid.IntRange(0, 2).Draw(t, "continuedBy") {
		case 1:
			leader.end += more
		case 2:
			follower.end += more
		}
	}
	for i, n := 0, rapid.IntRange(0, 5).Draw(t, "ledAlone"); i < n; i++ {
		epoch += base.Epoch(rapid.Int32Range(1, 3).Draw(t, "gap"))
		side := &leader
		if rapid.Bool().Draw(t, "followerLed") {
			side = &follower
		}
		side.lead(epoch, rapid.Int64Range(0, 4).Draw(t, "aloneLen"))
	}
	epoch += base.Epoch(rapid.Int32Range(1, 3).Draw(t, "gap"))
	leader.lead(epoch, rapid.Int64Range(0, 4).Draw(t, "currentLen"))
	return leader, follower, d
}

// TestPropTruncationFindsDivergenceWithOffsetForLeaderEpoch simulates the
// follower's truncation phase (Kafka's AbstractFetcherThread in Truncating
// state): it asks OffsetForLeaderEpoch about its latest epoch, truncates to
// TruncationPoint (and its lineage as UnifiedLog.truncateTo does), and asks
// again until Completed. KIP-279: the final offset is exactly where the two
// logs diverge, within one round per follower epoch plus one.
func TestPropTruncationFindsDivergenceWithOffsetForLeaderEpoch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		leader, follower, d := genDiverged(t)
		hw := base.Offset(rapid.Int64Range(0, int64(d)).Draw(t, "followerHW"))
		maxRounds := len(follower.lineage) + 1
		for round := 1; ; round++ {
			if round > maxRounds {
				t.Fatalf("no agreement after %d rounds: leader %+v, follower %+v", maxRounds, leader, follower)
			}
			latest, ok := LatestEpoch(follower.lineage)
			if !ok {
				// Kafka truncates a follower without epochs to its high
				// watermark; the generator gives one only to an empty log.
				if follower.end != 0 || d != 0 {
					t.Fatalf("follower without epochs: %+v", follower)
				}
				break
			}
			answer := UndefinedAnswer()
			if e, end, ok := EndOffsetForEpoch(leader.lineage, leader.end, latest); ok {
				answer = EpochEndAnswer(EpochEnd{Epoch: e, End: end})
			}
			tr := TruncationPoint(follower.lineage, follower.end, min(hw, follower.end), answer)
			if tr.Offset > follower.end {
				t.Fatalf("truncation %+v past the follower's end %d", tr, follower.end)
			}
			follower = simLog{lineage: TruncateLineage(follower.lineage, tr.Offset), end: tr.Offset}
			if tr.Completed {
				break
			}
		}
		if follower.end != d {
			t.Fatalf("truncated to %d, the logs diverge at %d (leader %+v)", follower.end, d, leader)
		}
	})
}

// TestPropTruncationFindsDivergenceOnFetch simulates truncation on fetch
// (Fetch v12+): the follower fetches with its latest epoch, the leader
// answers CheckFetch, and a DivergingEpoch is fed to TruncationPoint. The
// follower ends up fetching from exactly the divergence point.
func TestPropTruncationFindsDivergenceOnFetch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		leader, follower, d := genDiverged(t)
		maxRounds := len(follower.lineage) + 1
		for round := 1; ; round++ {
			if round > maxRounds {
				t.Fatalf("still diverging after %d fetches: leader %+v, follower %+v", maxRounds, leader, follower)
			}
			latest, ok := LatestEpoch(follower.lineage)
			if !ok {
				break // a fetch without LastFetchedEpoch is served as is
			}
			c := CheckFetch(leader.lineage, 0, leader.end, latest, follower.end)
			if c.Verdict == FetchFromOffset {
				break
			}
			if c.Verdict != FetchDiverging {
				t.Fatalf("fetch (epoch %d, offset %d): %+v", latest, follower.end, c)
			}
			tr := TruncationPoint(follower.lineage, follower.end, 0, EpochEndAnswer(c.Diverging))
			follower = simLog{lineage: TruncateLineage(follower.lineage, tr.Offset), end: tr.Offset}
		}
		if follower.end != d {
			t.Fatalf("fetching from %d, the logs diverge at %d (leader %+v)", follower.end, d, leader)
		}
	})
}
