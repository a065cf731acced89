package metadata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/base"
)

const (
	// readyPoll is how often Open rechecks whether a follower has caught up:
	// leader changes do not signal the image watchers.
	readyPoll = 25 * time.Millisecond
	// joinBackoffMin and joinBackoffMax bound the pause between two join
	// attempts of a non-voter.
	joinBackoffMin = 50 * time.Millisecond
	joinBackoffMax = 2 * time.Second
	// joinWarnEvery is how many failed join attempts pass between two warnings.
	joinWarnEvery = 20
	// joinAttemptTimeout bounds one join request, answered once the leader
	// has committed the configuration change.
	joinAttemptTimeout = 30 * time.Second
	// memberSilence is how long a follower that has joined goes without
	// word from a leader (whose heartbeats come about every tenth of
	// Raft's heartbeat timeout) before it asks to join again;
	// memberCheckEvery is how often it looks.
	memberSilence    = 5 * time.Second
	memberCheckEvery = time.Second
)

// clustered reports whether the node is configured as a member of a
// multi-node quorum (Voters or Bootstrap set).
func (o Options) clustered() bool { return len(o.Voters) > 0 || len(o.Bootstrap) > 0 }

// contacts are the addresses a member asks, in turn, while it knows no
// leader: the voters' by id, else Bootstrap.
func (o Options) contacts() []raft.ServerAddress {
	var out []raft.ServerAddress
	for _, id := range slices.Sorted(maps.Keys(o.Voters)) {
		out = append(out, raft.ServerAddress(o.Voters[id]))
	}
	if len(out) > 0 {
		return out
	}
	for _, addr := range o.Bootstrap {
		out = append(out, raft.ServerAddress(addr))
	}
	return out
}

// isVoter reports whether this node is one of the configured voters.
func (o Options) isVoter() bool {
	_, ok := o.Voters[o.NodeID]
	return ok
}

// advertised is the address this node puts in the Raft configuration, when
// it is known before listening: AdvertiseAddr, else the node's entry in
// Voters. "" means the listener's own address.
func (o Options) advertised() string {
	if o.AdvertiseAddr != "" {
		return o.AdvertiseAddr
	}
	return o.Voters[o.NodeID]
}

// validateQuorum checks AdvertiseAddr and Voters.
func (o Options) validateQuorum() error {
	if o.AdvertiseAddr != "" {
		if o.BindAddr == "" {
			return errors.New("metadata: Options.AdvertiseAddr needs a TCP Options.BindAddr")
		}
		if err := validateDialAddr(o.AdvertiseAddr); err != nil {
			return fmt.Errorf("metadata: Options.AdvertiseAddr: %w", err)
		}
	}
	if !o.clustered() {
		return nil
	}
	if o.BindAddr == "" {
		return errors.New("metadata: Options.Voters and Options.Bootstrap need a TCP Options.BindAddr")
	}
	if len(o.Voters) > 0 && len(o.Bootstrap) > 0 {
		return errors.New("metadata: Options.Voters and Options.Bootstrap are exclusive: a configured voter set is found by the voters")
	}
	for _, addr := range o.Bootstrap {
		if err := validateDialAddr(addr); err != nil {
			return fmt.Errorf("metadata: Options.Bootstrap: %w", err)
		}
	}
	ids := slices.Sorted(maps.Keys(o.Voters))
	byAddr := make(map[string]int32, len(ids))
	for _, id := range ids {
		addr := o.Voters[id]
		if id < 0 {
			return fmt.Errorf("metadata: Options.Voters: node id %d is negative", id)
		}
		if err := validateDialAddr(addr); err != nil {
			return fmt.Errorf("metadata: Options.Voters: node %d: %w", id, err)
		}
		key := base.CanonicalAddr(addr)
		if other, dup := byAddr[key]; dup {
			return fmt.Errorf("metadata: Options.Voters: nodes %d and %d share address %s", other, id, addr)
		}
		byAddr[key] = id
	}
	own := o.AdvertiseAddr
	if own == "" {
		own = o.BindAddr
	}
	if addr, ok := o.Voters[o.NodeID]; ok {
		if base.CanonicalAddr(own) != base.CanonicalAddr(addr) {
			return fmt.Errorf("metadata: node %d is a voter at %s (Options.Voters) but would advertise %s", o.NodeID, addr, own)
		}
	} else if other, taken := byAddr[base.CanonicalAddr(own)]; taken {
		return fmt.Errorf("metadata: non-voter %d would advertise %s, voter %d's address", o.NodeID, own, other)
	}
	return nil
}

// nodeServerID is a node's Raft server id.
func nodeServerID(id int32) raft.ServerID { return raft.ServerID(strconv.Itoa(int(id))) }

// parseServerID is the inverse of nodeServerID; ok is false for anything else.
func parseServerID(id raft.ServerID) (int32, bool) {
	n, err := strconv.ParseInt(string(id), 10, 32)
	if err != nil || n < 0 || nodeServerID(int32(n)) != id {
		return 0, false
	}
	return int32(n), true
}

// bootstrapConfiguration is the configuration this node writes into a fresh
// log, and whether it writes one: one voter (itself) without Voters; every
// voter, sorted by id, on a configured voter (all voters write the same
// entry, which Raft allows); none on a non-voter, which joins instead.
func (s *Store) bootstrapConfiguration() (raft.Configuration, bool) {
	o := s.opts
	if !o.clustered() {
		return raft.Configuration{Servers: []raft.Server{
			{Suffrage: raft.Voter, ID: nodeServerID(o.NodeID), Address: s.trans.LocalAddr()},
		}}, true
	}
	if !o.isVoter() {
		return raft.Configuration{}, false
	}
	var conf raft.Configuration
	for _, id := range slices.Sorted(maps.Keys(o.Voters)) {
		conf.Servers = append(conf.Servers, raft.Server{
			Suffrage: raft.Voter, ID: nodeServerID(id), Address: raft.ServerAddress(o.Voters[id]),
		})
	}
	return conf, true
}

// Leader returns the node id of the current Raft leader, as this node knows
// it; ok is false while none is known (during an election) and after Close.
func (s *Store) Leader() (id int32, ok bool) {
	if s.closing() {
		return 0, false
	}
	_, sid := s.raft.LeaderWithID()
	if sid == "" {
		return 0, false
	}
	return parseServerID(sid)
}

// IsController reports whether this node is the Raft leader and has taken
// office in its current term: every earlier entry is applied and its
// controller record is written, so its image is the latest one.
func (s *Store) IsController() bool {
	return !s.closing() && s.inOffice.Load() && s.raft.State() == raft.Leader
}

// waitReady waits until Open may return. A single node waits to take office.
// A member of a multi-node quorum waits to take office if it is the leader,
// and otherwise until a leader is known and this node's image holds the
// cluster id and that leader's controller record, and then until its image
// holds everything the controller had committed (read_index.go).
func (s *Store) waitReady(ctx context.Context) error {
	if !s.opts.clustered() {
		select {
		case <-s.ready:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("metadata: waiting for leadership: %w", ctx.Err())
		}
	}
	watch, cancel := s.Watch()
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	ready := s.ready
	for !s.caughtUp() {
		select {
		case <-ready:
			ready = nil // closed once for good: do not spin on it
		case <-watch:
		case <-tick.C:
		case <-ctx.Done():
			leader, ok := s.Leader()
			return fmt.Errorf("metadata: waiting to catch up with the controller (leader %d known: %v, image version %d): %w",
				leader, ok, s.Image().Version, ctx.Err())
		}
	}
	return s.catchUp(ctx) // in office, every earlier entry is applied here
}

func (s *Store) caughtUp() bool {
	leader, ok := s.Leader()
	if !ok {
		return false
	}
	if leader == s.opts.NodeID {
		return s.inOffice.Load()
	}
	img := s.Image()
	return img.ClusterID != "" && img.ControllerID == leader
}

// joinLoop runs on a non-voter, and on a configured voter with state, for
// as long as the node is open: it joins (join), and then, whenever a
// leader has not been heard from for memberSilence, joins again: a node
// the quorum took out while it kept running (an unregistered broker's,
// forgetMember) is no longer replicated to and would otherwise fall
// behind for good. Asking a leader that still holds the node changes
// nothing. Owned by the Store; Close stops it.
func (s *Store) joinLoop() {
	defer s.loopWG.Done()
	for s.join() && s.awaitSilence() {
		s.log.Warn("no word from a metadata quorum leader; asking to join again",
			"silence", memberSilence, "last_contact", s.raft.LastContact())
	}
}

// join asks the leader, or while none is known each voter in turn, to add
// this node at its address, or, for a voter that came back at another
// address, to move it, until the Raft configuration holds it there. The
// node's own copy of the configuration is not enough until the leader has
// answered once (or the node leads): a node taken out while it was down
// still finds itself there when it comes back at the same address. false:
// the node closed.
func (s *Store) join() bool {
	addr := s.trans.LocalAddr()
	req := joinRequest{NodeID: s.opts.NodeID, Address: string(addr)}
	request := encodeForwardRequest(forwardJoin, encodeJoinRequest(req))
	req.DirectoryID = &s.opts.DirectoryID
	move := encodeForwardRequest(forwardJoin, encodeJoinRequest(req))
	answered := false
	if !s.askLeaderUntil("joining the metadata quorum", func(answer *forwardResponse) ([]byte, bool) {
		answered = answered || answer != nil || s.raft.State() == raft.Leader
		if answered && s.inConfiguration(addr) {
			return nil, true
		}
		if s.isVoterNow(s.opts.NodeID) {
			return move, false // a voter elsewhere: moving needs its directory id
		}
		return request, false
	}) {
		return false
	}
	s.log.Info("member of the metadata quorum", "addr", addr, "voter", s.isVoterNow(s.opts.NodeID))
	return true
}

// awaitSilence returns true once this node is a follower that has not
// heard from a leader for memberSilence, false when it closes.
func (s *Store) awaitSilence() bool {
	for {
		if s.pause(s.closeCtx, memberCheckEvery) != nil {
			return false
		}
		if s.raft.State() == raft.Follower && time.Since(s.raft.LastContact()) > memberSilence {
			return true
		}
	}
}

// askLeaderUntil sends the request next gives to the leader this node
// knows, or else the one the last node asked named, or to each of its
// contacts in turn (on every other attempt, so that a stale leader cannot
// keep them from being asked), pausing between
// attempts, until next reports done (true) or the node closes (false).
// next gets the answer to the previous request when it succeeded; a nil
// request sends nothing this time. what names the errand in warnings.
func (s *Store) askLeaderUntil(what string, next func(answer *forwardResponse) (request []byte, done bool)) bool {
	addr := s.trans.LocalAddr()
	contacts := s.opts.contacts()
	backoff := joinBackoffMin
	var answer *forwardResponse
	var named raft.ServerAddress // the leader a node that does not lead named
	for attempt := 0; ; attempt++ {
		request, done := next(answer)
		if done {
			return true
		}
		answer = nil
		if request == nil {
			if s.pause(s.closeCtx, joinBackoffMin) != nil {
				return false
			}
			continue
		}
		target, _ := s.raft.LeaderWithID()
		if target == "" {
			target = named
		}
		if target == "" || target == addr || attempt%2 == 1 {
			target = contacts[(attempt/2)%len(contacts)]
		}
		ctx, stop := s.untilClosed(context.Background())
		ctx, cancel := context.WithTimeout(ctx, joinAttemptTimeout)
		resp, _, err := s.roundTrip(ctx, target, request)
		cancel()
		stop()
		named = ""
		if err == nil && resp.Err != nil {
			named = raft.ServerAddress(resp.Leader)
			err = decodeWireError(resp.Err)
		}
		if s.closing() {
			return false
		}
		if err != nil && attempt%joinWarnEvery == joinWarnEvery-1 {
			s.log.Warn(what+": still trying", "via", target, "attempts", attempt+1, "err", err)
		}
		if err == nil {
			answer = &resp
			backoff = joinBackoffMin // done there: the change is on its way here
		}
		if s.pause(s.closeCtx, backoff) != nil {
			return false
		}
		if err != nil {
			backoff = min(2*backoff, joinBackoffMax)
		}
	}
}

// inConfiguration reports whether the latest Raft configuration this node
// knows holds it at addr.
func (s *Store) inConfiguration(addr raft.ServerAddress) bool {
	srv, ok := s.configEntry(s.opts.NodeID)
	return ok && srv.Address == addr
}
