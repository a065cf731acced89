package replication

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestOnFetchTable(t *testing.T) {
	// The previous fetch came at 100 ms when the leader's end was 50.
	prev := Follower{ID: 2, Fetched: true, LogEnd: 40, LogStart: 3, BrokerEpoch: 7, LastFetchMs: 100, LeaderEndAtLastFetch: 50, LastCaughtUpMs: 60}
	for _, tc := range []struct {
		name        string
		fetchOffset base.Offset
		leaderEnd   base.Offset
		nowMs       int64
		wantCaught  int64
		wantLeadEnd base.Offset
	}{
		{name: "reads up to the leader's end: caught up now", fetchOffset: 70, leaderEnd: 70, nowMs: 200, wantCaught: 200, wantLeadEnd: 70},
		{name: "past the leader's end counts as at it", fetchOffset: 71, leaderEnd: 70, nowMs: 200, wantCaught: 200, wantLeadEnd: 70},
		{name: "reads up to the end at the previous fetch: caught up then", fetchOffset: 50, leaderEnd: 70, nowMs: 200, wantCaught: 100, wantLeadEnd: 70},
		{name: "behind both: unchanged", fetchOffset: 49, leaderEnd: 70, nowMs: 200, wantCaught: 60, wantLeadEnd: 70},
		{name: "the recorded leader end never moves back", fetchOffset: 30, leaderEnd: 45, nowMs: 200, wantCaught: 60, wantLeadEnd: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := prev.OnFetch(tc.fetchOffset, 5, tc.leaderEnd, 8, tc.nowMs)
			want := Follower{ID: 2, Fetched: true, LogEnd: tc.fetchOffset, LogStart: 5, BrokerEpoch: 8, LastFetchMs: tc.nowMs, LeaderEndAtLastFetch: tc.wantLeadEnd, LastCaughtUpMs: tc.wantCaught}
			if got != want {
				t.Errorf("OnFetch = %+v\nwant      %+v", got, want)
			}
		})
	}
}

func TestOnFetchLastCaughtUpNeverMovesBack(t *testing.T) {
	// A clock step back (or a reset that set a later time) must not make a
	// follower look less caught up than it was.
	f := Follower{ID: 1, Fetched: true, LastCaughtUpMs: 500, LastFetchMs: 400, LeaderEndAtLastFetch: 10}
	if got := f.OnFetch(20, 0, 20, 1, 300).LastCaughtUpMs; got != 500 {
		t.Errorf("LastCaughtUpMs = %d, want 500", got)
	}
	if got := f.OnFetch(10, 0, 20, 1, 300).LastCaughtUpMs; got != 500 {
		t.Errorf("LastCaughtUpMs = %d, want 500", got)
	}
}

func TestResetForNewLeader(t *testing.T) {
	f := Follower{ID: 4, Fetched: true, LogEnd: 90, LogStart: 2, BrokerEpoch: 3, LastFetchMs: 800, LeaderEndAtLastFetch: 95, LastCaughtUpMs: 780}
	if got, want := f.ResetForNewLeader(1000, true), (Follower{ID: 4, LastCaughtUpMs: 1000}); got != want {
		t.Errorf("in the ISR: %+v, want %+v", got, want)
	}
	if got, want := f.ResetForNewLeader(1000, false), (Follower{ID: 4}); got != want {
		t.Errorf("outside the ISR: %+v, want %+v", got, want)
	}
	// The first fetch after a reset: only the current leader end counts.
	r := f.ResetForNewLeader(1000, false)
	if got := r.OnFetch(0, 0, 5, 3, 1100).LastCaughtUpMs; got != 0 {
		t.Errorf("a first fetch behind the leader set LastCaughtUpMs to %d, want 0", got)
	}
	if got := r.OnFetch(5, 0, 5, 3, 1100).LastCaughtUpMs; got != 1100 {
		t.Errorf("a first fetch at the leader's end set LastCaughtUpMs to %d, want 1100", got)
	}
}

func TestResetForNewEpoch(t *testing.T) {
	f := Follower{ID: 4, Fetched: true, LogEnd: 90, LogStart: 2, BrokerEpoch: 3, LastFetchMs: 800, LeaderEndAtLastFetch: 95, LastCaughtUpMs: 780}
	in := f.ResetForNewEpoch(1000, 97, true)
	if want := (Follower{ID: 4, Fetched: true, LogEnd: 90, LogStart: 2, BrokerEpoch: 3, LastFetchMs: 1000, LeaderEndAtLastFetch: 97, LastCaughtUpMs: 1000}); in != want {
		t.Errorf("in the ISR: %+v, want %+v", in, want)
	}
	out := f.ResetForNewEpoch(1000, 97, false)
	if want := (Follower{ID: 4, Fetched: true, LogEnd: 90, LogStart: 2, BrokerEpoch: 3, LastFetchMs: 0, LeaderEndAtLastFetch: 97, LastCaughtUpMs: 0}); out != want {
		t.Errorf("outside the ISR: %+v, want %+v", out, want)
	}
	// An ISR member that reaches the epoch start was caught up at the
	// re-election; one outside the ISR gains nothing from it.
	if got := in.OnFetch(97, 2, 99, 3, 1200).LastCaughtUpMs; got != 1000 {
		t.Errorf("ISR member at the epoch start: LastCaughtUpMs %d, want 1000", got)
	}
	if got := out.OnFetch(97, 2, 99, 3, 1200).LastCaughtUpMs; got != 0 {
		t.Errorf("non-member at the epoch start: LastCaughtUpMs %d, want 0", got)
	}
}

func TestCaughtUpTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Follower
		want bool
	}{
		{"at the leader's end, long ago", Follower{Fetched: true, LogEnd: 50, LastCaughtUpMs: 0}, true},
		{"behind, caught up exactly lagMax ago", Follower{Fetched: true, LogEnd: 40, LastCaughtUpMs: 1000}, true},
		{"behind, caught up just over lagMax ago", Follower{Fetched: true, LogEnd: 40, LastCaughtUpMs: 999}, false},
		{"past the leader's end is not equal to it", Follower{Fetched: true, LogEnd: 51, LastCaughtUpMs: 0}, false},
		{"not fetched: time alone", Follower{LogEnd: 50, LastCaughtUpMs: 0}, false},
		{"not fetched, reset recently", Follower{LastCaughtUpMs: 1500}, true},
	} {
		if got := tc.f.CaughtUp(50, 11000, 10000); got != tc.want {
			t.Errorf("%s: CaughtUp = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPropOnFetch: OnFetch keeps its bookkeeping monotone, only ever sets
// LastCaughtUpMs to the old value, now or the previous fetch time, and
// records the fetch.
func TestPropOnFetch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := Follower{ID: 1}
		if rapid.Bool().Draw(t, "reset") {
			f = f.ResetForNewLeader(rapid.Int64Range(0, 50).Draw(t, "resetMs"), rapid.Bool().Draw(t, "inISR"))
		}
		now := int64(0)
		leaderEnd := base.Offset(0)
		for i, n := 0, rapid.IntRange(1, 20).Draw(t, "fetches"); i < n; i++ {
			now += rapid.Int64Range(0, 30).Draw(t, "dt")
			leaderEnd += base.Offset(rapid.Int64Range(0, 5).Draw(t, "appended"))
			offset := base.Offset(rapid.Int64Range(0, int64(leaderEnd)).Draw(t, "fetchOffset"))
			next := f.OnFetch(offset, 0, leaderEnd, 9, now)
			if next.LastCaughtUpMs < f.LastCaughtUpMs || next.LeaderEndAtLastFetch < f.LeaderEndAtLastFetch {
				t.Fatalf("moved back: %+v -> %+v", f, next)
			}
			if c := next.LastCaughtUpMs; c != f.LastCaughtUpMs && c != now && c != f.LastFetchMs {
				t.Fatalf("LastCaughtUpMs %d is none of old %d, now %d, previous fetch %d", c, f.LastCaughtUpMs, now, f.LastFetchMs)
			}
			if offset == leaderEnd && next.LastCaughtUpMs != max(now, f.LastCaughtUpMs) {
				t.Fatalf("a fetch at the leader's end left LastCaughtUpMs at %d, now %d", next.LastCaughtUpMs, now)
			}
			if !next.Fetched || next.LogEnd != offset || next.LastFetchMs != now || next.BrokerEpoch != 9 {
				t.Fatalf("fetch not recorded: %+v", next)
			}
			f = next
		}
	})
}

// TestPropFollowerThatKeepsUpStaysCaughtUp is the case Kafka's rule exists
// for: producers append between every two fetches, so no fetch ever reaches
// the leader's current end, but each fetch reaches the end of the previous
// one. Such a follower is caught up within one fetch interval, so it never
// falls out of the ISR when it fetches more often than the lag limit.
func TestPropFollowerThatKeepsUpStaysCaughtUp(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const lagMaxMs = 100
		now := rapid.Int64Range(0, 1000).Draw(t, "start")
		leaderEnd := base.Offset(rapid.Int64Range(0, 50).Draw(t, "leaderEnd"))
		f := Follower{ID: 1}.ResetForNewLeader(now, true)
		fetched := leaderEnd // the end the previous fetch saw
		for i, n := 0, rapid.IntRange(1, 30).Draw(t, "fetches"); i < n; i++ {
			now += rapid.Int64Range(1, lagMaxMs).Draw(t, "interval")
			leaderEnd += base.Offset(rapid.Int64Range(1, 10).Draw(t, "appended"))
			f = f.OnFetch(fetched, 0, leaderEnd, 1, now)
			fetched = leaderEnd
			if !f.CaughtUp(leaderEnd, now, lagMaxMs) {
				t.Fatalf("fetch %d: a follower keeping up is out of sync: %+v at %d", i, f, now)
			}
			if ids := OutOfSync([]int32{0, 1}, 0, []Follower{f}, leaderEnd, now, lagMaxMs); len(ids) != 0 {
				t.Fatalf("fetch %d: OutOfSync = %v", i, ids)
			}
		}
	})
}

func TestPropResets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := Follower{
			ID: 3, Fetched: rapid.Bool().Draw(t, "fetched"),
			LogEnd:               base.Offset(rapid.Int64Range(0, 100).Draw(t, "logEnd")),
			LogStart:             base.Offset(rapid.Int64Range(0, 10).Draw(t, "logStart")),
			BrokerEpoch:          rapid.Int64Range(0, 5).Draw(t, "brokerEpoch"),
			LastFetchMs:          rapid.Int64Range(0, 100).Draw(t, "lastFetch"),
			LeaderEndAtLastFetch: base.Offset(rapid.Int64Range(0, 100).Draw(t, "leaderEndAtLastFetch")),
			LastCaughtUpMs:       rapid.Int64Range(0, 100).Draw(t, "lastCaughtUp"),
		}
		now := rapid.Int64Range(100, 200).Draw(t, "now")
		inISR := rapid.Bool().Draw(t, "inISR")
		want := int64(0)
		if inISR {
			want = now
		}
		n := f.ResetForNewLeader(now, inISR)
		if n.ID != f.ID || n.Fetched || n.LastCaughtUpMs != want || n.LastFetchMs != 0 {
			t.Fatalf("ResetForNewLeader(%d, %v) = %+v", now, inISR, n)
		}
		start := base.Offset(rapid.Int64Range(0, 100).Draw(t, "epochStart"))
		e := f.ResetForNewEpoch(now, start, inISR)
		if e.Fetched != f.Fetched || e.LogEnd != f.LogEnd || e.LogStart != f.LogStart || e.BrokerEpoch != f.BrokerEpoch ||
			e.LastCaughtUpMs != want || e.LastFetchMs != want || e.LeaderEndAtLastFetch != start {
			t.Fatalf("ResetForNewEpoch(%d, %d, %v) of %+v = %+v", now, start, inISR, f, e)
		}
	})
}
