package metadata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// A voter that starts without Raft state is either one of a new quorum's
// first voters or one that lost its state (a replaced disk, a wiped data
// dir). Raft's safety rests on a voter remembering its votes and the
// entries it acknowledged: one that forgot them could elect a leader that
// lacks committed entries (its empty log is behind every candidate's) or
// vote twice in a term. So before writing the voter configuration, a voter
// without state asks the other voters what they hold (forwardProbe). If
// any has a history past the bootstrap entry, the quorum has run without
// this node's memory of it, and the node rejoins instead: it takes no part
// in elections (voteGate) while it replicates as any follower, asks the
// leader for an index committed after its return (forwardRejoin: the
// leader commits a barrier and answers its commit index), and opens its
// gate once it knows that index committed in its own log. Its log then
// matches a leader's past every entry committed before it came back, so
// its vote is as good as any. A file in the metadata dir keeps the node
// rejoining across restarts until then. A node outside the configured
// voters that starts without state rejoins the same way (without the
// probe: it never bootstraps), since the log may hold it as a voter that
// AddVoter made before it lost its disk; for a non-voter the closed gate
// changes nothing.
const rejoinMarkerFile = "rejoining"

// bootstrapIndex is the Raft index of the configuration BootstrapCluster
// writes: a log that ends there has never had a leader.
const bootstrapIndex = 1

const (
	// probeTimeout bounds one probe of another voter.
	probeTimeout = 2 * time.Second
	// probePauseMin and probePauseMax bound the pause between two rounds
	// of probes that did not decide.
	probePauseMin = 100 * time.Millisecond
	probePauseMax = 2 * time.Second
	// probeWarnEvery is how many undecided rounds pass between two warnings.
	probeWarnEvery = 10
)

// freshStart is what a configured voter without Raft state does.
type freshStart int

const (
	// freshWait: too few voters answered; probe again.
	freshWait freshStart = iota
	// freshBootstrap: a majority of the voters (this one included) has no
	// history; write the voter configuration.
	freshBootstrap
	// freshRejoin: the quorum has a history this node does not hold.
	freshRejoin
)

func (f freshStart) String() string {
	switch f {
	case freshWait:
		return "wait"
	case freshBootstrap:
		return "bootstrap"
	case freshRejoin:
		return "rejoin"
	}
	return fmt.Sprintf("freshStart(%d)", int(f))
}

// decideFreshStart decides for a voter without Raft state, one of voters
// configured voters, from the last Raft index each other voter that
// answered holds. One history past the bootstrap entry is enough to
// rejoin: a leader was elected, so a majority of the voters have state
// and can go on electing without this one.
func decideFreshStart(voters int, answered []uint64) freshStart {
	fresh := 1 // this node
	for _, last := range answered {
		if last > bootstrapIndex {
			return freshRejoin
		}
		fresh++
	}
	if fresh > voters/2 {
		return freshBootstrap
	}
	return freshWait
}

// decideFresh probes the other voters until decideFreshStart decides, or
// ctx ends.
func (s *Store) decideFresh(ctx context.Context) (freshStart, error) {
	pause := probePauseMin
	for round := 1; ; round++ {
		answered, errs := s.probeVoters(ctx)
		decision := decideFreshStart(len(s.opts.Voters), answered)
		if decision != freshWait {
			return decision, nil
		}
		if round%probeWarnEvery == 0 {
			s.log.Warn("waiting for a majority of the metadata quorum's voters to answer before starting",
				"answered", len(answered)+1, "voters", len(s.opts.Voters), "err", errors.Join(errs...))
		}
		if err := s.pause(ctx, pause); err != nil {
			return freshWait, fmt.Errorf("metadata: waiting for the other voters to answer: %w", err)
		}
		pause = min(2*pause, probePauseMax)
	}
}

// probeVoters asks every other voter, at once, for its last Raft index.
func (s *Store) probeVoters(ctx context.Context) (answered []uint64, errs []error) {
	var ids []int32
	var addrs []raft.ServerAddress
	for _, id := range slices.Sorted(maps.Keys(s.opts.Voters)) {
		if id != s.opts.NodeID {
			ids, addrs = append(ids, id), append(addrs, raft.ServerAddress(s.opts.Voters[id]))
		}
	}
	replies, probeErrs := s.probeAll(ctx, addrs)
	for i, r := range replies {
		if r == nil {
			errs = append(errs, fmt.Errorf("voter %d: %w", ids[i], probeErrs[i]))
			continue
		}
		answered = append(answered, r.LastIndex)
	}
	return answered, errs
}

// probeAll sends forwardProbe to every address at once. replies[i] is the
// answer of addrs[i], nil when it gave none, and errs[i] then says why.
func (s *Store) probeAll(ctx context.Context, addrs []raft.ServerAddress) (replies []*probeReply, errs []error) {
	replies, errs = make([]*probeReply, len(addrs)), make([]error, len(addrs))
	request := encodeForwardRequest(forwardProbe, nil)
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			resp, _, err := s.roundTrip(pctx, addr, request)
			switch {
			case err == nil && resp.Err != nil:
				err = decodeWireError(resp.Err)
			case err == nil && resp.Probe == nil:
				err = errors.New("no probe reply")
			}
			if err != nil {
				errs[i] = err
				return
			}
			replies[i] = resp.Probe
		})
	}
	wg.Wait()
	return replies, errs
}

// serveProbe answers any node, leader or not: the last Raft index here,
// 0 while this node is itself deciding how to start, and the voters of its
// latest configuration. A node about to start
// Raft on its existing state answers an error, as one not yet listening.
func (s *Store) serveProbe() forwardResponse {
	switch {
	case s.started.Load() && !s.closing():
		reply := &probeReply{LastIndex: s.raft.LastIndex()}
		if cf := s.raft.GetConfiguration(); cf.Error() == nil {
			reply.Voters = voterIDs(cf.Configuration().Servers)
		}
		return forwardResponse{Probe: reply}
	case s.deciding.Load():
		return forwardResponse{Probe: &probeReply{}}
	}
	return forwardResponse{Err: encodeWireError(fmt.Errorf("%w: node %d is not running raft", ErrNotController, s.opts.NodeID), true)}
}

// mustRejoin decides whether this member of a cluster starts rejoining: one
// with state that has not finished rejoining, a configured voter without
// state whose quorum has a history (decideFresh), or any other node
// without state: it never bootstraps, and the quorum may have made it a
// voter (AddVoter) before it lost its disk. It writes the marker.
func (s *Store) mustRejoin(ctx context.Context, existing bool) (bool, error) {
	o := s.opts
	switch {
	case !o.clustered():
		return false, nil
	case existing:
		return rejoining(o.Dir)
	case !o.isVoter():
		return true, writeRejoinMarker(o.Dir)
	}
	s.deciding.Store(true)
	defer s.deciding.Store(false)
	decision, err := s.decideFresh(ctx)
	if err != nil || decision != freshRejoin {
		return false, err
	}
	return true, writeRejoinMarker(o.Dir)
}

// rejoining reports whether the marker of an unfinished rejoin is in dir.
func rejoining(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, rejoinMarkerFile))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("metadata: %w", err)
}

// serveRejoin, on the leader, answers a rejoining node with an index
// committed after its request arrived: it commits a barrier and answers
// its commit index. A configured voter must ask from its configured
// address.
func (s *Store) serveRejoin(payload []byte) forwardResponse {
	req, err := decodeJoinRequest(payload)
	if err != nil {
		return s.rejection(err)
	}
	want, configured := s.opts.Voters[req.NodeID]
	switch {
	case configured && base.CanonicalAddr(want) != base.CanonicalAddr(req.Address):
		return s.rejection(fmt.Errorf("%w: voter %d is at %s, not %s", ErrInvalidCommand, req.NodeID, want, req.Address))
	case req.NodeID == s.opts.NodeID:
		return s.rejection(fmt.Errorf("%w: node %d leads; a leader does not rejoin", ErrInvalidCommand, req.NodeID))
	}
	f := s.raft.Barrier(joinAttemptTimeout)
	if resolved, err := s.await(context.Background(), f); !resolved {
		return s.rejection(err)
	} else if err != nil {
		return s.rejection(raftFutureError(err))
	}
	index := s.raft.CommitIndex()
	if s.isVoterNow(req.NodeID) {
		s.log.Warn("a voter lost its metadata state; it votes again once it holds what is committed now",
			"voter", req.NodeID, "index", index)
	}
	return forwardResponse{Index: index}
}

// rejoinLoop runs on a rejoining voter: it asks the leader for an index
// committed after its return, waits until it knows that index committed
// in its own log, then opens its vote gate and removes the marker.
func (s *Store) rejoinLoop() {
	defer s.loopWG.Done()
	request := encodeForwardRequest(forwardRejoin, encodeJoinRequest(joinRequest{
		NodeID: s.opts.NodeID, Address: string(s.trans.LocalAddr())}))
	var target uint64 // 0 until the leader answered
	ok := s.askLeaderUntil("rejoining the metadata quorum", func(answer *forwardResponse) ([]byte, bool) {
		if answer != nil && target == 0 {
			target = answer.Index
		}
		switch {
		case target == 0:
			return request, false
		case s.raft.CommitIndex() >= target:
			return nil, true
		}
		return nil, false // catching up
	})
	if !ok {
		return
	}
	s.gate.Open()
	if err := removeRejoinMarker(s.opts.Dir); err != nil {
		// It rejoins again on its next start: safe, and only slower.
		s.log.Warn("rejoined, but could not remove the rejoin marker", "err", err)
	}
	if s.isVoterNow(s.opts.NodeID) {
		s.log.Info("rejoined the metadata quorum as a voter", "committed", s.raft.CommitIndex())
	}
}

// isVoterNow reports whether node is a voter in the latest Raft
// configuration this node knows.
func (s *Store) isVoterNow(node int32) bool {
	srv, ok := s.configEntry(node)
	return ok && srv.Suffrage == raft.Voter
}

// configEntry is node's entry in the latest Raft configuration this node
// knows; ok is false when it has none (or the configuration is unreadable).
func (s *Store) configEntry(node int32) (raft.Server, bool) {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return raft.Server{}, false
	}
	for _, srv := range f.Configuration().Servers {
		if srv.ID == nodeServerID(node) {
			return srv, true
		}
	}
	return raft.Server{}, false
}

// VoteWithheld reports whether this node started without Raft state and
// catches up before it may vote (rejoin.go).
func (s *Store) VoteWithheld() bool { return s.gate != nil && !s.gate.IsOpen() }

func writeRejoinMarker(dir string) error {
	if err := vfs.WriteFileAtomic(dir, rejoinMarkerFile, []byte("this voter lost its raft state; it rejoins the quorum before it votes again\n")); err != nil {
		return fmt.Errorf("metadata: write %s: %w", filepath.Join(dir, rejoinMarkerFile), err)
	}
	return nil
}

func removeRejoinMarker(dir string) error {
	if err := os.Remove(filepath.Join(dir, rejoinMarkerFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return vfs.SyncDir(dir)
}
