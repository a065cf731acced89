package metadata

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// minLivenessTick bounds how often the controller looks for expired brokers.
const minLivenessTick = 20 * time.Millisecond

// heartbeatBook is the controller's memory of broker heartbeats in its
// current term (not replicated; see lastHeartbeat).
type heartbeatBook struct {
	mu      sync.Mutex
	term    uint64 // bumped each time this node takes office
	sinceMs int64  // when this node took office
	last    map[int32]lastHeartbeat
	// progress is each broker's metadata progress for DescribeQuorum.
	progress map[int32]replicaProgress
}

// startTerm forgets the previous term's heartbeats and returns the new term.
func (h *heartbeatBook) startTerm(nowMs int64) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.term++
	h.sinceMs = nowMs
	h.last = map[int32]lastHeartbeat{}
	h.progress = map[int32]replicaProgress{}
	return h.term
}

// record notes hb, received at nowMs while this controller's own image was
// at leaderVersion.
func (h *heartbeatBook) record(hb Heartbeat, leaderVersion uint64, nowMs int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last == nil {
		h.last = map[int32]lastHeartbeat{}
		h.progress = map[int32]replicaProgress{}
	}
	h.last[hb.BrokerID] = lastHeartbeat{Epoch: hb.BrokerEpoch, AtMs: nowMs}
	h.progress[hb.BrokerID] = h.progress[hb.BrokerID].after(hb.AppliedVersion, leaderVersion, nowMs)
}

// progressOf copies the brokers' metadata progress heard in this term.
func (h *heartbeatBook) progressOf() map[int32]replicaProgress {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.progress)
}

// expired lists the brokers of img to fence at nowMs, or nothing if term is
// over.
func (h *heartbeatBook) expired(term uint64, img *Image, nowMs, sessionMs int64) ([]*Broker, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if term != h.term {
		return nil, false
	}
	return expiredBrokers(img, h.last, h.sinceMs, nowMs, sessionMs), true
}

func (s *Store) nowMs() int64 { return s.opts.Clock.Now().UnixMilli() }

// Heartbeat reports broker hb.BrokerID alive to the controller (Kafka's
// BrokerHeartbeat) and returns whether it is fenced. The controller
// unfences a fenced broker once it has applied its own registration
// (unless it asks to stay fenced), fences an unfenced one that asks, and
// fences any broker whose heartbeats stop for Options.BrokerSessionTimeout.
// It is refused with ErrUnknownBroker or ErrStaleBrokerEpoch for a broker
// registration that is not current, and ErrNotController when no
// controller could be reached (the broker tries again at its next beat).
func (s *Store) Heartbeat(ctx context.Context, hb Heartbeat) (HeartbeatReply, error) {
	if !s.opts.clustered() || s.raft.State() == raft.Leader {
		return s.heartbeatLocal(ctx, hb)
	}
	payload, err := json.Marshal(&hb)
	if err != nil {
		return HeartbeatReply{}, fmt.Errorf("metadata: encode heartbeat: %w", err)
	}
	resp, err := s.askController(ctx, forwardHeartbeat, payload, "heartbeat")
	if err != nil {
		return HeartbeatReply{}, err
	}
	if resp.Heartbeat == nil {
		return HeartbeatReply{}, fmt.Errorf("%w: the controller answered a heartbeat without a reply", ErrNotController)
	}
	return *resp.Heartbeat, nil
}

// askController sends one forwarding request of kind to the Raft leader
// and returns its answer, or the error it answered with; what names the
// request in errors. ErrNotController: no leader known or reachable.
func (s *Store) askController(ctx context.Context, kind byte, payload []byte, what string) (forwardResponse, error) {
	addr, id := s.raft.LeaderWithID()
	if addr == "" {
		return forwardResponse{}, fmt.Errorf("%w: %w", ErrNotController, errNoLeader)
	}
	resp, _, err := s.roundTrip(ctx, addr, encodeForwardRequest(kind, payload))
	switch {
	case err != nil:
		return forwardResponse{}, fmt.Errorf("%w: %s to node %s at %s: %w", ErrNotController, what, id, addr, err)
	case resp.Err != nil:
		return forwardResponse{}, decodeWireError(resp.Err)
	}
	return resp, nil
}

func (s *Store) serveHeartbeat(payload []byte) forwardResponse {
	hb, err := decodeHeartbeat(payload)
	if err != nil {
		return s.rejection(err)
	}
	reply, err := s.heartbeatLocal(context.Background(), hb)
	if err != nil {
		return s.rejection(err)
	}
	return forwardResponse{Index: s.Image().Version, Heartbeat: &reply}
}

// heartbeatLocal handles a heartbeat on the controller.
func (s *Store) heartbeatLocal(ctx context.Context, hb Heartbeat) (HeartbeatReply, error) {
	if !s.inOffice.Load() {
		return HeartbeatReply{}, fmt.Errorf("%w: node %d is not in office: %w", ErrNotController, s.opts.NodeID, raft.ErrNotLeader)
	}
	img := s.Image()
	b, err := registration(img, hb.BrokerID, hb.BrokerEpoch)
	if err != nil {
		return HeartbeatReply{}, err
	}
	s.hb.record(hb, img.Version, s.nowMs())
	var change command
	switch {
	case shouldUnfence(img, hb):
		change = &unfenceBrokerCmd{ID: b.ID, Epoch: b.Epoch}
	case shouldFenceOnRequest(img, hb):
		change = &fenceBrokerCmd{ID: b.ID, Epoch: b.Epoch}
	}
	if change != nil {
		next, err := s.propose(ctx, change)
		if err != nil {
			return HeartbeatReply{}, err
		}
		img = next
	}
	now, ok := img.Brokers[hb.BrokerID]
	return HeartbeatReply{
		Fenced:   !ok || now.Epoch != hb.BrokerEpoch || now.Fenced,
		CaughtUp: hb.AppliedVersion >= uint64(b.Epoch),
	}, nil
}

// livenessLoop fences, while term lasts, every unfenced broker whose
// heartbeats stopped for Options.BrokerSessionTimeout. It is owned by the
// Store (loopWG) and ends with the term or Close.
func (s *Store) livenessLoop(term uint64) {
	defer s.loopWG.Done()
	session := s.opts.BrokerSessionTimeout
	tick := time.NewTicker(max(session/4, minLivenessTick))
	defer tick.Stop()
	for {
		select {
		case <-s.stopCh:
			return
		case <-tick.C:
		}
		expired, ok := s.hb.expired(term, s.Image(), s.nowMs(), session.Milliseconds())
		if !ok || !s.inOffice.Load() {
			return
		}
		for _, b := range expired {
			_, err := s.proposeNoCtx(&fenceBrokerCmd{ID: b.ID, Epoch: b.Epoch})
			if err != nil {
				s.log.Warn("fencing a silent broker failed", "broker", b.ID, "err", err)
				continue
			}
			s.log.Warn("fenced a broker: no heartbeat within the session timeout",
				"broker", b.ID, "broker_epoch", b.Epoch, "session_timeout", session)
		}
	}
}
