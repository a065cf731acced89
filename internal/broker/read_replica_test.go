package broker

import (
	"maps"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestPreferredReadReplica: a consumer in a rack other than the leader's
// is sent to a caught-up ISR follower in its rack that it reaches (the
// lowest id of equals); one in the leader's rack reads from the leader,
// and so does any consumer of a partition replaced since (a restart).
func TestPreferredReadReplica(t *testing.T) {
	meta := &overrideMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.createTopic("racked", []int32{1, 2, 3})
	img := *meta.Image()
	img.Brokers = maps.Clone(img.Brokers)
	for id, rack := range map[int32]string{1: "r1", 2: "r2", 3: "r2"} {
		b := *img.Brokers[id]
		b.Rack = rack
		img.Brokers[id] = &b
	}
	img.Version++
	meta.img.Store(&img)
	f.reconcile()
	tp := base.TopicPartition{Topic: "racked", Partition: 0}
	caughtUp := func() {
		appendRecords(t, f.hosted(tp), 3)
		f.mustFetch(tp, 2, f.hosted(tp).Offsets().LogEnd, 0)
		f.mustFetch(tp, 3, f.hosted(tp).Offsets().LogEnd, 0)
	}
	caughtUp()
	p := f.hosted(tp)
	all := func(int32) bool { return true }
	for _, tc := range []struct {
		name      string
		rack      string
		reachable func(int32) bool
		want      int32
		wantOK    bool
	}{
		{"the followers' rack", "r2", all, 2, true},
		{"2 unreachable", "r2", func(id int32) bool { return id != 2 }, 3, true},
		{"none reachable", "r2", func(int32) bool { return false }, 0, false},
		{"the leader's rack", "r1", all, 0, false},
		{"no rack", "", all, 0, false},
	} {
		if id, ok := f.b.PreferredReadReplica(p, 0, tc.rack, tc.reachable); id != tc.want || ok != tc.wantOK {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, id, ok, tc.want, tc.wantOK)
		}
	}
	f.restart()
	caughtUp()
	if id, ok := f.b.PreferredReadReplica(p, 0, "r2", all); ok {
		t.Fatalf("the partition closed by a restart: sent to %d", id)
	}
	if _, ok := f.b.PreferredReadReplica(f.hosted(tp), 0, "r2", all); !ok {
		t.Fatal("the reopened partition sends no one to its followers")
	}
}
