package replication

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

const (
	testNowMs    = 100_000
	testLagMaxMs = 30_000
)

func fetchedAt(id int32, end base.Offset, caughtUpMs int64) Follower {
	return Follower{ID: id, Fetched: true, LogEnd: end, LastCaughtUpMs: caughtUpMs, LastFetchMs: testNowMs}
}

func everyone(int32) bool { return true }

func TestHighWatermarkTable(t *testing.T) {
	stale := int64(testNowMs - testLagMaxMs - 1) // not caught up
	recent := int64(testNowMs - 10)              // caught up
	base3 := func() HighWatermarkInput {
		return HighWatermarkInput{
			Current: 10, LeaderID: 0, LeaderEnd: 50,
			ISR: []int32{0, 1, 2}, MaximalISR: []int32{0, 1, 2},
			Followers:         []Follower{fetchedAt(1, 40, recent), fetchedAt(2, 45, recent)},
			MinInsyncReplicas: 1, Eligible: everyone, NowMs: testNowMs, LagMaxMs: testLagMaxMs,
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*HighWatermarkInput)
		want base.Offset
	}{
		{"the slowest ISR member", func(*HighWatermarkInput) {}, 40},
		{"all at the leader's end", func(in *HighWatermarkInput) {
			in.Followers = []Follower{fetchedAt(1, 50, recent), fetchedAt(2, 50, recent)}
		}, 50},
		{"never backward", func(in *HighWatermarkInput) { in.Current = 42 }, 42},
		{"ISR of the leader alone, followers out of sync", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0}, []int32{0}
			in.Followers = []Follower{fetchedAt(1, 40, stale), fetchedAt(2, 45, stale)}
		}, 50},
		{"a caught-up, eligible follower outside the ISR is waited for", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0, 2}, []int32{0, 2}
		}, 40},
		{"a caught-up follower outside the ISR that may not join is not", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0, 2}, []int32{0, 2}
			in.Eligible = func(id int32) bool { return id != 1 }
		}, 45},
		{"an out-of-sync follower outside the ISR is not", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0, 2}, []int32{0, 2}
			in.Followers[0].LastCaughtUpMs = stale
		}, 45},
		{"a pending expansion is waited for", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0, 2}, []int32{0, 1, 2}
			in.Followers[0].LastCaughtUpMs = stale
		}, 40},
		{"an ISR member that has not fetched in this term holds it", func(in *HighWatermarkInput) {
			in.Followers[1] = Follower{ID: 2, LastCaughtUpMs: testNowMs}
		}, 10},
		{"a caught-up candidate that has not fetched holds it", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0, 2}, []int32{0, 2}
			in.Followers[0] = Follower{ID: 1, LastCaughtUpMs: testNowMs}
		}, 10},
		// LogEnd means nothing without Fetched (a state carried over from
		// before this term must not count as a fetch in it).
		{"an ISR member that has not fetched holds it, whatever log end it carries", func(in *HighWatermarkInput) {
			in.Followers[1] = Follower{ID: 2, LogEnd: 45, LastCaughtUpMs: testNowMs}
		}, 10},
		{"an ISR member unknown to the leader holds it", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR = []int32{0, 1, 2, 3}, []int32{0, 1, 2, 3}
		}, 10},
		{"under min.insync.replicas: no move (KAFKA-15583)", func(in *HighWatermarkInput) {
			in.MinInsyncReplicas = 2
			in.ISR, in.MaximalISR = []int32{0}, []int32{0}
			in.Followers = []Follower{fetchedAt(1, 40, stale), fetchedAt(2, 45, stale)}
		}, 10},
		{"at min.insync.replicas: moves", func(in *HighWatermarkInput) {
			in.MinInsyncReplicas = 2
			in.ISR, in.MaximalISR = []int32{0, 2}, []int32{0, 2}
			in.Followers[0].LastCaughtUpMs = stale
		}, 45},
		{"the min ISR gate uses the committed ISR, not the maximal", func(in *HighWatermarkInput) {
			in.MinInsyncReplicas = 2
			in.ISR, in.MaximalISR = []int32{0}, []int32{0, 2}
			in.Followers[0].LastCaughtUpMs = stale
		}, 10},
		{"min.insync.replicas above the replication factor is capped", func(in *HighWatermarkInput) {
			in.MinInsyncReplicas = 5
		}, 40},
		{"a follower ahead of the leader does not raise it", func(in *HighWatermarkInput) {
			in.Followers = []Follower{fetchedAt(1, 60, recent), fetchedAt(2, 55, recent)}
		}, 50},
		{"the leader listed among the followers is ignored", func(in *HighWatermarkInput) {
			in.Followers = append(in.Followers, fetchedAt(0, 0, stale))
		}, 40},
		{"the leader listed among the followers is no extra replica for min.insync.replicas", func(in *HighWatermarkInput) {
			in.MinInsyncReplicas = 4 // capped at the 3 replicas, which the full ISR meets
			in.Followers = append(in.Followers, fetchedAt(0, 50, recent))
		}, 40},
		{"single replica", func(in *HighWatermarkInput) {
			in.ISR, in.MaximalISR, in.Followers, in.MinInsyncReplicas = []int32{0}, []int32{0}, nil, 2
		}, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base3()
			tc.edit(&in)
			if got := HighWatermark(in); got != tc.want {
				t.Errorf("HighWatermark = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestHighWatermarkAboveLeaderEndPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a high watermark above the log end")
		}
	}()
	HighWatermark(HighWatermarkInput{Current: 11, LeaderEnd: 10, ISR: []int32{0}, MaximalISR: []int32{0}, Eligible: everyone})
}

// genHighWatermarkInput draws a partition of up to 5 replicas (the leader is
// 0) with random follower progress, ISR, pending expansion and min ISR.
func genHighWatermarkInput(t *rapid.T) HighWatermarkInput {
	leaderEnd := base.Offset(rapid.Int64Range(0, 100).Draw(t, "leaderEnd"))
	in := HighWatermarkInput{
		LeaderID:          0,
		LeaderEnd:         leaderEnd,
		Current:           base.Offset(rapid.Int64Range(0, int64(leaderEnd)).Draw(t, "current")),
		ISR:               []int32{0},
		MinInsyncReplicas: rapid.IntRange(1, 4).Draw(t, "minISR"),
		NowMs:             testNowMs,
		LagMaxMs:          testLagMaxMs,
	}
	eligible := map[int32]bool{}
	for id, n := int32(1), int32(rapid.IntRange(0, 4).Draw(t, "followers")); id <= n; id++ {
		f := Follower{ID: id, LastCaughtUpMs: rapid.Int64Range(testNowMs-2*testLagMaxMs, testNowMs).Draw(t, "caughtUp")}
		if rapid.IntRange(0, 5).Draw(t, "fetched") > 0 {
			f.Fetched = true
			f.LogEnd = base.Offset(rapid.Int64Range(0, int64(leaderEnd)).Draw(t, "logEnd"))
		}
		in.Followers = append(in.Followers, f)
		if rapid.Bool().Draw(t, "inISR") {
			in.ISR = append(in.ISR, id)
		}
		eligible[id] = rapid.Bool().Draw(t, "eligible")
	}
	replicas := []int32{0}
	for _, f := range in.Followers {
		replicas = append(replicas, f.ID)
	}
	in.MaximalISR = slices.Clone(in.ISR)
	if len(in.Followers) > 0 && rapid.Bool().Draw(t, "pendingExpansion") {
		in.MaximalISR = ExpandISR(replicas, in.MaximalISR, rapid.SampledFrom(in.Followers).Draw(t, "joining").ID)
	}
	in.Eligible = func(id int32) bool { return eligible[id] }
	return in
}

// TestPropHighWatermark: the high watermark never moves back, never passes
// the leader's end, never passes a waited-for member's end unless it was
// already there, and with the leader alone in the ISR, min ISR satisfied and
// no follower about to join, it is the leader's end.
func TestPropHighWatermark(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genHighWatermarkInput(t)
		hw := HighWatermark(in)
		if hw < in.Current || hw > in.LeaderEnd {
			t.Fatalf("hw %d outside [current %d, leader end %d]", hw, in.Current, in.LeaderEnd)
		}
		if hw != in.Current {
			for _, f := range in.Followers {
				if slices.Contains(in.MaximalISR, f.ID) && (!f.Fetched || hw > f.LogEnd) {
					t.Fatalf("hw %d passed maximal-ISR member %+v", hw, f)
				}
				waited := f.CaughtUp(in.LeaderEnd, in.NowMs, in.LagMaxMs) && in.Eligible(f.ID)
				if waited && (!f.Fetched || hw > f.LogEnd) {
					t.Fatalf("hw %d passed a caught-up eligible follower %+v", hw, f)
				}
			}
			if len(in.ISR) < min(in.MinInsyncReplicas, len(in.Followers)+1) {
				t.Fatalf("hw moved to %d under min ISR: ISR %v, min %d", hw, in.ISR, in.MinInsyncReplicas)
			}
		}
		aloneOK := len(in.MaximalISR) == 1 && min(in.MinInsyncReplicas, len(in.Followers)+1) <= 1
		for _, f := range in.Followers {
			if f.CaughtUp(in.LeaderEnd, in.NowMs, in.LagMaxMs) && in.Eligible(f.ID) && (!f.Fetched || f.LogEnd < in.LeaderEnd) {
				aloneOK = false
			}
		}
		if aloneOK && hw != in.LeaderEnd {
			t.Fatalf("leader alone in the ISR: hw %d, want the leader's end %d", hw, in.LeaderEnd)
		}
	})
}

// TestPropHighWatermarkModel compares HighWatermark with a naive model:
// collect the log ends that count, take their minimum.
func TestPropHighWatermarkModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genHighWatermarkInput(t)
		want := in.Current
		if len(in.ISR) >= min(in.MinInsyncReplicas, len(in.Followers)+1) {
			ends := []base.Offset{in.LeaderEnd}
			known := true
			for _, f := range in.Followers {
				if slices.Contains(in.MaximalISR, f.ID) || (f.CaughtUp(in.LeaderEnd, in.NowMs, in.LagMaxMs) && in.Eligible(f.ID)) {
					ends = append(ends, f.LogEnd)
					known = known && f.Fetched
				}
			}
			if known {
				want = max(in.Current, slices.Min(ends))
			}
		}
		if got := HighWatermark(in); got != want {
			t.Fatalf("HighWatermark = %d, model %d", got, want)
		}
	})
}
