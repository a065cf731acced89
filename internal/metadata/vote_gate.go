package metadata

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// errVotesWithheld answers the election requests of a voter that is
// rejoining after losing its Raft state (rejoin.go): it may have voted in
// a term it no longer remembers, and it lacks entries it once acknowledged,
// so neither its vote nor its candidacy may count until the leader has
// made it a voter again.
var errVotesWithheld = errors.New("metadata: this voter lost its raft state and takes no part in elections until it has caught up")

// voteGate is a Raft transport that, while closed, refuses election
// requests in both directions: incoming RequestVote, RequestPreVote and
// TimeoutNow are answered with errVotesWithheld instead of reaching Raft,
// and this node's own are not sent. Replication passes through untouched,
// so the node catches up as any follower. Once opened it passes everything.
type voteGate struct {
	raft.Transport
	open     atomic.Bool
	out      chan raft.RPC
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// newVoteGate wraps inner (which must support pre-vote and Close, as
// raft's NetworkTransport does), closed.
func newVoteGate(inner raft.Transport) *voteGate {
	g := &voteGate{Transport: inner, out: make(chan raft.RPC), stop: make(chan struct{}), done: make(chan struct{})}
	go g.relay(inner.Consumer())
	return g
}

// Open lets elections through from now on.
func (g *voteGate) Open() { g.open.Store(true) }

// IsOpen reports whether Open was called.
func (g *voteGate) IsOpen() bool { return g.open.Load() }

// relay hands inner's RPCs to Raft, answering election requests itself
// while the gate is closed.
func (g *voteGate) relay(in <-chan raft.RPC) {
	defer close(g.done)
	for {
		select {
		case rpc := <-in:
			if !g.open.Load() && isElectionRPC(rpc.Command) {
				rpc.Respond(nil, errVotesWithheld)
				continue
			}
			select {
			case g.out <- rpc:
			case <-g.stop:
				return
			}
		case <-g.stop:
			return
		}
	}
}

func isElectionRPC(cmd any) bool {
	switch cmd.(type) {
	case *raft.RequestVoteRequest, *raft.RequestPreVoteRequest, *raft.TimeoutNowRequest:
		return true
	}
	return false
}

func (g *voteGate) Consumer() <-chan raft.RPC { return g.out }

func (g *voteGate) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if !g.open.Load() {
		return errVotesWithheld
	}
	return g.Transport.RequestVote(id, target, args, resp)
}

func (g *voteGate) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if !g.open.Load() {
		return errVotesWithheld
	}
	return g.Transport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

func (g *voteGate) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	if !g.open.Load() {
		return errVotesWithheld
	}
	return g.Transport.TimeoutNow(id, target, args, resp)
}

// Close closes the inner transport and stops the relay.
func (g *voteGate) Close() error {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
	if c, ok := g.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}
