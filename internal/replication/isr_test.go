package replication

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestOutOfSyncTable(t *testing.T) {
	stale := int64(testNowMs - testLagMaxMs - 1)
	followers := []Follower{
		fetchedAt(1, 50, stale),                    // at the leader's end: in sync however long ago
		fetchedAt(2, 40, stale),                    // behind and stale: out
		fetchedAt(3, 40, testNowMs-testLagMaxMs),   // behind, exactly at the limit: in
		{ID: 4, LastCaughtUpMs: stale},             // never fetched in this term, stale: out
		{ID: 5, LastCaughtUpMs: testNowMs - 1_000}, // never fetched, reset recently: in
		fetchedAt(6, 51, stale),                    // ahead of the leader and stale: out
	}
	for _, tc := range []struct {
		name string
		isr  []int32
		want []int32
	}{
		{"all", []int32{0, 1, 2, 3, 4, 5, 6}, []int32{2, 4, 6}},
		{"sorted whatever the ISR order", []int32{6, 4, 0, 2}, []int32{2, 4, 6}},
		{"the leader is never out of sync", []int32{0}, nil},
		{"an ISR member the leader has no state for", []int32{0, 1, 9}, []int32{9}},
	} {
		got := OutOfSync(tc.isr, 0, followers, 50, testNowMs, testLagMaxMs)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: OutOfSync = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCanJoinISRTable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		f          Follower
		hw, start  base.Offset
		eligible   bool
		wantCanAdd bool
	}{
		{"at the high watermark and epoch start", Follower{Fetched: true, LogEnd: 30}, 30, 30, true, true},
		{"past both", Follower{Fetched: true, LogEnd: 35}, 30, 20, true, true},
		{"below the high watermark", Follower{Fetched: true, LogEnd: 29}, 30, 20, true, false},
		// Past the HW but not yet holding everything the previous leader
		// wrote before this epoch began: elected now, it could lose it.
		{"below the leader's epoch start", Follower{Fetched: true, LogEnd: 35}, 30, 40, true, false},
		{"not eligible", Follower{Fetched: true, LogEnd: 35}, 30, 20, false, false},
		{"not fetched in this term", Follower{LogEnd: 35}, 30, 20, true, false},
	} {
		if got := CanJoinISR(tc.f, tc.hw, tc.start, tc.eligible); got != tc.wantCanAdd {
			t.Errorf("%s: CanJoinISR = %v, want %v", tc.name, got, tc.wantCanAdd)
		}
	}
}

func TestShrinkAndExpandISRTable(t *testing.T) {
	replicas := []int32{3, 0, 1, 2}
	for _, tc := range []struct {
		name       string
		isr, out   []int32
		wantShrink []int32
	}{
		{"removes the out-of-sync, keeps replica order", []int32{2, 0, 1, 3}, []int32{1}, []int32{3, 0, 2}},
		{"never the leader", []int32{0, 1}, []int32{0, 1}, []int32{0}},
		{"nothing to remove: reordered only", []int32{2, 0}, nil, []int32{0, 2}},
		{"a non-member listed changes nothing", []int32{0, 1}, []int32{7}, []int32{0, 1}},
	} {
		if got := ShrinkISR(replicas, tc.isr, 0, tc.out); !slices.Equal(got, tc.wantShrink) {
			t.Errorf("%s: ShrinkISR = %v, want %v", tc.name, got, tc.wantShrink)
		}
	}
	for _, tc := range []struct {
		isr  []int32
		id   int32
		want []int32
	}{
		{[]int32{2, 0}, 3, []int32{3, 0, 2}},
		{[]int32{0, 1}, 1, []int32{0, 1}},
		{nil, 2, []int32{2}},
		{[]int32{0}, 9, []int32{0, 9}}, // not a replica: last
	} {
		if got := ExpandISR(replicas, tc.isr, tc.id); !slices.Equal(got, tc.want) {
			t.Errorf("ExpandISR(%v, %d) = %v, want %v", tc.isr, tc.id, got, tc.want)
		}
	}
	isr := []int32{2, 0, 1}
	ShrinkISR(replicas, isr, 0, []int32{1})
	ExpandISR(replicas, isr, 3)
	InReplicaOrder(isr, replicas)
	if !slices.Equal(isr, []int32{2, 0, 1}) {
		t.Errorf("the input ISR was modified: %v", isr)
	}
}

func TestInReplicaOrderTable(t *testing.T) {
	replicas := []int32{5, 1, 3}
	for _, tc := range []struct {
		isr, want []int32
	}{
		{[]int32{3, 1, 5}, []int32{5, 1, 3}},
		{[]int32{3, 3, 5}, []int32{5, 3}},
		{[]int32{8, 3, 7}, []int32{3, 7, 8}},
		{nil, []int32{}},
	} {
		if got := InReplicaOrder(tc.isr, replicas); !slices.Equal(got, tc.want) {
			t.Errorf("InReplicaOrder(%v) = %v, want %v", tc.isr, got, tc.want)
		}
	}
}

func genISR(t *rapid.T, label string) []int32 {
	return rapid.SliceOfNDistinct(rapid.Int32Range(0, 7), 0, 6, rapid.ID[int32]).Draw(t, label)
}

func TestPropOutOfSync(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		isr := genISR(t, "isr")
		leaderID := rapid.Int32Range(0, 7).Draw(t, "leader")
		leaderEnd := base.Offset(rapid.Int64Range(0, 50).Draw(t, "leaderEnd"))
		var followers []Follower
		for id := int32(0); id <= 7; id++ {
			if rapid.IntRange(0, 4).Draw(t, "known") == 0 {
				continue
			}
			followers = append(followers, Follower{
				ID: id, Fetched: rapid.Bool().Draw(t, "fetched"),
				LogEnd:         base.Offset(rapid.Int64Range(0, int64(leaderEnd)+1).Draw(t, "logEnd")),
				LastCaughtUpMs: rapid.Int64Range(testNowMs-2*testLagMaxMs, testNowMs).Draw(t, "caughtUp"),
			})
		}
		got := OutOfSync(isr, leaderID, followers, leaderEnd, testNowMs, testLagMaxMs)
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("not sorted and unique: %v", got)
		}
		for _, id := range got {
			if id == leaderID || !slices.Contains(isr, id) {
				t.Fatalf("%d out of sync: leader %d, ISR %v", id, leaderID, isr)
			}
		}
		for _, id := range isr {
			f, ok := findFollower(followers, id)
			out := slices.Contains(got, id)
			switch {
			case id == leaderID:
			case !ok && !out:
				t.Fatalf("unknown member %d kept", id)
			case ok && f.Fetched && f.LogEnd == leaderEnd && out:
				t.Fatalf("member at the leader's end removed: %+v", f)
			case ok && testNowMs-f.LastCaughtUpMs <= testLagMaxMs && out:
				t.Fatalf("member caught up within the lag removed: %+v", f)
			case ok && !(f.Fetched && f.LogEnd == leaderEnd) && testNowMs-f.LastCaughtUpMs > testLagMaxMs && !out:
				t.Fatalf("lagging member kept: %+v", f)
			}
		}
	})
}

func TestPropCanJoinISRMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hw := base.Offset(rapid.Int64Range(0, 50).Draw(t, "hw"))
		start := base.Offset(rapid.Int64Range(0, 50).Draw(t, "epochStart"))
		end := base.Offset(rapid.Int64Range(0, 60).Draw(t, "logEnd"))
		more := end + base.Offset(rapid.Int64Range(0, 10).Draw(t, "more"))
		f := Follower{ID: 1, Fetched: true, LogEnd: end}
		g := f
		g.LogEnd = more
		if CanJoinISR(f, hw, start, true) && !CanJoinISR(g, hw, start, true) {
			t.Fatalf("log end %d may join but %d may not (hw %d, epoch start %d)", end, more, hw, start)
		}
		if CanJoinISR(f, hw, start, false) {
			t.Fatal("an ineligible follower may join")
		}
		if CanJoinISR(f, hw, start, true) != (end >= max(hw, start)) {
			t.Fatalf("CanJoinISR(end %d, hw %d, start %d) wrong", end, hw, start)
		}
	})
}

// inOrder reports whether ids are unique and follow replica order.
func inOrder(ids, replicas []int32) bool {
	last := -1
	for _, id := range ids {
		i := slices.Index(replicas, id)
		if i <= last {
			return false
		}
		last = i
	}
	return true
}

func TestPropShrinkExpandISR(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		replicas := rapid.Permutation([]int32{0, 1, 2, 3, 4, 5, 6, 7}).Draw(t, "replicas")
		isr := genISR(t, "isr")
		leaderID := rapid.Int32Range(0, 7).Draw(t, "leader")
		out := genISR(t, "out")
		shrunk := ShrinkISR(replicas, isr, leaderID, out)
		if !inOrder(shrunk, replicas) {
			t.Fatalf("ShrinkISR = %v, not in replica order %v", shrunk, replicas)
		}
		for _, id := range isr {
			want := id == leaderID || !slices.Contains(out, id)
			if slices.Contains(shrunk, id) != want {
				t.Fatalf("ShrinkISR(%v, %d, %v) = %v: member %d", isr, leaderID, out, shrunk, id)
			}
		}
		if len(shrunk) > len(isr) {
			t.Fatalf("ShrinkISR grew: %v -> %v", isr, shrunk)
		}
		id := rapid.Int32Range(0, 7).Draw(t, "joining")
		grown := ExpandISR(replicas, isr, id)
		if !inOrder(grown, replicas) || !slices.Contains(grown, id) || len(grown) != len(isr)+boolInt(!slices.Contains(isr, id)) {
			t.Fatalf("ExpandISR(%v, %d) = %v", isr, id, grown)
		}
		for _, m := range isr {
			if !slices.Contains(grown, m) {
				t.Fatalf("ExpandISR(%v, %d) = %v lost %d", isr, id, grown, m)
			}
		}
		if !slices.Equal(ExpandISR(replicas, grown, id), grown) {
			t.Fatal("ExpandISR not idempotent")
		}
		if !slices.Contains(isr, id) && id != leaderID {
			if back := ShrinkISR(replicas, grown, leaderID, []int32{id}); !slices.Equal(back, InReplicaOrder(isr, replicas)) {
				t.Fatalf("shrink after expand: %v, want %v", back, InReplicaOrder(isr, replicas))
			}
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
