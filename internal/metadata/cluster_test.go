package metadata

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// clusterTimeout is a failsafe, not a bound under test: Raft over TCP keeps
// its default (second-scale) timeouts, and the machine may be busy.
const clusterTimeout = 2 * time.Minute

// testCluster is a set of quorum members on real loopback TCP ports, all
// picked up front so that Voters can be written before any node starts.
type testCluster struct {
	t      *testing.T
	voters map[int32]string
	opts   map[int32]Options
	mu     sync.Mutex
	stores map[int32]*Store
}

// newTestCluster prepares voters 1..nVoters and non-voters nVoters+1..,
// each on a port picked up front: a non-voter opened on 127.0.0.1:0 next to
// voters still opening could take a voter's port.
func newTestCluster(t *testing.T, nVoters, nNonVoters int) *testCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("a TCP quorum uses Raft's default (second-scale) election timeouts")
	}
	logger := safeTestLogger(t)
	c := &testCluster{t: t, voters: map[int32]string{}, opts: map[int32]Options{}, stores: map[int32]*Store{}}
	addrs := freeAddrs(t, nVoters+nNonVoters)
	for i, addr := range addrs[:nVoters] {
		c.voters[int32(i+1)] = addr
	}
	for i, addr := range addrs {
		id := int32(i + 1)
		c.opts[id] = Options{Dir: t.TempDir(), NodeID: id, BindAddr: addr, Voters: c.voters,
			Clock: clock.Real{}, Logger: logger}
	}
	t.Cleanup(func() {
		for _, s := range c.open() {
			if err := s.Close(); err != nil {
				t.Errorf("closing node %d: %v", s.opts.NodeID, err)
			}
		}
	})
	return c
}

// setSessionTimeout sets every node's BrokerSessionTimeout before they open.
func (c *testCluster) setSessionTimeout(d time.Duration) {
	for id, o := range c.opts {
		o.BrokerSessionTimeout = d
		c.opts[id] = o
	}
}

// freeAddrs picks n distinct free loopback addresses: each port is held
// until all are picked, so the kernel cannot hand out one of them twice.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	held := make([]net.Listener, n)
	addrs := make([]string, n)
	for i := range held {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("picking a free port: %v", err)
		}
		held[i], addrs[i] = ln, ln.Addr().String()
	}
	for _, ln := range held {
		if err := ln.Close(); err != nil {
			t.Fatalf("releasing %s: %v", ln.Addr(), err)
		}
	}
	return addrs
}

// safeTestLogger logs to t until t's cleanups end: a Raft goroutine that
// outlives a closed node by a moment must not log into a finished test.
func safeTestLogger(t *testing.T) *slog.Logger {
	w := &guardedWriter{t: t}
	t.Cleanup(func() { // registered first, so it runs after every other cleanup
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type guardedWriter struct {
	t  *testing.T
	mu sync.Mutex
	// done: the test is over.
	done bool
}

func (w *guardedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(p))
	}
	return len(p), nil
}

// openAll opens the given nodes concurrently, as a cluster starts.
func (c *testCluster) openAll(ids ...int32) []*Store {
	c.t.Helper()
	stores := make([]*Store, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { stores[i], errs[i] = c.tryOpen(id) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.t.Fatal(err)
	}
	return stores
}

func (c *testCluster) tryOpen(id int32) (*Store, error) {
	ctx, cancel := context.WithTimeout(c.t.Context(), clusterTimeout)
	defer cancel()
	s, err := Open(ctx, c.opts[id])
	if err != nil {
		return nil, fmt.Errorf("opening node %d: %w", id, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stores[id] = s
	return s, nil
}

func (c *testCluster) close(s *Store) {
	c.t.Helper()
	c.mu.Lock()
	delete(c.stores, s.opts.NodeID)
	c.mu.Unlock()
	closeStore(c.t, s)
}

// open lists the open stores by node id.
func (c *testCluster) open() []*Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := slices.Sorted(func(yield func(int32) bool) {
		for id := range c.stores {
			if !yield(id) {
				return
			}
		}
	})
	out := make([]*Store, len(ids))
	for i, id := range ids {
		out[i] = c.stores[id]
	}
	return out
}

// leader waits until one of the open stores is the controller and every
// other open voter or joined member names it as leader.
func (c *testCluster) leader() *Store {
	c.t.Helper()
	var found *Store
	waitFor(c.t, "one controller that every member knows", func() bool {
		found = nil
		stores := c.open()
		for _, s := range stores {
			if s.IsController() {
				if found != nil {
					return false
				}
				found = s
			}
		}
		if found == nil {
			return false
		}
		for _, s := range stores {
			if id, ok := s.Leader(); !ok || id != found.opts.NodeID {
				return false
			}
		}
		return true
	})
	return found
}

// follower returns an open store other than leader.
func (c *testCluster) follower(leader *Store) *Store {
	for _, s := range c.open() {
		if s != leader {
			return s
		}
	}
	c.t.Fatal("no follower open")
	return nil
}

// converge waits until every open store has applied want's version and then
// checks that each holds the same state.
func (c *testCluster) converge(want *Image) {
	c.t.Helper()
	for _, s := range c.open() {
		waitFor(c.t, fmt.Sprintf("node %d to apply version %d", s.opts.NodeID, want.Version), func() bool {
			return s.Image().Version >= want.Version
		})
		sameState(c.t, s.Image(), want)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// configuration returns the Raft configuration as s knows it, by node id.
func configuration(t *testing.T, s *Store) map[int32]raft.Server {
	t.Helper()
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	out := map[int32]raft.Server{}
	for _, srv := range f.Configuration().Servers {
		id, ok := parseServerID(srv.ID)
		if !ok {
			t.Fatalf("server id %q", srv.ID)
		}
		out[id] = srv
	}
	return out
}

func TestClusterFormsQuorum(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	stores := c.openAll(1, 2, 3)
	leader := c.leader()
	clusterID := stores[0].Image().ClusterID
	if len(clusterID) != 22 {
		t.Fatalf("cluster id %q", clusterID)
	}
	for _, s := range stores {
		// Open returned once s had applied the cluster id and a controller record.
		if img := s.Image(); img.ClusterID != clusterID || img.ControllerID < 1 || img.ControllerID > 3 {
			t.Errorf("node %d: cluster id %q controller %d", s.opts.NodeID, img.ClusterID, img.ControllerID)
		}
		waitFor(t, "the leader's controller record everywhere", func() bool {
			return s.Image().ControllerID == leader.opts.NodeID
		})
		conf := configuration(t, s)
		if len(conf) != 3 {
			t.Errorf("node %d: configuration %v", s.opts.NodeID, conf)
		}
		for id, addr := range c.voters {
			if srv := conf[id]; srv.Suffrage != raft.Voter || string(srv.Address) != addr {
				t.Errorf("node %d: voter %d is %+v, want a voter at %s", s.opts.NodeID, id, srv, addr)
			}
		}
	}
}

// TestClusterFollowerProposals: every kind of change proposed on a follower
// is applied by the leader, visible in the follower's own image when the
// call returns, and in every member's image.
func TestClusterFollowerProposals(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	leader := c.leader()
	f := c.follower(leader)
	ctx := t.Context()

	topic, err := f.CreateTopic(ctx, CreateTopic{Name: "orders", Partitions: 2, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	if topic == nil || f.Image().Topics["orders"] != topic {
		t.Fatalf("CreateTopic on a follower returned %+v, its image holds %+v", topic, f.Image().Topics["orders"])
	}
	if err := f.SetTopicConfigs(ctx, "orders", map[string]string{"retention.ms": "5"}); err != nil {
		t.Fatal(err)
	}
	if got := f.Image().Topics["orders"].Configs["retention.ms"]; got != "5" {
		t.Fatalf("follower's image after SetTopicConfigs: retention.ms = %q", got)
	}
	if err := f.CreateAcls(ctx, []acl.Binding{aclTopicRead}); err != nil {
		t.Fatal(err)
	}
	if got := f.Image().Acls(); !slices.Contains(got, aclTopicRead) {
		t.Fatalf("follower's image after CreateAcls: %v", got)
	}
	c.converge(f.Image())

	want := populate(t, f, "f") // every other kind of change, through the follower
	c.converge(want)
	if id, ok := f.Leader(); !ok || id != leader.opts.NodeID || f.IsController() {
		t.Errorf("follower: Leader() = %d, %v; IsController() = %v", id, ok, f.IsController())
	}
}

// TestClusterFollowerRejections: a command the FSM refuses fails on a
// follower exactly as on the leader: same error classes, same typed
// errors, same message.
func TestClusterFollowerRejections(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	leader := c.leader()
	f := c.follower(leader)
	ctx := t.Context()

	tiered, err := leader.CreateTopic(ctx, CreateTopic{Name: "tiered", ID: base.TopicID{7}, Partitions: 1, ReplicationFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	seg := storeSeg(1, tiered, 0, 0, 10)
	if err := leader.UpdateRemoteSegment(ctx, seg, 0); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		want error
		run  func(s *Store) error
	}{
		{"duplicate topic", ErrTopicExists, func(s *Store) error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "tiered", Partitions: 1, ReplicationFactor: 1})
			return err
		}},
		{"duplicate topic id", ErrTopicIDExists, func(s *Store) error {
			_, err := s.CreateTopic(ctx, CreateTopic{Name: "other", ID: tiered.ID, Partitions: 1, ReplicationFactor: 1})
			return err
		}},
		{"unknown pending delete", ErrUnknownTopic, func(s *Store) error {
			return s.FinishRemoteTopicDelete(ctx, base.TopicID{9})
		}},
		{"forbidden transition", remotemeta.ErrInvalidTransition, func(s *Store) error {
			return s.UpdateRemoteSegment(ctx, withState(seg, remotemeta.DeleteFinished), 0)
		}},
		{"unknown remote segment", ErrUnknownRemoteSegment, func(s *Store) error {
			return s.UpdateRemoteSegment(ctx, withState(storeSeg(2, tiered, 0, 10, 20), remotemeta.CopyFinished), 0)
		}},
		{"missing SCRAM credential", ErrScramCredentialNotFound, func(s *Store) error {
			return s.AlterScramCredentials(ctx, "nobody", nil, []string{ScramSHA256})
		}},
	}
	for _, tc := range cases {
		onLeader, onFollower := tc.run(leader), tc.run(f)
		if !errors.Is(onLeader, tc.want) {
			t.Errorf("%s on the leader: %v, want %v", tc.name, onLeader, tc.want)
			continue
		}
		sameErrorClass(t, tc.name, onFollower, onLeader)
	}
	var te *remotemeta.TransitionError
	err = f.UpdateRemoteSegment(ctx, withState(seg, remotemeta.DeleteFinished), 0)
	if !errors.As(err, &te) || te.ID != seg.ID || te.From != remotemeta.CopyStarted || te.To != remotemeta.DeleteFinished {
		t.Errorf("forbidden transition on a follower: %v (as %+v)", err, te)
	}

	// The follower reads its own rejection: the topic that made it fail is
	// in its image when the call returns.
	if _, err := leader.CreateTopic(ctx, CreateTopic{Name: "fresh", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateTopic(ctx, CreateTopic{Name: "fresh", Partitions: 1, ReplicationFactor: 1}); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("re-create on a follower: %v", err)
	}
	if f.Image().Topics["fresh"] == nil {
		t.Error("a follower refused with ErrTopicExists does not see the topic")
	}

	// A stale plan is replanned on a follower as on the leader.
	var wg sync.WaitGroup
	for total := int32(2); total <= 7; total++ {
		s := []*Store{leader, f}[total%2]
		wg.Go(func() {
			if err := s.CreatePartitions(ctx, "tiered", total, nil); err != nil && !errors.Is(err, ErrInvalidPartitions) {
				t.Errorf("CreatePartitions(%d) on node %d: %v", total, s.opts.NodeID, err)
			}
		})
	}
	wg.Wait()
	if n := len(f.Image().Topics["tiered"].Partitions); n != 7 {
		t.Errorf("%d partitions, want 7 (the largest request wins)", n)
	}
}

// sameErrorClass checks that got classifies as want under errors.Is for
// every error forwarding knows, and carries the same message.
func sameErrorClass(t *testing.T, what string, got, want error) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: no error, want %v", what, want)
		return
	}
	for _, e := range forwardErrorCodes {
		if errors.Is(got, e.err) != errors.Is(want, e.err) {
			t.Errorf("%s: errors.Is(%v, %v) = %v, want %v", what, got, e.err, errors.Is(got, e.err), errors.Is(want, e.err))
		}
	}
	if got.Error() != want.Error() {
		t.Errorf("%s: message %q, want %q", what, got, want)
	}
}

// TestClusterFailover: when the leader closes, the other two elect one and
// accept proposals from either; the closed node reopens with its directory
// and address and catches up.
func TestClusterFailover(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	old := c.leader()
	want := populate(t, c.follower(old), "a")
	c.converge(want)
	oldID := old.opts.NodeID
	c.close(old)

	next := c.leader()
	if next.opts.NodeID == oldID {
		t.Fatalf("closed node %d still leads", oldID)
	}
	for _, s := range c.open() {
		if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: fmt.Sprintf("after-%d", s.opts.NodeID), Partitions: 1, ReplicationFactor: 1}); err != nil {
			t.Fatalf("CreateTopic on node %d after failover: %v", s.opts.NodeID, err)
		}
	}
	want = populate(t, c.follower(next), "b")

	back := c.openAll(oldID)[0]
	c.converge(want)
	if _, err := back.CreateTopic(t.Context(), CreateTopic{Name: "back", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatalf("CreateTopic on the reopened node: %v", err)
	}
	c.converge(back.Image())
}

// TestClusterNonVoterJoins: a node outside Voters joins as a non-voter,
// catches up, proposes, and rejoins at a new address after a restart.
func TestClusterNonVoterJoins(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	c.openAll(1, 2, 3)
	leader := c.leader()
	want := populate(t, leader, "v")

	n4 := c.openAll(4)[0]
	c.converge(want)
	if srv := configuration(t, leader)[4]; srv.Suffrage != raft.Nonvoter || srv.Address != n4.trans.LocalAddr() {
		t.Fatalf("node 4 in the configuration: %+v, want a non-voter at %s", srv, n4.trans.LocalAddr())
	}
	if _, err := n4.CreateTopic(t.Context(), CreateTopic{Name: "from-4", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	c.converge(n4.Image())
	if id, ok := n4.Leader(); !ok || id != leader.opts.NodeID || n4.IsController() {
		t.Errorf("non-voter: Leader() = %d, %v; IsController() = %v", id, ok, n4.IsController())
	}

	// A restart on another port (BindAddr 127.0.0.1:0) updates its address.
	oldAddr := n4.trans.LocalAddr()
	c.close(n4)
	o := c.opts[4]
	o.BindAddr = "127.0.0.1:0"
	c.opts[4] = o
	n4 = c.openAll(4)[0]
	if n4.trans.LocalAddr() == oldAddr {
		t.Skipf("the kernel gave node 4 its old port %s again", oldAddr)
	}
	if srv := configuration(t, leader)[4]; srv.Address != n4.trans.LocalAddr() {
		t.Fatalf("after a restart node 4 is %+v, want it at %s", srv, n4.trans.LocalAddr())
	}
	if err := n4.SetBrokerConfigs(t.Context(), map[string]string{"by": "4"}); err != nil {
		t.Fatal(err)
	}
	c.converge(n4.Image())
}

// TestClusterRestartKeepsImage: the whole cluster closes and reopens with
// the same state.
func TestClusterRestartKeepsImage(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	want := populate(t, c.follower(c.leader()), "r")
	c.converge(want)
	for _, s := range c.open() {
		c.close(s)
	}
	c.openAll(1, 2, 3)
	leader := c.leader()
	c.converge(want) // also checks the cluster id
	if err := c.follower(leader).DeleteTopic(t.Context(), "r0"); err != nil {
		t.Fatal(err)
	}
	c.converge(leader.Image())
}

// TestClusterProposalWithoutQuorum: with no leader to be had, a follower's
// proposal ends with its ctx and says that it was not applied.
func TestClusterProposalWithoutQuorum(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	leader := c.leader()
	f := c.follower(leader)
	for _, s := range c.open() {
		if s != f {
			c.close(s)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, err := f.CreateTopic(ctx, CreateTopic{Name: "lonely", Partitions: 1, ReplicationFactor: 1})
	if !errors.Is(err, ErrNotController) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("proposal without a quorum: %v", err)
	}
	c.close(f)
	if _, err := f.CreateTopic(t.Context(), CreateTopic{Name: "late", Partitions: 1, ReplicationFactor: 1}); err != ErrClosed {
		t.Fatalf("CreateTopic on a closed member: %v, want ErrClosed", err)
	}
	if _, ok := f.Leader(); ok || f.IsController() {
		t.Error("a closed member names a leader")
	}
}

// TestForwardListenerRefusesBadInput: oversized, truncated and garbage
// frames, unknown versions and requests that only a leader may write are
// refused, and Raft carries on undisturbed.
func TestForwardListenerRefusesBadInput(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	leader := c.leader()
	f := c.follower(leader)
	addr := string(leader.trans.LocalAddr())

	closedWithoutAnswer := map[string][]byte{
		"oversized frame":    {forwardMagic, forwardVersion, 0x7f, 0xff, 0xff, 0xff, forwardPropose},
		"just over the cap":  binary.BigEndian.AppendUint32([]byte{forwardMagic, forwardVersion}, maxForwardRequestBytes+1),
		"empty frame":        {forwardMagic, forwardVersion, 0, 0, 0, 0},
		"truncated frame":    {forwardMagic, forwardVersion, 0, 0, 0, 9, forwardPropose, 1, '{'},
		"unknown version":    {forwardMagic, 9, 0, 0, 0, 1, forwardPropose},
		"magic alone":        {forwardMagic},
		"HTTP, sent to Raft": []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"bytes Raft refuses": {0, 0xc1, 0xc1, 0xc1, 0xc1},
	}
	for name, raw := range closedWithoutAnswer {
		got := exchange(t, addr, raw)
		if len(got) != 0 {
			t.Errorf("%s: answered %q, want the connection closed", name, got)
		}
	}

	controllerChange, err := encodeCommand(&controllerChangeCmd{NodeID: f.opts.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string][]byte{
		"garbage command":                encodeForwardRequest(forwardPropose, []byte("garbage")),
		"unknown kind":                   encodeForwardRequest(0x47, []byte("x")),
		"controller change":              encodeForwardRequest(forwardPropose, controllerChange),
		"a voter joins":                  encodeForwardRequest(forwardJoin, encodeJoinRequest(joinRequest{NodeID: f.opts.NodeID, Address: "127.0.0.1:1"})),
		"join with a bad addr":           encodeForwardRequest(forwardJoin, encodeJoinRequest(joinRequest{NodeID: 9, Address: "0.0.0.0:1"})),
		"join with trailing {}":          encodeForwardRequest(forwardJoin, append(encodeJoinRequest(joinRequest{NodeID: 9, Address: "127.0.0.1:1"}), "{}"...)),
		"garbage heartbeat":              encodeForwardRequest(forwardHeartbeat, []byte("{")),
		"heartbeat extra field":          encodeForwardRequest(forwardHeartbeat, []byte(`{"broker_id":1,"x":1}`)),
		"heartbeat trailing {}":          encodeForwardRequest(forwardHeartbeat, []byte(`{"broker_id":1}{}`)),
		"describe quorum with a payload": encodeForwardRequest(forwardDescribeQuorum, []byte("x")),
		"voter change extra field":       encodeForwardRequest(forwardVoters, []byte(`{"node_id":1,"x":1}`)),
		"voter change of node -1":        encodeForwardRequest(forwardVoters, []byte(`{"node_id":-1}`)),
		"a voter rejoins elsewhere":      encodeForwardRequest(forwardRejoin, encodeJoinRequest(joinRequest{NodeID: f.opts.NodeID, Address: "127.0.0.1:1"})),
		"the leader rejoins":             encodeForwardRequest(forwardRejoin, encodeJoinRequest(joinRequest{NodeID: leader.opts.NodeID, Address: addr})),
		"rejoin extra field":             encodeForwardRequest(forwardRejoin, []byte(`{"node_id":1,"address":"127.0.0.1:1","x":1}`)),
	}
	for name, raw := range refused {
		body, err := readFrame(bytes.NewReader(exchange(t, addr, raw)), maxForwardResponseBytes)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp, err := decodeForwardResponse(body)
		if err != nil || resp.Err == nil || !errors.Is(decodeWireError(resp.Err), ErrInvalidCommand) {
			t.Errorf("%s: answered %+v (%v), want ErrInvalidCommand", name, resp, err)
		}
	}

	// A follower refuses to apply, saying that nothing was appended.
	create, err := encodeCommand(&setBrokerConfigsCmd{Configs: map[string]string{"x": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := readFrame(bytes.NewReader(exchange(t, string(f.trans.LocalAddr()), encodeForwardRequest(forwardPropose, create))), maxForwardResponseBytes)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := decodeForwardResponse(body); err != nil || resp.Err == nil || !resp.Err.NotApplied ||
		!errors.Is(decodeWireError(resp.Err), ErrNotController) {
		t.Errorf("a follower answered %+v (%v), want ErrNotController, not applied", resp, err)
	}

	// Raft was not disturbed: the same leader, and proposals go through.
	if now := c.leader(); now != leader {
		t.Errorf("leader changed from %d to %d", leader.opts.NodeID, now.opts.NodeID)
	}
	if err := f.SetBrokerConfigs(t.Context(), map[string]string{"after": "garbage"}); err != nil {
		t.Fatal(err)
	}
	c.converge(f.Image())

	// Connections that stall, before or after their first byte, do not hold
	// up Close, which closes them (goleak checks the goroutines).
	var idle []net.Conn
	for _, raw := range [][]byte{nil, {forwardMagic}, {forwardMagic, forwardVersion, 0, 0, 1, 0}} {
		conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, conn)
	}
	c.close(leader)
	for i, conn := range idle {
		_ = conn.SetReadDeadline(time.Now().Add(clusterTimeout))
		if n, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("stalled connection %d after Close: read %d, %v; want it closed", i, n, err)
		}
	}
}

// exchange writes raw to addr, half-closes, and returns whatever comes
// back before the server closes the connection.
func exchange(t *testing.T, addr string, raw []byte) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(clusterTimeout))
	// The server may close a connection as soon as it has read enough to
	// refuse it: a failed write or half-close is that close, not an error.
	if _, err := conn.Write(raw); err != nil {
		return nil
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Fatalf("no answer from %s within %v", addr, clusterTimeout)
			}
			return out
		}
	}
}

// TestClusterOfOneVoter: Voters naming only this node is a quorum of one
// reached through the cluster path; it survives a restart.
func TestClusterOfOneVoter(t *testing.T) {
	c := newTestCluster(t, 1, 0)
	s := c.openAll(1)[0]
	if !s.IsController() {
		t.Fatal("the only voter is not the controller after Open")
	}
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "solo", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	want := s.Image()
	c.close(s)
	s = c.openAll(1)[0]
	sameState(t, s.Image(), want)
}
