package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

func (c *Coordinator) joinGroup(op runtime.Op, req *kmsg.JoinGroupRequest, now time.Time, res *runtime.Result) {
	fail := func(code int16) { reply(res, op.Token, joinError(req, req.MemberID, code)) }
	if req.Group == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	session := millis(req.SessionTimeoutMillis)
	if session < c.opts.SessionTimeoutMin || session > c.opts.SessionTimeoutMax {
		fail(kerr.InvalidSessionTimeout.Code)
		return
	}
	g, ok := c.groups[req.Group]
	if !ok {
		if req.MemberID != "" {
			fail(kerr.UnknownMemberID.Code)
			return
		}
		g = newGroup(req.Group, now)
		c.groups[req.Group] = g
	}
	if g.consumer != nil {
		// A classic member joins a consumer group with members as one of
		// them (consumer_classic.go); an empty one becomes classic again.
		if len(g.consumer.members) > 0 {
			c.joinConsumerGroup(op, req, g, now, res)
			return
		}
		c.dropConsumerState(g, res)
	}
	defer c.dropIfGarbage(g)
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	if req.MemberID == "" {
		c.joinUnknown(g, op, req, now, res)
	} else {
		c.joinKnown(g, op, req, now, res)
	}
	c.maybeCompleteJoin(g, now, res)
}

// joinUnknown handles a join without a member id: a new member, or a static
// member coming back under its instance id.
func (c *Coordinator) joinUnknown(g *group, op runtime.Op, req *kmsg.JoinGroupRequest, now time.Time, res *runtime.Result) {
	if req.InstanceID != nil {
		if oldID, ok := g.static[*req.InstanceID]; ok {
			c.replaceStatic(g, g.members[oldID], op, req, now, res)
			return
		}
	}
	if len(g.members)+len(g.pending) >= c.opts.MaxSize {
		reply(res, op.Token, joinError(req, "", kerr.GroupMaxSizeReached.Code))
		return
	}
	prefix := op.ClientID
	if req.InstanceID != nil {
		prefix = *req.InstanceID
	}
	id := c.newMemberID(prefix)
	if req.Version >= 4 && req.InstanceID == nil {
		// KIP-394: a dynamic member learns its id first and joins with it,
		// so a client that times out does not leave a ghost member behind.
		g.pending[id] = armAt(now.Add(millis(req.SessionTimeoutMillis)))
		reply(res, op.Token, joinError(req, id, kerr.MemberIDRequired.Code))
		return
	}
	c.addMemberAndRebalance(g, id, op, req, now, res)
}

func (c *Coordinator) joinKnown(g *group, op runtime.Op, req *kmsg.JoinGroupRequest, now time.Time, res *runtime.Result) {
	if _, ok := g.pending[req.MemberID]; ok {
		delete(g.pending, req.MemberID)
		if len(g.members) >= c.opts.MaxSize {
			reply(res, op.Token, joinError(req, req.MemberID, kerr.GroupMaxSizeReached.Code))
			return
		}
		c.addMemberAndRebalance(g, req.MemberID, op, req, now, res)
		return
	}
	if req.InstanceID != nil {
		if known, ok := g.static[*req.InstanceID]; ok && known != req.MemberID {
			reply(res, op.Token, joinError(req, req.MemberID, kerr.FencedInstanceID.Code))
			return
		}
	}
	m, ok := g.members[req.MemberID]
	if !ok {
		reply(res, op.Token, joinError(req, req.MemberID, kerr.UnknownMemberID.Code))
		return
	}
	switch g.state {
	case statePreparingRebalance:
		c.updateMemberAndRebalance(g, m, op, req, now, res)
	case stateCompletingRebalance:
		if m.sameProtocols(req.Protocols) {
			// A retried join: the response of the current generation.
			reply(res, op.Token, joinResponse(g, m, req))
			return
		}
		c.updateMemberAndRebalance(g, m, op, req, now, res)
	case stateStable:
		if m.id != g.leader && m.sameProtocols(req.Protocols) {
			m.session = armAt(now.Add(m.sessionTimeout))
			reply(res, op.Token, joinResponse(g, m, req))
			return
		}
		// The leader rejoining asks for a new assignment.
		c.updateMemberAndRebalance(g, m, op, req, now, res)
	default:
		reply(res, op.Token, joinError(req, req.MemberID, kerr.UnknownMemberID.Code))
	}
}

func (c *Coordinator) addMemberAndRebalance(g *group, id string, op runtime.Op, req *kmsg.JoinGroupRequest, now time.Time, res *runtime.Result) {
	m := &member{
		id:         id,
		instanceID: req.InstanceID,
		clientID:   op.ClientID,
		clientHost: op.ClientHost,
		protocols:  protocolsOf(req.Protocols),
		awaitJoin:  &waitingJoin{token: op.Token, req: req},
	}
	setTimeouts(m, req)
	g.addMember(m, req.ProtocolType)
	if g.initialDelay {
		g.initialNewJoin = true
	}
	c.maybePrepareRebalance(g, now, res)
}

func (c *Coordinator) updateMemberAndRebalance(g *group, m *member, op runtime.Op, req *kmsg.JoinGroupRequest, now time.Time, res *runtime.Result) {
	if m.awaitJoin != nil {
		// The client gave up on its earlier join and sent a new one.
		reply(res, m.awaitJoin.token, joinError(m.awaitJoin.req, m.id, kerr.RebalanceInProgress.Code))
	} else {
		g.numAwaitingJoin++
	}
	m.awaitJoin = &waitingJoin{token: op.Token, req: req}
	g.setProtocols(m, protocolsOf(req.Protocols))
	setTimeouts(m, req)
	m.clientID, m.clientHost = op.ClientID, op.ClientHost
	c.maybePrepareRebalance(g, now, res)
}

// replaceStatic gives a returning static member a new member id, fencing the
// old one (KIP-345). A stable group whose selected protocol does not change
// keeps its assignment and skips the rebalance.
func (c *Coordinator) replaceStatic(g *group, old *member, op runtime.Op, req *kmsg.JoinGroupRequest, now time.Time, res *runtime.Result) {
	if old.awaitJoin != nil {
		reply(res, old.awaitJoin.token, joinError(old.awaitJoin.req, old.id, kerr.FencedInstanceID.Code))
		old.awaitJoin = nil
		g.numAwaitingJoin--
	}
	if old.awaitSync != nil {
		reply(res, old.awaitSync.token, syncError(old.awaitSync.req, kerr.FencedInstanceID.Code))
		old.awaitSync = nil
	}
	m := &member{
		id:         c.newMemberID(*req.InstanceID),
		instanceID: req.InstanceID,
		clientID:   op.ClientID,
		clientHost: op.ClientHost,
		protocols:  old.protocols,
		assignment: old.assignment,
	}
	setTimeouts(m, req)
	delete(g.members, old.id)
	delete(g.pendingSync, old.id)
	g.members[m.id] = m
	g.order[slices.Index(g.order, old.id)] = m.id
	g.static[*req.InstanceID] = m.id
	if g.leader == old.id {
		g.leader = m.id
	}
	g.setProtocols(m, protocolsOf(req.Protocols))

	if g.state == stateStable && g.selectProtocol() == g.protocol {
		g.computeSubscribed()
		m.session = armAt(now.Add(m.sessionTimeout))
		c.writeGroup(g, res)
		resp := joinResponse(g, m, req)
		// KIP-814: a returning static leader must not reassign.
		resp.SkipAssignment = m.id == g.leader
		reply(res, op.Token, resp)
		return
	}
	m.awaitJoin = &waitingJoin{token: op.Token, req: req}
	g.numAwaitingJoin++
	c.maybePrepareRebalance(g, now, res)
}

// maybePrepareRebalance starts a join phase unless one is under way.
func (c *Coordinator) maybePrepareRebalance(g *group, now time.Time, res *runtime.Result) {
	if g.state == statePreparingRebalance {
		return
	}
	if g.state == stateCompletingRebalance {
		for _, m := range g.members {
			m.assignment = nil
			if m.awaitSync != nil {
				reply(res, m.awaitSync.token, syncError(m.awaitSync.req, kerr.RebalanceInProgress.Code))
				m.awaitSync = nil
			}
		}
	}
	g.pendingSync = nil
	g.syncDeadline = deadline{}
	wasEmpty := g.state == stateEmpty
	g.transition(statePreparingRebalance, now)
	timeout := g.rebalanceTimeout()
	if wasEmpty && c.opts.InitialRebalanceDelay > 0 {
		g.initialDelay, g.initialNewJoin = true, false
		g.initialLeft = max(timeout-c.opts.InitialRebalanceDelay, 0)
		g.joinDeadline = armAt(now.Add(min(c.opts.InitialRebalanceDelay, timeout)))
		return
	}
	g.initialDelay = false
	g.joinDeadline = armAt(now.Add(timeout))
}

// maybeCompleteJoin ends the join phase early once every member rejoined
// (never during the initial delay: its point is to wait for more members).
func (c *Coordinator) maybeCompleteJoin(g *group, now time.Time, res *runtime.Result) {
	if g.state == statePreparingRebalance && !g.initialDelay && g.allJoined() {
		c.completeJoin(g, now, res)
	}
}

// completeJoin ends the join phase: members that did not rejoin are removed,
// the generation advances, and every member gets its join response.
func (c *Coordinator) completeJoin(g *group, now time.Time, res *runtime.Result) {
	g.joinDeadline = deadline{}
	g.initialDelay, g.initialNewJoin, g.initialLeft = false, false, 0
	for _, id := range slices.Clone(g.order) {
		if m := g.members[id]; m.awaitJoin == nil {
			c.removeMember(g, m, res)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		g.computeSubscribed()
		g.transition(stateEmpty, now)
		c.writeGroup(g, res)
		return
	}
	g.protocol = g.selectProtocol()
	g.computeSubscribed()
	g.transition(stateCompletingRebalance, now)
	g.pendingSync = make(map[string]bool, len(g.members))
	for _, id := range g.order {
		m := g.members[id]
		reply(res, m.awaitJoin.token, joinResponse(g, m, m.awaitJoin.req))
		m.awaitJoin = nil
		m.session = armAt(now.Add(m.sessionTimeout))
		g.pendingSync[id] = true
	}
	g.numAwaitingJoin = 0
	g.syncDeadline = armAt(now.Add(g.rebalanceTimeout()))
}

// removeMember drops m, answering what it waits for with UNKNOWN_MEMBER_ID.
func (c *Coordinator) removeMember(g *group, m *member, res *runtime.Result) {
	if m.awaitJoin != nil {
		reply(res, m.awaitJoin.token, joinError(m.awaitJoin.req, m.id, kerr.UnknownMemberID.Code))
	}
	if m.awaitSync != nil {
		reply(res, m.awaitSync.token, syncError(m.awaitSync.req, kerr.UnknownMemberID.Code))
		m.awaitSync = nil
	}
	g.dropMember(m)
}

// afterRemoval moves the group on after members left or timed out.
func (c *Coordinator) afterRemoval(g *group, now time.Time, res *runtime.Result) {
	if g.state == stateStable || g.state == stateCompletingRebalance {
		c.maybePrepareRebalance(g, now, res)
	}
	c.maybeCompleteJoin(g, now, res)
}

func setTimeouts(m *member, req *kmsg.JoinGroupRequest) {
	m.sessionTimeout = millis(req.SessionTimeoutMillis)
	m.rebalanceTimeout = m.sessionTimeout
	if req.Version >= 1 && req.RebalanceTimeoutMillis > 0 {
		m.rebalanceTimeout = millis(req.RebalanceTimeoutMillis)
	}
}

func joinResponse(g *group, m *member, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = g.generation
	resp.ProtocolType = kmsg.StringPtr(g.protocolType)
	resp.Protocol = kmsg.StringPtr(g.protocol)
	resp.LeaderID = g.leader
	resp.MemberID = m.id
	if m.id == g.leader {
		for _, id := range g.order {
			o := g.members[id]
			meta, _ := o.metadataFor(g.protocol)
			resp.Members = append(resp.Members, kmsg.JoinGroupResponseMember{
				MemberID: o.id, InstanceID: o.instanceID, ProtocolMetadata: meta,
			})
		}
	}
	return resp
}

func joinError(req *kmsg.JoinGroupRequest, memberID string, code int16) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = code
	resp.MemberID = memberID
	resp.Generation = -1
	return resp
}
