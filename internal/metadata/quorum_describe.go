package metadata

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/raft"
)

// QuorumState is the metadata quorum as its controller sees it (Kafka's
// DescribeQuorum). Offsets are metadata versions: the Raft index of the
// newest command a node has applied (Image.Version).
type QuorumState struct {
	LeaderID int32 `json:"leader_id"`
	// LeaderEpoch is the Raft term of the leader.
	LeaderEpoch int32 `json:"leader_epoch"`
	// HighWatermark is the controller's own metadata version: every
	// version at or below it is committed.
	HighWatermark int64           `json:"high_watermark"`
	Voters        []QuorumReplica `json:"voters"`
	// Observers are the quorum's non-voters and the brokers outside it
	// that heartbeat to the controller.
	Observers []QuorumReplica `json:"observers"`
}

// QuorumReplica is one node of the quorum. -1 means not heard from in the
// controller's current term (heartbeats come every
// broker.heartbeat.interval.ms).
type QuorumReplica struct {
	NodeID int32 `json:"node_id"`
	// LogEndOffset is the newest metadata version the node has applied.
	LogEndOffset int64 `json:"log_end_offset"`
	// LastFetchMs is when the controller last heard from it.
	LastFetchMs int64 `json:"last_fetch_ms"`
	// LastCaughtUpMs is the last time it had applied everything the
	// controller had.
	LastCaughtUpMs int64 `json:"last_caught_up_ms"`
}

// replicaProgress is what the controller's heartbeats tell of one broker's
// metadata (not replicated; a new controller starts with none).
type replicaProgress struct {
	AppliedVersion uint64
	AtMs           int64
	CaughtUpMs     int64 // 0: never caught up in this term
}

// after is p updated by a heartbeat at nowMs reporting applied while the
// controller's version was leaderVersion.
func (p replicaProgress) after(applied, leaderVersion uint64, nowMs int64) replicaProgress {
	p.AppliedVersion, p.AtMs = applied, nowMs
	if applied >= leaderVersion {
		p.CaughtUpMs = nowMs
	}
	return p
}

// quorumView is what describeQuorum needs from the controller: its Raft
// configuration, term and version, the time, and the heartbeats heard.
type quorumView struct {
	self     int32
	term     uint64
	version  uint64
	nowMs    int64
	servers  []raft.Server
	progress map[int32]replicaProgress
}

// describeQuorum builds the controller's answer. The controller itself is
// current at nowMs; a broker that heartbeats but is not in the Raft
// configuration is an observer, as Kafka lists every broker fetching
// metadata; voters and observers are sorted by node id.
func describeQuorum(v quorumView) QuorumState {
	out := QuorumState{
		LeaderID:      v.self,
		LeaderEpoch:   int32(min(v.term, uint64(1<<31-1))),
		HighWatermark: int64(v.version),
		Voters:        []QuorumReplica{},
		Observers:     []QuorumReplica{},
	}
	inConfig := make(map[int32]bool, len(v.servers))
	for _, srv := range v.servers {
		id, ok := parseServerID(srv.ID)
		if !ok {
			continue
		}
		inConfig[id] = true
		r := v.replica(id)
		if srv.Suffrage == raft.Voter {
			out.Voters = append(out.Voters, r)
		} else {
			out.Observers = append(out.Observers, r)
		}
	}
	for id := range v.progress {
		if !inConfig[id] {
			out.Observers = append(out.Observers, v.replica(id))
		}
	}
	byID := func(a, b QuorumReplica) int { return int(a.NodeID) - int(b.NodeID) }
	slices.SortFunc(out.Voters, byID)
	slices.SortFunc(out.Observers, byID)
	return out
}

// replica is node id's entry: the controller's own, or what its heartbeats
// said, or unknown.
func (v quorumView) replica(id int32) QuorumReplica {
	if id == v.self {
		return QuorumReplica{NodeID: id, LogEndOffset: int64(v.version), LastFetchMs: v.nowMs, LastCaughtUpMs: v.nowMs}
	}
	p, ok := v.progress[id]
	if !ok {
		return QuorumReplica{NodeID: id, LogEndOffset: -1, LastFetchMs: -1, LastCaughtUpMs: -1}
	}
	r := QuorumReplica{NodeID: id, LogEndOffset: int64(p.AppliedVersion), LastFetchMs: p.AtMs, LastCaughtUpMs: -1}
	if p.CaughtUpMs > 0 {
		r.LastCaughtUpMs = p.CaughtUpMs
	}
	return r
}

// DescribeQuorum returns the quorum as the controller sees it, asking the
// controller when this node is not it. ErrNotController: no controller
// could be reached.
func (s *Store) DescribeQuorum(ctx context.Context) (QuorumState, error) {
	if !s.opts.clustered() || s.raft.State() == raft.Leader {
		return s.describeQuorumLocal()
	}
	resp, err := s.askController(ctx, forwardDescribeQuorum, nil, "describe quorum")
	if err != nil {
		return QuorumState{}, err
	}
	if resp.Quorum == nil {
		return QuorumState{}, fmt.Errorf("%w: the controller answered a describe-quorum request without the quorum", ErrNotController)
	}
	return *resp.Quorum, nil
}

// describeQuorumLocal answers on the controller.
func (s *Store) describeQuorumLocal() (QuorumState, error) {
	if !s.inOffice.Load() || s.closing() {
		return QuorumState{}, fmt.Errorf("%w: node %d is not in office: %w", ErrNotController, s.opts.NodeID, raft.ErrNotLeader)
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return QuorumState{}, fmt.Errorf("%w: reading the Raft configuration: %w", ErrNotController, err)
	}
	return describeQuorum(quorumView{
		self:     s.opts.NodeID,
		term:     s.raft.CurrentTerm(),
		version:  s.Image().Version,
		nowMs:    s.nowMs(),
		servers:  f.Configuration().Servers,
		progress: s.hb.progressOf(),
	}), nil
}

func (s *Store) serveDescribeQuorum(payload []byte) forwardResponse {
	if len(payload) > 0 {
		return s.rejection(fmt.Errorf("%w: a describe-quorum request carries %d bytes, want none", ErrInvalidCommand, len(payload)))
	}
	q, err := s.describeQuorumLocal()
	if err != nil {
		return s.rejection(err)
	}
	return forwardResponse{Index: s.Image().Version, Quorum: &q}
}
