package metadata

import (
	"context"
	"errors"
	"fmt"
)

// A member that restarts with its Raft state restores its last snapshot
// and applies the entries after it only as the leader's heartbeats tell it
// they are committed: the leader is known, and even the controller record
// of its taking office applied, while entries the node had applied before
// its restart are not yet. The broker behind Open takes its first image
// for the topics it hosts and removes the directories of any other, so
// Open must not return on an image older than the one the node had. Before
// a member's Open returns, it asks the controller for a read index
// (forwardReadIndex: the controller commits a barrier, so that every entry
// committed before the request is applied there, and answers its image
// version), and waits until its own image has reached it.

// serveReadIndex answers the controller's image version once every entry
// committed before the request is applied here.
func (s *Store) serveReadIndex(payload []byte) forwardResponse {
	if len(payload) > 0 {
		return s.rejection(fmt.Errorf("%w: a read-index request carries %d bytes, want none", ErrInvalidCommand, len(payload)))
	}
	if err := s.raft.Barrier(barrierTimeout).Error(); err != nil {
		return s.rejection(raftFutureError(err))
	}
	return forwardResponse{Index: s.Image().Version}
}

// catchUp waits until this node's image holds everything the controller
// had committed when asked, so that a check made on the image is made on
// the controller's (a fence it has just committed, say). Nothing to wait
// for on the controller in office or a single node.
func (s *Store) catchUp(ctx context.Context) error {
	if !s.opts.clustered() || s.IsController() {
		return nil
	}
	index, err := s.readIndex(ctx)
	if err != nil {
		return err
	}
	return s.awaitVersion(ctx, index)
}

// readIndex asks the controller for its read index, retrying through
// elections until ctx ends. A controller of an older version, which does
// not know forwardReadIndex, is asked for its image version without the
// barrier (forwardDescribeQuorum).
func (s *Store) readIndex(ctx context.Context) (uint64, error) {
	kind := forwardReadIndex
	for {
		resp, err := s.askController(ctx, kind, nil, "read index")
		switch {
		case err == nil:
			return resp.Index, nil
		case errors.Is(err, ErrInvalidCommand) && kind == forwardReadIndex:
			kind = forwardDescribeQuorum
			continue
		}
		if perr := s.pause(ctx, readyPoll); perr != nil {
			return 0, fmt.Errorf("metadata: asking the controller how far to catch up: %w (last: %w)", perr, err)
		}
	}
}

// awaitVersion waits until this node's image is at version at least.
func (s *Store) awaitVersion(ctx context.Context, version uint64) error {
	watch, cancel := s.Watch()
	defer cancel()
	for s.Image().Version < version {
		select {
		case <-watch:
		case <-ctx.Done():
			return fmt.Errorf("metadata: catching up to the controller's version %d (at %d): %w", version, s.Image().Version, ctx.Err())
		case <-s.stopCh:
			return ErrClosed
		}
	}
	return nil
}
