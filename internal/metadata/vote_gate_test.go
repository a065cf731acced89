package metadata

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestVoteGate: while closed, the gate answers election requests itself
// (RequestVote, RequestPreVote, TimeoutNow) and sends none, and lets
// replication through; once open it lets everything through.
func TestVoteGate(t *testing.T) {
	addrA, inA := raft.NewInmemTransport("")
	addrB, b := raft.NewInmemTransport("")
	inA.Connect(addrB, b)
	b.Connect(addrA, inA)
	gate := newVoteGate(inA)
	done := make(chan struct{})
	defer func() {
		close(done)
		_ = gate.Close()
	}()
	// Raft's side of each node: answers whatever reaches it.
	reached := make(chan any, 16)
	go answerRPCs(gate.Consumer(), done, reached)
	go answerRPCs(b.Consumer(), done, make(chan any, 16))
	elections := func() []error {
		return []error{
			b.RequestVote("a", addrA, &raft.RequestVoteRequest{}, &raft.RequestVoteResponse{}),
			b.RequestPreVote("a", addrA, &raft.RequestPreVoteRequest{}, &raft.RequestPreVoteResponse{}),
			b.TimeoutNow("a", addrA, &raft.TimeoutNowRequest{}, &raft.TimeoutNowResponse{}),
			gate.RequestVote("b", addrB, &raft.RequestVoteRequest{}, &raft.RequestVoteResponse{}),
			gate.RequestPreVote("b", addrB, &raft.RequestPreVoteRequest{}, &raft.RequestPreVoteResponse{}),
		}
	}
	for i, err := range elections() {
		if !errors.Is(err, errVotesWithheld) {
			t.Errorf("closed gate, election request %d: %v, want the votes withheld", i, err)
		}
	}
	var resp raft.AppendEntriesResponse
	if err := b.AppendEntries("a", addrA, &raft.AppendEntriesRequest{}, &resp); err != nil || !resp.Success {
		t.Fatalf("closed gate, AppendEntries: %v, %+v", err, resp)
	}
	select {
	case cmd := <-reached:
		if _, ok := cmd.(*raft.AppendEntriesRequest); !ok {
			t.Fatalf("reached raft through a closed gate: %T", cmd)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AppendEntries did not reach raft")
	}

	gate.Open()
	for i, err := range elections() {
		if err != nil {
			t.Errorf("open gate, election request %d: %v", i, err)
		}
	}
	if n := len(reached); n != 3 {
		t.Errorf("open gate: %d election requests reached raft, want 3", n)
	}
}

// answerRPCs stands for Raft: it answers every request from rpcs, granting
// votes, and notes each one in reached, until done.
func answerRPCs(rpcs <-chan raft.RPC, done <-chan struct{}, reached chan<- any) {
	for {
		select {
		case rpc := <-rpcs:
			reached <- rpc.Command
			switch rpc.Command.(type) {
			case *raft.AppendEntriesRequest:
				rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
			case *raft.RequestVoteRequest:
				rpc.Respond(&raft.RequestVoteResponse{Granted: true}, nil)
			case *raft.RequestPreVoteRequest:
				rpc.Respond(&raft.RequestPreVoteResponse{Granted: true}, nil)
			case *raft.TimeoutNowRequest:
				rpc.Respond(&raft.TimeoutNowResponse{}, nil)
			}
		case <-done:
			return
		}
	}
}
