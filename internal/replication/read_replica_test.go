package replication

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestReadCandidates(t *testing.T) {
	fetched := func(id int32, start, end base.Offset) Follower {
		return Follower{ID: id, Fetched: true, LogStart: start, LogEnd: end}
	}
	followers := []Follower{
		fetched(2, 0, 100),  // in the ISR, holds 50
		fetched(3, 0, 40),   // behind 50
		fetched(4, 60, 100), // its log starts after 50
		fetched(5, 0, 100),  // out of the ISR
		{ID: 6},             // has not fetched
		fetched(7, 50, 50),  // holds exactly 50 at both ends
		// has not fetched in this term: offsets carried over mean nothing
		{ID: 8, LogStart: 0, LogEnd: 100},
	}
	isr := []int32{1, 2, 3, 4, 6, 7, 8}
	var got []int32
	for _, f := range ReadCandidates(followers, isr, 50) {
		got = append(got, f.ID)
	}
	if want := []int32{2, 7}; !slices.Equal(got, want) {
		t.Fatalf("candidates at 50: %v, want %v", got, want)
	}
}

func TestPreferredReadReplica(t *testing.T) {
	r := func(id int32, rack string, end base.Offset, caughtUp int64) ReadReplica {
		return ReadReplica{ID: id, Rack: rack, Reachable: true, LogEnd: end, LastCaughtUpMs: caughtUp}
	}
	leader := r(1, "a", 100, 1000)
	for _, tc := range []struct {
		name       string
		clientRack string
		leader     ReadReplica
		followers  []ReadReplica
		want       int32 // 0: the leader
	}{
		{"no client rack", "", leader, []ReadReplica{r(2, "b", 100, 1000)}, 0},
		{"leader in the client's rack", "a", leader, []ReadReplica{r(2, "a", 100, 1000)}, 0},
		{"no replica in the client's rack", "c", leader, []ReadReplica{r(2, "b", 100, 1000)}, 0},
		{"the follower in the client's rack", "b", leader, []ReadReplica{r(2, "b", 90, 900), r(3, "c", 100, 1000)}, 2},
		{"the larger log end", "b", leader, []ReadReplica{r(2, "b", 90, 1000), r(3, "b", 95, 900)}, 3},
		{"then the later catch-up", "b", leader, []ReadReplica{r(2, "b", 95, 900), r(3, "b", 95, 950)}, 3},
		{"then the lower id", "b", leader, []ReadReplica{r(3, "b", 95, 900), r(2, "b", 95, 900)}, 2},
		{"an unreachable follower is no candidate", "b", leader,
			[]ReadReplica{{ID: 2, Rack: "b", LogEnd: 100, LastCaughtUpMs: 1000}, r(3, "b", 50, 500)}, 3},
		{"only an unreachable follower", "b", leader, []ReadReplica{{ID: 2, Rack: "b", LogEnd: 100}}, 0},
		{"a leader without a rack", "b", r(1, "", 100, 1000), []ReadReplica{r(2, "b", 100, 1000)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := PreferredReadReplica(tc.clientRack, tc.leader, tc.followers)
			if got := map[bool]int32{true: id, false: 0}[ok]; got != tc.want {
				t.Fatalf("got %d (ok %v), want %d", id, ok, tc.want)
			}
		})
	}
}

// The pick is a reachable follower of the client's rack that no other
// such follower is more caught up than, and there is one exactly when
// the leader is not in the client's rack and some follower qualifies.
func TestPreferredReadReplicaProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		racks := []string{"", "a", "b"}
		replica := func(id int32, label string) ReadReplica {
			return ReadReplica{ID: id,
				Rack:           rapid.SampledFrom(racks).Draw(t, label+" rack"),
				Reachable:      rapid.Bool().Draw(t, label+" reachable"),
				LogEnd:         base.Offset(rapid.Int64Range(0, 5).Draw(t, label+" end")),
				LastCaughtUpMs: rapid.Int64Range(0, 5).Draw(t, label+" caught up")}
		}
		clientRack := rapid.SampledFrom(racks).Draw(t, "client rack")
		leader := replica(1, "leader")
		n := rapid.IntRange(0, 4).Draw(t, "followers")
		var followers []ReadReplica
		for i := range n {
			followers = append(followers, replica(int32(i+2), "follower"))
		}
		qualifies := func(f ReadReplica) bool { return f.Reachable && f.Rack == clientRack && clientRack != "" }
		id, ok := PreferredReadReplica(clientRack, leader, followers)
		anyQualifies := slices.ContainsFunc(followers, qualifies)
		if want := anyQualifies && clientRack != "" && leader.Rack != clientRack; ok != want {
			t.Fatalf("ok %v, want %v", ok, want)
		}
		if !ok {
			return
		}
		i := slices.IndexFunc(followers, func(f ReadReplica) bool { return f.ID == id })
		if i < 0 || !qualifies(followers[i]) {
			t.Fatalf("picked %d, which is not a reachable follower of rack %q", id, clientRack)
		}
		for _, f := range followers {
			if qualifies(f) && f.ID != id && moreCaughtUp(f, followers[i]) {
				t.Fatalf("picked %d over the more caught-up %d", id, f.ID)
			}
		}
	})
}
