package metadata

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

const (
	// maxForwardConns bounds the forwarding connections served at once; more
	// wait up to forwardIOTimeout for a slot.
	maxForwardConns = 64
	// forwardIOTimeout bounds reading a request, writing a request and
	// writing a response. Reading a response is bounded by the proposer's
	// ctx only: the leader answers once Raft has committed and applied.
	forwardIOTimeout = 30 * time.Second
	// forwardDialTimeout bounds one dial of the leader.
	forwardDialTimeout = tcpTimeout
	// forwardBackoffMin and forwardBackoffMax bound the pause between two
	// attempts to reach a leader.
	forwardBackoffMin = 20 * time.Millisecond
	forwardBackoffMax = 500 * time.Millisecond
)

// errNoLeader: no leader is known yet (an election is under way).
var errNoLeader = errors.New("metadata: no leader known")

// proposeClustered proposes data as a member of a multi-node quorum: on the
// leader through Raft directly, otherwise through the leader. It sends the
// command again, after a short pause, only while it certainly was not
// applied: no leader known, the leader unreachable, or a node answering that
// it is not the leader before appending it.
func (s *Store) proposeClustered(ctx context.Context, data []byte) (*Image, error) {
	if s.raft.State() == raft.Leader {
		img, err := s.applyLocal(ctx, data)
		if !notAppended(err) {
			return img, err
		}
	}
	ctx, stop := s.untilClosed(ctx)
	defer stop()
	request := encodeForwardRequest(forwardPropose, data)
	backoff := forwardBackoffMin
	for {
		if s.closing() {
			return nil, ErrClosed
		}
		var lastErr error
		if s.raft.State() == raft.Leader {
			img, err := s.applyLocal(ctx, data)
			if !notAppended(err) {
				return img, err
			}
			lastErr = err
		} else if addr, id := s.raft.LeaderWithID(); addr == "" {
			lastErr = errNoLeader
		} else {
			img, err, retry := s.forwardProposal(ctx, addr, id, request)
			if !retry {
				return img, err
			}
			lastErr = err
		}
		if err := s.pause(ctx, backoff); errors.Is(err, ErrClosed) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("%w: not applied (last attempt: %v): %w", ErrNotController, lastErr, err)
		}
		backoff = min(2*backoff, forwardBackoffMax)
	}
}

// forwardProposal sends one proposal to the leader at addr. retry is true
// only when the command certainly was not applied.
func (s *Store) forwardProposal(ctx context.Context, addr raft.ServerAddress, id raft.ServerID, request []byte) (img *Image, err error, retry bool) {
	resp, sent, err := s.roundTrip(ctx, addr, request)
	switch {
	case err != nil && !sent:
		return nil, fmt.Errorf("metadata: reaching the controller (node %s at %s): %w", id, addr, err), true
	case err != nil:
		if s.closing() {
			return nil, ErrClosed, false
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("metadata: outcome unknown: %w", ctx.Err()), false
		}
		return nil, fmt.Errorf("%w: forwarded to node %s at %s, outcome unknown: %w", ErrNotController, id, addr, err), false
	case resp.Err == nil:
		img, err := s.waitApplied(ctx, resp.Index)
		return img, err, false
	}
	remote := decodeWireError(resp.Err)
	switch {
	case resp.Err.NotApplied:
		return nil, remote, true
	case errors.Is(remote, ErrClosed):
		// The leader shut down under the command; this Store is still open.
		return nil, fmt.Errorf("%w: node %s shut down while applying, outcome unknown: %s", ErrNotController, id, remote), false
	case errors.Is(remote, ErrNotController):
		return nil, remote, false
	}
	// A rejection: let the caller see, in this node's image, what the leader
	// saw when it rejected the command (the topic that already exists, the
	// change that made a plan stale). The rejection stands even if ctx ends.
	_, _ = s.waitApplied(ctx, resp.Index)
	return nil, remote, false
}

// roundTrip sends one request to addr and reads the response. sent is false
// when the request certainly did not reach the server (the dial failed).
func (s *Store) roundTrip(ctx context.Context, addr raft.ServerAddress, request []byte) (resp forwardResponse, sent bool, err error) {
	d := net.Dialer{Timeout: forwardDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", string(addr))
	if err != nil {
		return forwardResponse{}, false, err
	}
	defer conn.Close()
	// The deadline is set before the AfterFunc, which may replace it at once.
	_ = conn.SetWriteDeadline(time.Now().Add(forwardIOTimeout))
	stopIO := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stopIO()
	if _, err := conn.Write(request); err != nil {
		return forwardResponse{}, true, err
	}
	body, err := readFrame(conn, maxForwardResponseBytes)
	if err != nil {
		return forwardResponse{}, true, err
	}
	resp, err = decodeForwardResponse(body)
	return resp, true, err
}

// waitApplied waits until this node's image has version ≥ index and returns it.
func (s *Store) waitApplied(ctx context.Context, index uint64) (*Image, error) {
	if img := s.Image(); img.Version >= index {
		return img, nil
	}
	watch, cancel := s.Watch()
	defer cancel()
	for {
		if img := s.Image(); img.Version >= index {
			return img, nil
		}
		select {
		case <-watch:
		case <-s.stopCh:
			return nil, ErrClosed
		case <-ctx.Done():
			if s.closing() {
				return nil, ErrClosed
			}
			return nil, fmt.Errorf("metadata: applied at version %d by the controller, not yet here: %w", index, ctx.Err())
		}
	}
}

// pause sleeps for d, or returns ctx's error (ErrClosed once Close began).
func (s *Store) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		if s.closing() {
			return ErrClosed
		}
		return ctx.Err()
	}
}

// untilClosed derives a context that Close also cancels.
func (s *Store) untilClosed(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closeCtx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func (s *Store) closing() bool {
	select {
	case <-s.stopCh:
		return true
	default:
		return false
	}
}

// serveForward serves one forwarding connection whose magic byte the mux
// has read: one request, one response. It runs on the mux's goroutine for
// the connection, which closes conn afterwards.
func (s *Store) serveForward(conn net.Conn) {
	slotWait := time.NewTimer(forwardIOTimeout)
	defer slotWait.Stop()
	select {
	case s.forwardSlots <- struct{}{}:
		defer func() { <-s.forwardSlots }()
	case <-slotWait.C:
		s.log.Warn("forwarding connection refused: too many at once", "remote", conn.RemoteAddr(), "max", maxForwardConns)
		return
	case <-s.stopCh:
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(forwardIOTimeout))
	var version [1]byte
	if _, err := io.ReadFull(conn, version[:]); err != nil {
		return
	}
	if version[0] != forwardVersion {
		s.log.Warn("forwarding connection refused: unknown version", "remote", conn.RemoteAddr(), "version", version[0])
		return
	}
	body, err := readFrame(conn, maxForwardRequestBytes)
	if err != nil {
		s.log.Warn("forwarding connection refused", "remote", conn.RemoteAddr(), "err", err)
		return
	}
	resp := s.serveRequest(body)
	_ = conn.SetWriteDeadline(time.Now().Add(forwardIOTimeout))
	if _, err := conn.Write(encodeForwardResponse(resp)); err != nil {
		s.log.Warn("forwarding: answering failed", "remote", conn.RemoteAddr(), "err", err)
	}
}

// serveRequest answers one request; body is at least one byte (readFrame).
func (s *Store) serveRequest(body []byte) forwardResponse {
	if body[0] == forwardProbe {
		return s.serveProbe()
	}
	if !s.started.Load() || s.closing() || s.raft.State() != raft.Leader {
		resp := forwardResponse{Err: encodeWireError(fmt.Errorf("%w: node %d", ErrNotController, s.opts.NodeID), true)}
		if s.started.Load() && !s.closing() {
			leader, _ := s.raft.LeaderWithID()
			resp.Leader = string(leader)
		}
		return resp
	}
	kind, payload := body[0], body[1:]
	switch kind {
	case forwardPropose:
		return s.serveProposal(payload)
	case forwardJoin:
		return s.serveJoin(payload)
	case forwardHeartbeat:
		return s.serveHeartbeat(payload)
	case forwardDescribeQuorum:
		return s.serveDescribeQuorum(payload)
	case forwardRejoin:
		return s.serveRejoin(payload)
	case forwardVoters:
		return s.serveVoters(payload)
	case forwardReadIndex:
		return s.serveReadIndex(payload)
	default:
		return s.rejection(fmt.Errorf("%w: unknown forwarding request kind %d", ErrInvalidCommand, kind))
	}
}

// serveProposal applies a forwarded command as a local proposal, after
// checking it at the same gateway as the log does.
func (s *Store) serveProposal(data []byte) forwardResponse {
	cmd, err := decodeCommand(data)
	if err != nil {
		return s.rejection(err)
	}
	switch cmd.(type) {
	case *initClusterCmd, *controllerChangeCmd:
		// Only a leader taking office writes these, about itself.
		return s.rejection(fmt.Errorf("%w: %T is not forwarded", ErrInvalidCommand, cmd))
	}
	// Not closeCtx: a context error would read as a rejection. Close ends
	// the wait with ErrClosed (result), which the proposer takes for
	// "outcome unknown".
	img, err := s.applyLocal(context.Background(), data)
	if err != nil {
		return s.rejection(err)
	}
	return forwardResponse{Index: img.Version}
}

// serveJoin adds a non-voter to the Raft configuration, or updates its
// address. A voter's id is refused: a misconfigured node must not take over
// a voter's address.
func (s *Store) serveJoin(payload []byte) forwardResponse {
	req, err := decodeJoinRequest(payload)
	if err != nil {
		return s.rejection(err)
	}
	id := nodeServerID(req.NodeID)
	s.configMu.Lock()
	defer s.configMu.Unlock()
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return s.rejection(raftFutureError(err))
	}
	for _, srv := range cf.Configuration().Servers {
		if srv.ID != id {
			continue
		}
		if srv.Address == raft.ServerAddress(req.Address) {
			return forwardResponse{Index: s.Image().Version} // already a member: nothing to change
		}
		if srv.Suffrage == raft.Voter {
			return s.serveVoterMove(req, srv)
		}
	}
	f := s.raft.AddNonvoter(id, raft.ServerAddress(req.Address), 0, 0)
	if resolved, err := s.await(context.Background(), f); !resolved {
		return s.rejection(err)
	} else if err != nil {
		return s.rejection(raftFutureError(err))
	}
	s.log.Info("added non-voter to the metadata quorum", "joiner", req.NodeID, "addr", req.Address)
	return forwardResponse{Index: f.Index()}
}

// serveVoterMove moves voter srv to the address req names (Kafka's
// UpdateRaftVoter): only the node itself may ask, proven by the log
// directory id it registered with, so that a misconfigured node cannot take
// over a voter's entry.
func (s *Store) serveVoterMove(req joinRequest, srv raft.Server) forwardResponse {
	b, registered := s.Image().Brokers[req.NodeID]
	switch {
	case req.DirectoryID == nil:
		return s.rejection(fmt.Errorf("%w: node %d is a voter at %s; a voter moves to another address only with its directory id", ErrInvalidCommand, req.NodeID, srv.Address))
	case !registered || b.LogDir == ([16]byte{}) || b.LogDir != *req.DirectoryID:
		return s.rejection(fmt.Errorf("%w: node %d asks to move from %s with a directory id that is not the one it registered with", ErrInvalidCommand, req.NodeID, srv.Address))
	}
	f := s.raft.AddVoter(srv.ID, raft.ServerAddress(req.Address), 0, 0)
	if resolved, err := s.await(context.Background(), f); !resolved {
		return s.rejection(err)
	} else if err != nil {
		return s.rejection(raftFutureError(err))
	}
	s.log.Info("moved a voter of the metadata quorum", "voter", req.NodeID, "from", srv.Address, "to", req.Address)
	return forwardResponse{Index: f.Index()}
}

// rejection answers err, with the leader's current image version.
func (s *Store) rejection(err error) forwardResponse {
	return forwardResponse{Index: s.Image().Version, Err: encodeWireError(err, notAppended(err))}
}

// raftFutureError classifies an error of a Raft future other than Apply's.
func raftFutureError(err error) error {
	switch {
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", ErrNotController, err)
	default:
		return fmt.Errorf("metadata: raft: %w", err)
	}
}
