package metadata

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// propose replicates cmd and returns the image it produced, or the FSM's
// rejection. If ctx ends first it returns ctx's error; the command may still be
// applied later (as with any timed-out Kafka admin request).
//
// A member of a multi-node quorum that is not the leader forwards the command
// to the leader (forward.go) and returns its own image once it has applied
// the change, so that the caller reads its own write.
func (s *Store) propose(ctx context.Context, cmd command) (*Image, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := encodeCommand(cmd)
	if err != nil {
		return nil, err
	}
	if !s.opts.clustered() {
		return s.applyLocal(ctx, data)
	}
	return s.proposeClustered(ctx, data)
}

// applyLocal hands data to this node's Raft, which must lead, and waits for
// the outcome, for ctx or for Close. It is the one apply path of local and
// forwarded proposals.
func (s *Store) applyLocal(ctx context.Context, data []byte) (*Image, error) {
	var enqueueTimeout time.Duration // 0: wait as long as it takes
	if deadline, ok := ctx.Deadline(); ok {
		// Context deadlines are wall-clock times by definition, hence time.Until.
		if enqueueTimeout = time.Until(deadline); enqueueTimeout <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	return s.result(ctx, s.raft.Apply(data, enqueueTimeout))
}

// proposeNoCtx is propose for Store-internal commands, which wait until Raft
// resolves them or Close.
func (s *Store) proposeNoCtx(cmd command) (*Image, error) {
	data, err := encodeCommand(cmd)
	if err != nil {
		return nil, err
	}
	return s.result(context.Background(), s.raft.Apply(data, 0))
}

// result waits for f, for ctx or for Close, and returns the image the
// command produced or why there is none. Close must end the wait: Raft
// (v1.8) does not resolve a future whose committed entry it had queued for
// its FSM when it shut down (runFSM returns and leaves the buffered
// fsmMutateCh unread), and Close waits for the goroutines that wait here
// (the forward server's among them, through the transport's Close). Either
// way the command may still have been applied: "outcome unknown".
func (s *Store) result(ctx context.Context, f raft.ApplyFuture) (*Image, error) {
	resolved, err := s.await(ctx, f)
	switch {
	case !resolved:
		return nil, err
	case err == nil:
	case errors.Is(err, raft.ErrRaftShutdown):
		return nil, ErrClosed
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return nil, fmt.Errorf("%w: %w", ErrNotController, err)
	default:
		return nil, fmt.Errorf("metadata: raft apply: %w", err)
	}
	res, ok := f.Response().(applyResult)
	if !ok {
		panic(fmt.Sprintf("metadata: FSM returned %T, want applyResult", f.Response()))
	}
	return res.img, res.err
}

// await waits for f to resolve and returns its error, or, with resolved
// false, the reason it stopped waiting first: ctx ended, or the Store is closing
// (see result for why Close must end it). A log entry it was waiting for
// may still be applied.
func (s *Store) await(ctx context.Context, f raft.Future) (resolved bool, err error) {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return true, err
	case <-ctx.Done():
		return false, fmt.Errorf("metadata: outcome unknown: %w", ctx.Err())
	case <-s.stopCh:
		return false, fmt.Errorf("metadata: outcome unknown, the node is closing: %w", ErrClosed)
	}
}

// notAppended reports whether err says that Raft refused a command before
// appending it to its log: the command certainly was not applied, so it may
// be sent again. raft.ErrLeadershipLost, by contrast, leaves the outcome
// unknown.
func notAppended(err error) bool {
	return errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress)
}
