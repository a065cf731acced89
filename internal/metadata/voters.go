package metadata

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/base"
)

// Kafka's dynamic quorum (KIP-853: AddRaftVoter, RemoveRaftVoter) on Raft's
// own configuration changes. A node joins every cluster as a non-voter
// (joinLoop); AddVoter promotes one that is registered, caught up and at the
// given address to a voter, RemoveVoter demotes a voter back to a non-voter,
// which keeps replicating the metadata as any broker does. The voters of
// controller.quorum.voters only bootstrap a new quorum: after that the voter
// set is the one in the Raft log, and each change is one committed
// configuration entry (Raft makes one change at a time). A node that starts
// without Raft state, voter or not, catches up before it takes part in an
// election (rejoin.go), so a voter added here that lost its disk cannot vote
// from an empty log either.

const (
	// maxVoterLag is how many metadata versions behind the controller a
	// node may be at its latest heartbeat and still be promoted, when it
	// was not exactly caught up at any recent heartbeat (a busy quorum).
	maxVoterLag = 1000
	// voterFreshness bounds how long ago the controller must have heard
	// from a node it promotes when Options.BrokerSessionTimeout is unset.
	voterFreshness = 10 * time.Second
)

// voterOp is what a voter change does.
type voterOp string

const (
	// voterAdd makes a non-voter a voter (AddVoter).
	voterAdd voterOp = "add"
	// voterRemove makes a voter a non-voter (RemoveVoter).
	voterRemove voterOp = "remove"
	// voterForget takes a non-voter out of the Raft configuration, so that
	// the leader stops replicating to it (an unregistered broker's node).
	voterForget voterOp = "forget"
)

// voterRequest is a voter change as forwarded to the controller.
type voterRequest struct {
	Op     voterOp `json:"op"`
	NodeID int32   `json:"node_id"`
	// DirectoryID is the node's log directory id (Broker.LogDir).
	DirectoryID [16]byte `json:"directory_id"`
	// Addresses are the host:port endpoints the voter is reachable at
	// (its controller listener); one must be its Raft address. Add only.
	Addresses []string `json:"addresses,omitempty"`
	// TimeoutMs bounds the controller's wait for the change to commit.
	TimeoutMs int64 `json:"timeout_ms"`
}

// voterView is what planVoterChange decides from: the latest Raft
// configuration, the registered brokers' log directory ids, the brokers'
// metadata progress heard by the controller, and how recent that must be.
type voterView struct {
	servers       []raft.Server
	dirs          map[int32][16]byte
	progress      map[int32]replicaProgress
	leaderVersion uint64
	nowMs         int64
	freshMs       int64
}

// planVoterChange checks req against v and returns the server it changes.
// Errors: ErrDuplicateVoter (adding a voter), ErrVoterNotFound (removing a
// node that is not a voter, or by another directory id; forgetting a node
// that is not a member), ErrInvalidVoter (a directory id or addresses that
// are not the node's, removing the last voter, forgetting a voter),
// ErrVoterNotReady (adding a node that is not a member, not registered, or
// not caught up).
func planVoterChange(req voterRequest, v voterView) (raft.Server, error) {
	var srv raft.Server
	found := false
	voters := 0
	for _, s := range v.servers {
		if s.Suffrage == raft.Voter {
			voters++
		}
		if s.ID == nodeServerID(req.NodeID) {
			srv, found = s, true
		}
	}
	dir, registered := v.dirs[req.NodeID]
	switch req.Op {
	case voterForget:
		switch {
		case !found:
			return srv, fmt.Errorf("%w: node %d is not a member of the metadata quorum", ErrVoterNotFound, req.NodeID)
		case srv.Suffrage == raft.Voter:
			return srv, fmt.Errorf("%w: node %d is a voter of the metadata quorum; remove it with RemoveRaftVoter (kafka-metadata-quorum remove-controller) first", ErrInvalidVoter, req.NodeID)
		}
		return srv, nil
	case voterRemove:
		switch {
		case !found || srv.Suffrage != raft.Voter:
			return srv, fmt.Errorf("%w: node %d is not a voter of the metadata quorum", ErrVoterNotFound, req.NodeID)
		case registered && dir != req.DirectoryID:
			return srv, fmt.Errorf("%w: voter %d has directory id %s, not %s", ErrVoterNotFound, req.NodeID, UUIDString(dir), UUIDString(req.DirectoryID))
		case voters == 1:
			return srv, fmt.Errorf("%w: node %d is the quorum's only voter; add another voter first", ErrInvalidVoter, req.NodeID)
		}
		return srv, nil
	}
	switch {
	case found && srv.Suffrage == raft.Voter:
		return srv, fmt.Errorf("%w: node %d is already a voter of the metadata quorum", ErrDuplicateVoter, req.NodeID)
	case !found:
		return srv, fmt.Errorf("%w: node %d is not a member of the metadata quorum: start it with the cluster's controller.quorum.voters and wait until it has joined", ErrVoterNotReady, req.NodeID)
	case !registered:
		return srv, fmt.Errorf("%w: node %d has not registered as a broker yet", ErrVoterNotReady, req.NodeID)
	case dir != req.DirectoryID:
		return srv, fmt.Errorf("%w: node %d has directory id %s, not %s (DescribeQuorum shows each node's)", ErrInvalidVoter, req.NodeID, UUIDString(dir), UUIDString(req.DirectoryID))
	case !hasAddress(req.Addresses, string(srv.Address)):
		return srv, fmt.Errorf("%w: node %d's controller listener is at %s; the listeners given (%s) do not include it", ErrInvalidVoter, req.NodeID, srv.Address, strings.Join(req.Addresses, ", "))
	}
	p, heard := v.progress[req.NodeID]
	switch {
	case !heard || v.nowMs-p.AtMs > v.freshMs:
		return srv, fmt.Errorf("%w: the controller has not heard from node %d in the last %d ms", ErrVoterNotReady, req.NodeID, v.freshMs)
	case !caughtUpRecently(p, v.leaderVersion, v.nowMs, v.freshMs):
		return srv, fmt.Errorf("%w: node %d is behind the controller's metadata (version %d of %d); try again once it has caught up", ErrVoterNotReady, req.NodeID, p.AppliedVersion, v.leaderVersion)
	}
	return srv, nil
}

// caughtUpRecently reports whether a node was caught up within freshMs of
// nowMs, or lagged at most maxVoterLag versions at its latest heartbeat.
func caughtUpRecently(p replicaProgress, leaderVersion uint64, nowMs, freshMs int64) bool {
	if p.CaughtUpMs > 0 && nowMs-p.CaughtUpMs <= freshMs {
		return true
	}
	return p.AppliedVersion+maxVoterLag >= leaderVersion
}

func hasAddress(addrs []string, want string) bool {
	for _, a := range addrs {
		if base.CanonicalAddr(a) == base.CanonicalAddr(want) {
			return true
		}
	}
	return false
}

// AddVoter makes node a voter of the metadata quorum (Kafka's
// AddRaftVoter): it must have joined as a non-voter, be registered with
// log directory dirID, be caught up with the controller, and be at one of
// addrs (host:port, its controller listener). It works on every member and
// returns once the new voter set is committed and every voter holds it
// (voters_hold.go). timeout bounds the
// controller's wait; ctx bounds the caller's.
func (s *Store) AddVoter(ctx context.Context, node int32, dirID [16]byte, addrs []string, timeout time.Duration) error {
	return s.changeVoters(ctx, voterRequest{Op: voterAdd, NodeID: node, DirectoryID: dirID,
		Addresses: addrs, TimeoutMs: timeout.Milliseconds()})
}

// RemoveVoter makes voter node a non-voter (Kafka's RemoveRaftVoter); dirID
// must be its log directory id. The node, if it runs, keeps replicating the
// metadata. Removing the leader makes it step down once the change commits;
// the answer comes once every remaining voter holds it.
func (s *Store) RemoveVoter(ctx context.Context, node int32, dirID [16]byte, timeout time.Duration) error {
	return s.changeVoters(ctx, voterRequest{Op: voterRemove, NodeID: node, DirectoryID: dirID,
		TimeoutMs: timeout.Milliseconds()})
}

// Clustered reports whether this node is a member of a multi-node quorum,
// whose voters can change; a single node's quorum is itself alone.
func (s *Store) Clustered() bool { return s.opts.clustered() }

func (s *Store) changeVoters(ctx context.Context, req voterRequest) error {
	if !s.opts.clustered() {
		return fmt.Errorf("%w: a single-node broker's metadata quorum is itself alone; a cluster's quorum starts from controller.quorum.voters", ErrInvalidVoter)
	}
	if s.raft.State() == raft.Leader {
		ctx, cancel := context.WithTimeout(ctx, voterChangeTimeout(req.TimeoutMs))
		defer cancel()
		return s.changeVotersLocal(ctx, req)
	}
	payload, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("metadata: encode voter change: %w", err)
	}
	_, err = s.askController(ctx, forwardVoters, payload, "voter change")
	return err
}

func (s *Store) serveVoters(payload []byte) forwardResponse {
	var req voterRequest
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() || req.NodeID < 0 || !slices.Contains([]voterOp{voterAdd, voterRemove, voterForget}, req.Op) {
		return s.rejection(fmt.Errorf("%w: malformed voter change (node %d): %v", ErrInvalidCommand, req.NodeID, err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), voterChangeTimeout(req.TimeoutMs))
	defer cancel()
	if err := s.changeVotersLocal(ctx, req); err != nil {
		return s.rejection(err)
	}
	return forwardResponse{Index: s.Image().Version}
}

// voterChangeTimeout is how long the controller works on a voter change
// whose request allows timeoutMs (none: joinAttemptTimeout).
func voterChangeTimeout(timeoutMs int64) time.Duration {
	if timeoutMs <= 0 {
		return joinAttemptTimeout
	}
	return time.Duration(timeoutMs) * time.Millisecond
}

// changeVotersLocal plans and makes a voter change on the controller, one
// at a time (configMu), then waits until every voter holds it.
func (s *Store) changeVotersLocal(ctx context.Context, req voterRequest) error {
	err := s.commitVoterChange(ctx, req)
	if err != nil || req.Op == voterForget {
		return err // forgetting a non-voter leaves the voters as they are
	}
	return s.awaitVotersHold(ctx)
}

// commitVoterChange plans req against the latest configuration and makes
// it; it returns once the configuration entry is committed.
func (s *Store) commitVoterChange(ctx context.Context, req voterRequest) error {
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if !s.inOffice.Load() || s.closing() {
		return fmt.Errorf("%w: node %d is not in office: %w", ErrNotController, s.opts.NodeID, raft.ErrNotLeader)
	}
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return raftFutureError(err)
	}
	img := s.Image()
	dirs := make(map[int32][16]byte, len(img.Brokers))
	for id, b := range img.Brokers {
		dirs[id] = b.LogDir
	}
	fresh := s.opts.BrokerSessionTimeout
	if fresh <= 0 {
		fresh = voterFreshness
	}
	srv, err := planVoterChange(req, voterView{
		servers: cf.Configuration().Servers, dirs: dirs, progress: s.hb.progressOf(),
		leaderVersion: img.Version, nowMs: s.nowMs(), freshMs: fresh.Milliseconds(),
	})
	if err != nil {
		return err
	}
	var f raft.IndexFuture
	what := "added a voter to the metadata quorum"
	switch req.Op {
	case voterRemove:
		f = s.raft.DemoteVoter(srv.ID, 0, 0)
		what = "removed a voter from the metadata quorum (it stays a non-voter)"
	case voterForget:
		f = s.raft.RemoveServer(srv.ID, 0, 0)
		what = "took an unregistered broker's node out of the metadata quorum"
	default:
		f = s.raft.AddVoter(srv.ID, srv.Address, 0, 0)
	}
	resolved, err := s.await(ctx, f)
	switch {
	case !resolved:
		return fmt.Errorf("%w: %w", ErrVoterNotReady, err)
	case err != nil:
		return raftFutureError(err)
	}
	s.log.Info(what, "node", req.NodeID, "addr", srv.Address, "index", f.Index())
	s.warnStaleVoters()
	return nil
}

// warnStaleVoters warns when Options.Voters (controller.quorum.voters) no
// longer names the quorum's voters: a configured voter that starts without
// state asks only those it names whether the quorum has a history, so one
// that names only itself would bootstrap a new quorum of its own. The
// voters' addresses are in the log; the line names them.
func (s *Store) warnStaleVoters() {
	if len(s.opts.Voters) == 0 {
		return // a single node, or a member found by Bootstrap, which names no voters
	}
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	current := map[int32]string{}
	for _, srv := range f.Configuration().Servers {
		if id, ok := parseServerID(srv.ID); ok && srv.Suffrage == raft.Voter {
			current[id] = string(srv.Address)
		}
	}
	if maps.EqualFunc(current, s.opts.Voters, func(a, b string) bool { return base.CanonicalAddr(a) == base.CanonicalAddr(b) }) {
		return
	}
	var list []string
	for _, id := range slices.Sorted(maps.Keys(current)) {
		list = append(list, fmt.Sprintf("%d@%s", id, current[id]))
	}
	s.log.Warn("controller.quorum.voters (or a standalone node's controller.quorum.bootstrap.servers) no longer names the metadata quorum's voters: set controller.quorum.voters on every node to the current voters, or controller.quorum.bootstrap.servers to their controller addresses, so that a voter that loses its disk finds the quorum instead of starting a new one",
		"controller.quorum.voters", strings.Join(list, ","))
}
