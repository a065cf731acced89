package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// validMember is Kafka's validateMember: a static member must be the one its
// instance id maps to, and the member must exist.
func validMember(g *group, memberID string, instanceID *string) (*member, int16) {
	if instanceID != nil {
		known, ok := g.static[*instanceID]
		if !ok {
			return nil, kerr.UnknownMemberID.Code
		}
		if known != memberID {
			return nil, kerr.FencedInstanceID.Code
		}
	}
	m, ok := g.members[memberID]
	if !ok {
		return nil, kerr.UnknownMemberID.Code
	}
	return m, 0
}

func (c *Coordinator) syncGroup(op runtime.Op, req *kmsg.SyncGroupRequest, now time.Time, res *runtime.Result) {
	fail := func(code int16) { reply(res, op.Token, syncError(req, code)) }
	g, ok := c.groups[req.Group]
	if !ok {
		fail(kerr.UnknownMemberID.Code)
		return
	}
	if g.consumer != nil {
		c.syncConsumerGroup(op, req, g, now, res)
		return
	}
	m, code := validMember(g, req.MemberID, req.InstanceID)
	switch {
	case code != 0:
		fail(code)
		return
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration.Code)
		return
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	switch g.state {
	case statePreparingRebalance:
		fail(kerr.RebalanceInProgress.Code)
	case stateCompletingRebalance:
		if m.awaitSync != nil {
			reply(res, m.awaitSync.token, syncError(m.awaitSync.req, kerr.RebalanceInProgress.Code))
		}
		m.awaitSync = &waitingSync{token: op.Token, req: req}
		delete(g.pendingSync, m.id)
		if m.id == g.leader {
			c.completeSync(g, req, now, res)
		}
	case stateStable:
		delete(g.pendingSync, m.id)
		m.session = armAt(now.Add(m.sessionTimeout))
		reply(res, op.Token, syncResponse(g, m, req))
	default:
		fail(kerr.UnknownMemberID.Code)
	}
}

// completeSync stores the leader's assignment, persists the group and
// answers every member waiting in SyncGroup. Members that sync later get
// their assignment at once; those that never do are removed when the sync
// deadline passes.
func (c *Coordinator) completeSync(g *group, leaderReq *kmsg.SyncGroupRequest, now time.Time, res *runtime.Result) {
	for _, m := range g.members {
		m.assignment = nil
	}
	for _, a := range leaderReq.GroupAssignment {
		if m, ok := g.members[a.MemberID]; ok {
			m.assignment = a.MemberAssignment
		}
	}
	g.transition(stateStable, now)
	c.writeGroup(g, res)
	for _, id := range g.order {
		m := g.members[id]
		if m.awaitSync == nil {
			continue
		}
		reply(res, m.awaitSync.token, syncResponse(g, m, m.awaitSync.req))
		m.awaitSync = nil
		m.session = armAt(now.Add(m.sessionTimeout))
	}
}

func syncResponse(g *group, m *member, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ProtocolType = kmsg.StringPtr(g.protocolType)
	resp.Protocol = kmsg.StringPtr(g.protocol)
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}

func syncError(req *kmsg.SyncGroupRequest, code int16) *kmsg.SyncGroupResponse {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ErrorCode = code
	resp.MemberAssignment = []byte{}
	return resp
}

func (c *Coordinator) heartbeat(op runtime.Op, req *kmsg.HeartbeatRequest, now time.Time, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.heartbeatCode(req, now)
	reply(res, op.Token, resp)
}

func (c *Coordinator) heartbeatCode(req *kmsg.HeartbeatRequest, now time.Time) int16 {
	g, ok := c.groups[req.Group]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	if g.consumer != nil {
		return g.consumer.classicHeartbeat(req, now)
	}
	m, code := validMember(g, req.MemberID, req.InstanceID)
	if code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	switch g.state {
	case statePreparingRebalance:
		m.session = armAt(now.Add(m.sessionTimeout))
		return kerr.RebalanceInProgress.Code
	case stateCompletingRebalance, stateStable:
		m.session = armAt(now.Add(m.sessionTimeout))
		return 0
	}
	return kerr.UnknownMemberID.Code
}

func (c *Coordinator) leaveGroup(op runtime.Op, req *kmsg.LeaveGroupRequest, now time.Time, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	defer reply(res, op.Token, resp)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	g, ok := c.groups[req.Group]
	if !ok {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return
	}
	if g.consumer != nil {
		resp.Members = c.leaveConsumerGroup(g, leaving, now, res)
		if req.Version < 3 {
			resp.ErrorCode, resp.Members = resp.Members[0].ErrorCode, nil
		}
		return
	}
	removed := false
	for _, l := range leaving {
		code := c.leaveOne(g, l, res)
		removed = removed || code == 0
		resp.Members = append(resp.Members, kmsg.LeaveGroupResponseMember{
			MemberID: l.MemberID, InstanceID: l.InstanceID, ErrorCode: code,
		})
	}
	if req.Version < 3 {
		resp.ErrorCode = resp.Members[0].ErrorCode
		resp.Members = nil
	}
	if removed {
		c.afterRemoval(g, now, res)
	}
	c.dropIfGarbage(g)
}

func (c *Coordinator) leaveOne(g *group, l kmsg.LeaveGroupRequestMember, res *runtime.Result) int16 {
	id := l.MemberID
	if l.InstanceID != nil {
		known, ok := g.static[*l.InstanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if id != "" && id != known {
			return kerr.FencedInstanceID.Code
		}
		id = known
	}
	if _, ok := g.pending[id]; ok {
		delete(g.pending, id)
		return 0
	}
	m, ok := g.members[id]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	c.removeMember(g, m, res)
	return 0
}
