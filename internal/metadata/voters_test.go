package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestPlanVoterChange(t *testing.T) {
	servers := []raft.Server{
		{Suffrage: raft.Voter, ID: "1", Address: "127.0.0.1:9093"},
		{Suffrage: raft.Nonvoter, ID: "2", Address: "127.0.0.1:9094"},
		{Suffrage: raft.Nonvoter, ID: "3", Address: "127.0.0.1:9095"},
	}
	view := func(edit func(*voterView)) voterView {
		v := voterView{
			servers: servers,
			dirs:    map[int32][16]byte{1: {1}, 2: {2}, 3: {3}},
			progress: map[int32]replicaProgress{
				2: {AppliedVersion: 50, AtMs: 9_000, CaughtUpMs: 9_000},
				3: {AppliedVersion: 50, AtMs: 9_000, CaughtUpMs: 9_000},
			},
			leaderVersion: 50, nowMs: 10_000, freshMs: 2_000,
		}
		if edit != nil {
			edit(&v)
		}
		return v
	}
	add := func(node int32, dir byte, addrs ...string) voterRequest {
		return voterRequest{Op: voterAdd, NodeID: node, DirectoryID: [16]byte{dir}, Addresses: addrs}
	}
	remove := func(node int32, dir byte) voterRequest {
		return voterRequest{Op: voterRemove, NodeID: node, DirectoryID: [16]byte{dir}}
	}
	for _, tc := range []struct {
		name string
		req  voterRequest
		view voterView
		want error // nil: allowed
	}{
		{"add a caught-up member", add(2, 2, "localhost:1", "127.0.0.1:9094"), view(nil), nil},
		{"add lagging a little but never exactly caught up", add(2, 2, "127.0.0.1:9094"), view(func(v *voterView) {
			v.progress[2] = replicaProgress{AppliedVersion: 40, AtMs: 9_900}
		}), nil},
		{"add far behind", add(2, 2, "127.0.0.1:9094"), view(func(v *voterView) {
			v.leaderVersion = 5_000
			v.progress[2] = replicaProgress{AppliedVersion: 40, AtMs: 9_900, CaughtUpMs: 1_000}
		}), ErrVoterNotReady},
		{"add not heard from lately", add(2, 2, "127.0.0.1:9094"), view(func(v *voterView) {
			v.progress[2] = replicaProgress{AppliedVersion: 50, AtMs: 7_000, CaughtUpMs: 7_000}
		}), ErrVoterNotReady},
		{"add never heard from", add(2, 2, "127.0.0.1:9094"), view(func(v *voterView) { delete(v.progress, 2) }), ErrVoterNotReady},
		{"add an unregistered member", add(2, 2, "127.0.0.1:9094"), view(func(v *voterView) { delete(v.dirs, 2) }), ErrVoterNotReady},
		{"add a node that has not joined", add(4, 4, "127.0.0.1:9096"), view(nil), ErrVoterNotReady},
		{"add with another directory id", add(2, 9, "127.0.0.1:9094"), view(nil), ErrInvalidVoter},
		{"add without its address", add(2, 2, "127.0.0.1:9095"), view(nil), ErrInvalidVoter},
		{"add a voter", add(1, 1, "127.0.0.1:9093"), view(nil), ErrDuplicateVoter},
		{"remove a voter", remove(1, 1), view(func(v *voterView) {
			v.servers = []raft.Server{servers[0], {Suffrage: raft.Voter, ID: "2", Address: "127.0.0.1:9094"}}
		}), nil},
		{"remove an unregistered voter", remove(1, 7), view(func(v *voterView) {
			v.servers = []raft.Server{servers[0], {Suffrage: raft.Voter, ID: "2", Address: "127.0.0.1:9094"}}
			delete(v.dirs, 1)
		}), nil},
		{"remove by another directory id", remove(1, 9), view(func(v *voterView) {
			v.servers = []raft.Server{servers[0], {Suffrage: raft.Voter, ID: "2", Address: "127.0.0.1:9094"}}
		}), ErrVoterNotFound},
		{"remove a non-voter", remove(2, 2), view(nil), ErrVoterNotFound},
		{"remove a stranger", remove(8, 8), view(nil), ErrVoterNotFound},
		{"remove the last voter", remove(1, 1), view(nil), ErrInvalidVoter},
		{"forget a non-voter", voterRequest{Op: voterForget, NodeID: 2}, view(nil), nil},
		{"forget a voter", voterRequest{Op: voterForget, NodeID: 1}, view(nil), ErrInvalidVoter},
		{"forget a stranger", voterRequest{Op: voterForget, NodeID: 8}, view(nil), ErrVoterNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := planVoterChange(tc.req, tc.view)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("got %v, want %v", err, tc.want)
			case tc.want == nil && srv.ID != nodeServerID(tc.req.NodeID):
				t.Fatalf("planned a change of %q, want node %d", srv.ID, tc.req.NodeID)
			}
		})
	}
}

// registerWithDir registers s as a broker whose log directory id is {id}
// and heartbeats for it.
func registerWithDir(t *testing.T, s *Store) {
	t.Helper()
	b, err := s.RegisterBroker(t.Context(), BrokerRegistration{ID: s.opts.NodeID, Incarnation: [16]byte{1},
		LogDir: [16]byte{byte(s.opts.NodeID)}, Endpoints: endpoint(19000 + s.opts.NodeID)})
	if err != nil {
		t.Fatalf("node %d registering: %v", s.opts.NodeID, err)
	}
	beat(t, s, b, 20*time.Millisecond)
	waitFor(t, fmt.Sprintf("broker %d unfenced", b.ID), func() bool {
		r, ok := s.Image().Brokers[b.ID]
		return ok && !r.Fenced
	})
}

// addVoter adds node through s once the controller has heard it caught up.
func addVoter(t *testing.T, via *Store, node *Store) {
	t.Helper()
	id := node.opts.NodeID
	addr := []string{string(node.trans.LocalAddr())}
	var err error
	waitFor(t, "node to be added as a voter", func() bool {
		err = via.AddVoter(t.Context(), id, [16]byte{byte(id)}, addr, 5*time.Second)
		return !errors.Is(err, ErrVoterNotReady) && !errors.Is(err, ErrNotController)
	})
	if err != nil {
		t.Fatalf("AddVoter(%d): %v", id, err)
	}
}

// TestClusterVotersChange grows a one-voter quorum to three with AddVoter
// through members that do not lead, loses the first voter and elects
// without it, then removes it, down to one voter. Each refusal is
// classified.
func TestClusterVotersChange(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	stores := c.openAll(1, 2, 3)
	for _, s := range stores {
		registerWithDir(t, s)
	}
	first, second, third := stores[0], stores[1], stores[2]
	addr2 := []string{string(second.trans.LocalAddr())}
	ctx := t.Context()
	if err := third.AddVoter(ctx, 2, [16]byte{9}, addr2, time.Second); !errors.Is(err, ErrInvalidVoter) {
		t.Errorf("AddVoter with another directory id: %v, want ErrInvalidVoter", err)
	}
	if err := third.AddVoter(ctx, 2, [16]byte{2}, []string{"127.0.0.1:1"}, time.Second); !errors.Is(err, ErrInvalidVoter) {
		t.Errorf("AddVoter at another address: %v, want ErrInvalidVoter", err)
	}
	addVoter(t, third, second)
	if err := third.AddVoter(ctx, 2, [16]byte{2}, addr2, time.Second); !errors.Is(err, ErrDuplicateVoter) {
		t.Errorf("AddVoter twice: %v, want ErrDuplicateVoter", err)
	}
	addVoter(t, second, third)
	// The answer came once every voter held the change (voters_hold.go):
	// a node that lagged behind it would refuse the added voters' votes
	// and keep them from electing without the first.
	for _, s := range c.open() {
		conf := configuration(t, s)
		for id := int32(1); id <= 3; id++ {
			if conf[id].Suffrage != raft.Voter {
				t.Fatalf("AddVoter(3) answered before node %d held it: %+v", s.opts.NodeID, conf)
			}
		}
	}
	if q, err := second.DescribeQuorum(ctx); err != nil || len(q.Voters) != 3 {
		t.Fatalf("DescribeQuorum: %+v, %v; want three voters", q, err)
	}

	// The configured voter goes; the two added ones elect and commit.
	c.close(first)
	leader := c.leader()
	if _, err := leader.CreateTopic(ctx, CreateTopic{Name: "without-the-first-voter", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatalf("CreateTopic by the added voters: %v", err)
	}
	if err := leader.RemoveVoter(ctx, 1, [16]byte{9}, time.Second); !errors.Is(err, ErrVoterNotFound) {
		t.Errorf("RemoveVoter by another directory id: %v, want ErrVoterNotFound", err)
	}
	if err := c.follower(leader).RemoveVoter(ctx, 1, [16]byte{1}, 5*time.Second); err != nil {
		t.Fatalf("RemoveVoter(1): %v", err)
	}
	if err := leader.RemoveVoter(ctx, 1, [16]byte{1}, time.Second); !errors.Is(err, ErrVoterNotFound) {
		t.Errorf("RemoveVoter twice: %v, want ErrVoterNotFound", err)
	}
	if err := leader.RemoveVoter(ctx, leader.opts.NodeID, [16]byte{byte(leader.opts.NodeID)}, 5*time.Second); err != nil {
		t.Fatalf("RemoveVoter of the leader: %v", err)
	}
	// The answer comes as the change commits; the leader steps down just
	// after.
	waitFor(t, "the removed leader to step down", func() bool { return !leader.IsController() })
	last := c.leader()
	if last == leader {
		t.Fatal("the removed leader leads again")
	}
	if err := last.RemoveVoter(ctx, last.opts.NodeID, [16]byte{byte(last.opts.NodeID)}, time.Second); !errors.Is(err, ErrInvalidVoter) {
		t.Errorf("RemoveVoter of the last voter: %v, want ErrInvalidVoter", err)
	}
	if _, err := leader.CreateTopic(ctx, CreateTopic{Name: "one-voter-left", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatalf("CreateTopic through the demoted node: %v", err)
	}
	c.converge(last.Image())
}

// TestClusterAddedVoterRejoinsAfterLosingItsState: a voter that AddVoter
// made (not one of the configured voters) loses its disk; it comes back
// without a vote, catches up, votes again, and stays a voter.
func TestClusterAddedVoterRejoinsAfterLosingItsState(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	for i, addr := range freeAddrs(t, 2) {
		o := c.opts[int32(i+2)]
		o.BindAddr = addr // a voter keeps its address across restarts
		c.opts[int32(i+2)] = o
	}
	stores := c.openAll(1, 2, 3)
	for _, s := range stores {
		registerWithDir(t, s)
	}
	addVoter(t, stores[0], stores[1])
	addVoter(t, stores[0], stores[2])
	leader := c.leader()
	want := populate(t, leader, "w")
	c.converge(want)

	wiped := stores[2]
	if wiped == leader {
		wiped = stores[1]
	}
	id := wiped.opts.NodeID
	c.close(wiped)
	c.wipe(id)
	back := c.openAll(id)[0]
	if _, ok := back.trans.(*voteGate); !ok {
		t.Fatal("the wiped added voter did not start rejoining")
	}
	waitRejoined(t, leader, back)
	c.converge(want)
	if conf := configuration(t, leader); conf[id].Suffrage != raft.Voter {
		t.Fatalf("configuration %+v: node %d is no longer a voter", conf, id)
	}
}

// TestClusterVoterMovesToAnotherAddress: a configured voter restarted with
// its state at another address (a new IP, the voters updated to say so)
// has its entry moved on the strength of its registered directory id, and
// takes part in elections from there; a node without the directory id
// cannot move a voter.
func TestClusterVoterMovesToAnotherAddress(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	for id, o := range c.opts {
		o.DirectoryID = [16]byte{byte(id)}
		c.opts[id] = o
	}
	stores := c.openAll(1, 2, 3)
	for _, s := range stores {
		registerWithDir(t, s)
	}
	leader := c.leader()
	moved := c.follower(leader)
	id := moved.opts.NodeID
	addr := string(leader.trans.LocalAddr())

	// Another node's join under the voter's id, without the directory id
	// or with another one, is refused.
	for name, dir := range map[string]*[16]byte{"no directory id": nil, "another directory id": {9}} {
		raw := encodeForwardRequest(forwardJoin, encodeJoinRequest(joinRequest{NodeID: id, Address: "127.0.0.1:1", DirectoryID: dir}))
		body, err := readFrame(bytes.NewReader(exchange(t, addr, raw)), maxForwardResponseBytes)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := decodeForwardResponse(body); err != nil || resp.Err == nil {
			t.Errorf("%s: a voter's entry moved: %+v, %v", name, resp, err)
		}
	}

	c.close(moved)
	newAddr := freeAddrs(t, 1)[0]
	voters := maps.Clone(c.voters)
	voters[id] = newAddr
	o := c.opts[id]
	o.BindAddr, o.Voters = newAddr, voters
	c.opts[id] = o
	back := c.openAll(id)[0]
	waitFor(t, "the voter's entry to move", func() bool {
		return configuration(t, leader)[id].Address == raft.ServerAddress(newAddr)
	})
	if conf := configuration(t, leader); conf[id].Suffrage != raft.Voter {
		t.Fatalf("configuration %+v: the moved node is no longer a voter", conf)
	}
	want := populate(t, back, "moved")
	c.converge(want)

	// With the leader gone, the moved voter and the third elect.
	c.close(leader)
	next := c.leader()
	if _, err := next.CreateTopic(t.Context(), CreateTopic{Name: "after-the-move", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatalf("CreateTopic with the moved voter in a quorum of two: %v", err)
	}
}

// TestClusterUnregisteredNodeLeavesTheQuorum: unregistering a stopped
// broker takes its non-voter node out of the Raft configuration, so the
// leader stops replicating to it; started again at the same address, it
// joins back (its own copy of the configuration still names it there).
func TestClusterUnregisteredNodeLeavesTheQuorum(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	c.setSessionTimeout(1500 * time.Millisecond)
	stores := c.openAll(1, 2, 3, 4)
	for _, s := range stores {
		registerWithDir(t, s)
	}
	leader := c.leader()
	if _, ok := configuration(t, leader)[4]; !ok {
		t.Fatal("node 4 never joined")
	}
	c.close(stores[3])
	waitFor(t, "node 4 to be fenced", func() bool {
		b, ok := leader.Image().Brokers[4]
		return ok && b.Fenced
	})
	// Asked at once of a follower, whose image may not hold the fence yet.
	if err := c.follower(leader).UnregisterBroker(t.Context(), 4); err != nil {
		t.Fatal(err)
	}
	if srv, ok := configuration(t, leader)[4]; ok {
		t.Fatalf("the unregistered node is still in the configuration: %+v", srv)
	}
	back := c.openAll(4)[0]
	if got, want := back.trans.LocalAddr(), raft.ServerAddress(c.opts[4].BindAddr); got != want {
		t.Fatalf("node 4 came back at %s, want its old address %s", got, want)
	}
	registerWithDir(t, back)
	if srv := configuration(t, leader)[4]; srv.Suffrage != raft.Nonvoter || srv.Address != back.trans.LocalAddr() {
		t.Fatalf("node 4 back in the configuration as %+v, want a non-voter at %s", srv, back.trans.LocalAddr())
	}
}
