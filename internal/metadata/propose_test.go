package metadata

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// unresolvedFuture is an apply future Raft never resolves, as one whose
// entry its FSM had queued when it shut down; release ends its waiters.
type unresolvedFuture struct{ release chan struct{} }

func (f unresolvedFuture) Error() error {
	<-f.release
	return raft.ErrRaftShutdown
}
func (unresolvedFuture) Index() uint64 { return 0 }
func (unresolvedFuture) Response() any { return nil }

// TestResultEndsAtClose: a wait for a future Raft never resolves ends when
// the Store closes (or ctx ends), as "outcome unknown", so that Close does
// not wait forever for the goroutine that waits (the forward server's).
func TestResultEndsAtClose(t *testing.T) {
	f := unresolvedFuture{release: make(chan struct{})}
	defer close(f.release)

	s := &Store{stopCh: make(chan struct{})}
	got := make(chan error, 1)
	go func() {
		_, err := s.result(context.Background(), f)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("result returned %v before Close", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(s.stopCh)
	select {
	case err := <-got:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("result after Close: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("result still waits after Close")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Store{stopCh: make(chan struct{})}).result(ctx, f); !errors.Is(err, context.Canceled) {
		t.Fatalf("result with an ended ctx: %v, want context.Canceled", err)
	}
}
