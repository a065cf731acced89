package metadata

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func voter(id int32) raft.Server {
	return raft.Server{Suffrage: raft.Voter, ID: nodeServerID(id), Address: "a"}
}

func nonVoter(id int32) raft.Server {
	return raft.Server{Suffrage: raft.Nonvoter, ID: nodeServerID(id), Address: "a"}
}

func TestDescribeQuorum(t *testing.T) {
	const now = 5000
	unknown := func(id int32) QuorumReplica {
		return QuorumReplica{NodeID: id, LogEndOffset: -1, LastFetchMs: -1, LastCaughtUpMs: -1}
	}
	self := func(id int32, version int64) QuorumReplica {
		return QuorumReplica{NodeID: id, LogEndOffset: version, LastFetchMs: now, LastCaughtUpMs: now}
	}
	tests := []struct {
		name string
		view quorumView
		want QuorumState
	}{{
		name: "a single node is its own voter, current now",
		view: quorumView{self: 1, term: 2, version: 9, nowMs: now, servers: []raft.Server{voter(1)}},
		want: QuorumState{LeaderID: 1, LeaderEpoch: 2, HighWatermark: 9,
			Voters: []QuorumReplica{self(1, 9)}, Observers: []QuorumReplica{}},
	}, {
		name: "voters and observers sorted, each as its heartbeats said, unknown without one",
		view: quorumView{self: 2, term: 7, version: 40, nowMs: now,
			servers: []raft.Server{nonVoter(5), voter(3), voter(2), voter(1), nonVoter(4)},
			progress: map[int32]replicaProgress{
				1: {AppliedVersion: 40, AtMs: 4900, CaughtUpMs: 4900},
				4: {AppliedVersion: 31, AtMs: 4800, CaughtUpMs: 3000},
				5: {AppliedVersion: 12, AtMs: 4700}, // never caught up this term
			}},
		want: QuorumState{LeaderID: 2, LeaderEpoch: 7, HighWatermark: 40,
			Voters: []QuorumReplica{
				{NodeID: 1, LogEndOffset: 40, LastFetchMs: 4900, LastCaughtUpMs: 4900},
				self(2, 40),
				unknown(3),
			},
			Observers: []QuorumReplica{
				{NodeID: 4, LogEndOffset: 31, LastFetchMs: 4800, LastCaughtUpMs: 3000},
				{NodeID: 5, LogEndOffset: 12, LastFetchMs: 4700, LastCaughtUpMs: -1},
			}},
	}, {
		name: "a broker heartbeating outside the Raft configuration is an observer",
		view: quorumView{self: 1, term: 3, version: 8, nowMs: now, servers: []raft.Server{voter(1)},
			progress: map[int32]replicaProgress{9: {AppliedVersion: 8, AtMs: 4999, CaughtUpMs: 4999}}},
		want: QuorumState{LeaderID: 1, LeaderEpoch: 3, HighWatermark: 8,
			Voters:    []QuorumReplica{self(1, 8)},
			Observers: []QuorumReplica{{NodeID: 9, LogEndOffset: 8, LastFetchMs: 4999, LastCaughtUpMs: 4999}}},
	}, {
		name: "a server id that is not a node id is left out",
		view: quorumView{self: 1, term: 1, version: 3, nowMs: now,
			servers: []raft.Server{voter(1), {Suffrage: raft.Voter, ID: "x", Address: "b"}}},
		want: QuorumState{LeaderID: 1, LeaderEpoch: 1, HighWatermark: 3,
			Voters: []QuorumReplica{self(1, 3)}, Observers: []QuorumReplica{}},
	}, {
		name: "a term beyond int32 is capped",
		view: quorumView{self: 1, term: 1 << 40, version: 3, nowMs: now, servers: []raft.Server{voter(1)}},
		want: QuorumState{LeaderID: 1, LeaderEpoch: 1<<31 - 1, HighWatermark: 3,
			Voters: []QuorumReplica{self(1, 3)}, Observers: []QuorumReplica{}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeQuorum(tt.view); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("describeQuorum\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestReplicaProgressCaughtUp: a heartbeat that has applied the
// controller's version marks the time; one behind keeps the last mark.
func TestReplicaProgressCaughtUp(t *testing.T) {
	var p replicaProgress
	steps := []struct {
		applied, leader uint64
		at              int64
		want            replicaProgress
	}{
		{applied: 5, leader: 7, at: 100, want: replicaProgress{AppliedVersion: 5, AtMs: 100}},
		{applied: 7, leader: 7, at: 200, want: replicaProgress{AppliedVersion: 7, AtMs: 200, CaughtUpMs: 200}},
		{applied: 7, leader: 9, at: 300, want: replicaProgress{AppliedVersion: 7, AtMs: 300, CaughtUpMs: 200}},
		{applied: 10, leader: 9, at: 400, want: replicaProgress{AppliedVersion: 10, AtMs: 400, CaughtUpMs: 400}},
	}
	for i, s := range steps {
		if p = p.after(s.applied, s.leader, s.at); p != s.want {
			t.Fatalf("step %d: %+v, want %+v", i, p, s.want)
		}
	}
}

// TestClusterDescribeQuorum: any member answers with the controller's view:
// the three voters, the leader and its term, and each broker's heartbeats
// (applied versions and times); a non-voter is an observer.
func TestClusterDescribeQuorum(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	stores := c.openAll(1, 2, 3, 4)
	leader := c.leader()
	for _, s := range stores {
		beat(t, s, registerSelf(t, s, 1), 20*time.Millisecond)
	}
	follower := c.follower(leader)
	var q QuorumState
	waitFor(t, "every node's heartbeat in DescribeQuorum", func() bool {
		var err error
		if q, err = follower.DescribeQuorum(t.Context()); err != nil {
			t.Logf("DescribeQuorum: %v", err)
			return false
		}
		for _, r := range append(slices.Clone(q.Voters), q.Observers...) {
			if r.LogEndOffset < 1 || r.LastFetchMs < 0 || r.LastCaughtUpMs < 0 {
				return false
			}
		}
		return len(q.Voters) == 3 && len(q.Observers) == 1
	})
	if q.LeaderID != leader.opts.NodeID || q.LeaderEpoch < 1 || q.HighWatermark < 1 {
		t.Fatalf("DescribeQuorum: leader %d epoch %d hw %d, want leader %d", q.LeaderID, q.LeaderEpoch, q.HighWatermark, leader.opts.NodeID)
	}
	for i, r := range q.Voters {
		if r.NodeID != int32(i+1) || r.LogEndOffset > q.HighWatermark {
			t.Errorf("voter %d: %+v (high watermark %d)", i, r, q.HighWatermark)
		}
	}
	if q.Observers[0].NodeID != 4 {
		t.Errorf("observers %+v, want node 4", q.Observers)
	}
	if got, err := leader.DescribeQuorum(t.Context()); err != nil || got.LeaderID != q.LeaderID || len(got.Voters) != 3 {
		t.Errorf("on the leader: %+v, %v", got, err)
	}
}
