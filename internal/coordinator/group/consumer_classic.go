package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/reconcile"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Classic members of a consumer group (KIP-848's online migration, Kafka's
// classicGroupJoinToConsumerGroup and its siblings). A member that speaks
// JoinGroup, SyncGroup, Heartbeat and LeaveGroup to a consumer group is a
// member like the others, its classic session timeout and protocols in its
// record. Its JoinGroup is its own rebalance, answered at once: the
// group's target assignment reconciled with what its subscription says it
// owns, at its member epoch, which is the generation it syncs with; no
// member leads, the coordinator assigns. Heartbeat tells it to rejoin
// (REBALANCE_IN_PROGRESS) when the group epoch moved past it or its
// reconciliation can go on.

// joinConsumerGroup answers a classic JoinGroup to a consumer group with
// members.
func (c *Coordinator) joinConsumerGroup(op runtime.Op, req *kmsg.JoinGroupRequest, g *group, now time.Time, res *runtime.Result) {
	cg := g.consumer
	set := c.consumerSettings(g.id)
	id, unknown := req.MemberID, req.MemberID == ""
	if unknown {
		prefix := op.ClientID
		if req.InstanceID != nil {
			prefix = *req.InstanceID
		}
		id = c.newMemberID(prefix)
	}
	fail := func(code int16) { reply(res, op.Token, joinError(req, req.MemberID, code)) }
	if _, ok := cg.members[id]; !ok && len(cg.members) >= set.maxSize {
		fail(kerr.GroupMaxSizeReached.Code)
		return
	}
	if !cg.supportsClassicProtocols(req.ProtocolType, req.Protocols) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	if unknown && req.InstanceID == nil && req.Version >= 4 {
		reply(res, op.Token, joinError(req, id, kerr.MemberIDRequired.Code))
		return
	}
	sub, err := readSubscription(req.Protocols[0].Metadata)
	if err != nil {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	var replaced *consumerMember
	if unknown && req.InstanceID != nil {
		if known, ok := cg.static[*req.InstanceID]; ok {
			replaced = cg.members[known]
		}
	}
	downgrade := replaced != nil && downgradeOnReplace(c.opts.MigrationPolicy, c.opts.MaxSize, cg, replaced)
	w := consumerWrite{id: g.id, cg: cg}
	m, code := w.classicMemberFor(req, id, unknown)
	if code != 0 {
		fail(code)
		return
	}
	view := c.opts.Topics()
	subscriptionChanged := w.updateClassicMember(m, op, req, sub)
	m = w.cg.members[m.id]
	w.advance(view, set.assignors, subscriptionChanged, now)
	err = w.reconcile(m, view, subscriptionChanged, ownedOf(sub, view), true)
	res.Records = append(res.Records, w.records...)
	if err != nil {
		fail(kerr.UnknownMemberID.Code) // a state this broker does not know: the member starts over
		return
	}

	m.session = armAt(now.Add(millis(m.classic.SessionTimeoutMs)))
	m.revocation, m.classicJoin = deadline{}, deadline{}
	m.classicSync = armAt(now.Add(m.rebalanceTimeout))
	if downgrade {
		// The last consumer-protocol member was the instance's: the
		// group is classic now, the joining member with its assignment.
		c.downgrade(g, nil, view, now, res)
	}
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.MemberID, resp.Generation = m.id, m.Epoch
	resp.ProtocolType, resp.Protocol = kmsg.StringPtr(consumerProtocolType), kmsg.StringPtr(req.Protocols[0].Name)
	reply(res, op.Token, resp)
}

// classicMemberFor is the member a classic JoinGroup speaks for (Kafka's
// getOrMaybeSubscribe*ConsumerGroupMember with the classic protocol): a
// static member without a member id takes its instance over (the member
// that had it is replaced, whatever its protocol), one with a member id
// must be the instance's; a dynamic member is created if it is new.
func (w *consumerWrite) classicMemberFor(req *kmsg.JoinGroupRequest, id string, unknown bool) (*consumerMember, int16) {
	if req.InstanceID == nil {
		if m, ok := w.cg.members[id]; ok {
			return m, 0
		}
		return newConsumerMember(id), 0
	}
	known, ok := w.cg.static[*req.InstanceID]
	switch {
	case unknown && !ok:
		return newConsumerMember(id), 0
	case unknown:
		return w.replaceStatic(w.cg.members[known], id, 0), 0
	case !ok:
		return nil, kerr.UnknownMemberID.Code
	case known != id:
		return nil, kerr.FencedInstanceID.Code
	}
	return w.cg.members[id], 0
}

// updateClassicMember writes m's metadata as a classic JoinGroup gives it
// (m may be new) and reports whether its subscription changed.
func (w *consumerWrite) updateClassicMember(m *consumerMember, op runtime.Op, req *kmsg.JoinGroupRequest, sub *kmsg.ConsumerMemberMetadata) bool {
	meta := m.requestedMetadata(op, req.InstanceID, sub.Rack)
	meta.RebalanceTimeoutMs = req.SessionTimeoutMillis
	if req.Version >= 1 && req.RebalanceTimeoutMillis > 0 {
		meta.RebalanceTimeoutMs = req.RebalanceTimeoutMillis
	}
	names := slices.Clone(sub.Topics)
	slices.Sort(names)
	names = slices.Compact(names)
	changed := !slices.Equal(names, meta.SubscribedTopicNames)
	meta.SubscribedTopicNames = names
	meta.Classic = &classicMemberMetadata{SessionTimeoutMs: req.SessionTimeoutMillis, SupportedProtocols: classicProtocolsOf(req.Protocols)}
	w.putMember(m, meta)
	return changed
}

// classicMember is Kafka's validateConsumerGroupMember for the classic
// requests after JoinGroup: the member must exist (by instance id for a
// static one, whose member id must match) and use the classic protocol.
func (cg *consumerGroup) classicMember(memberID string, instanceID *string) (*consumerMember, int16) {
	id := memberID
	if instanceID != nil {
		known, ok := cg.static[*instanceID]
		switch {
		case !ok:
			return nil, kerr.UnknownMemberID.Code
		case known != memberID:
			return nil, kerr.FencedInstanceID.Code
		}
		id = known
	}
	m, ok := cg.members[id]
	if !ok || m.classic == nil || len(m.classic.SupportedProtocols) == 0 {
		return nil, kerr.UnknownMemberID.Code // a record without protocols: it must join again
	}
	return m, 0
}

// syncConsumerGroup answers a classic SyncGroup to a consumer group with
// the member's assignment; the leader's assignments, if any, are ignored.
func (c *Coordinator) syncConsumerGroup(op runtime.Op, req *kmsg.SyncGroupRequest, g *group, now time.Time, res *runtime.Result) {
	cg := g.consumer
	m, code := cg.classicMember(req.MemberID, req.InstanceID)
	switch {
	case code != 0:
	case req.Generation != m.Epoch:
		code = kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != consumerProtocolType,
		req.Protocol != nil && *req.Protocol != m.classic.SupportedProtocols[0].Name:
		code = kerr.InconsistentGroupProtocol.Code
	case cg.epoch > m.Epoch && m.State != reconcile.UnrevokedPartitions:
		// A rebalance began since its join; unless it still has to revoke
		// (its next join will), it rejoins first.
		m.armClassicJoin(now)
		code = kerr.RebalanceInProgress.Code
	}
	if code != 0 {
		reply(res, op.Token, syncError(req, code))
		return
	}
	m.classicSync = deadline{}
	m.session = armAt(now.Add(millis(m.classic.SessionTimeoutMs)))
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ProtocolType, resp.Protocol = req.ProtocolType, req.Protocol
	resp.MemberAssignment = classicAssignment(m.Assigned, c.opts.Topics(), m.classic.SupportedProtocols[0].Metadata)
	reply(res, op.Token, resp)
}

// heartbeatConsumerGroup is a classic Heartbeat to a consumer group: it
// keeps the member's session, and tells it to rejoin when the group epoch
// moved past it, it has partitions to revoke, or the partitions it waits
// for are free.
func (cg *consumerGroup) classicHeartbeat(req *kmsg.HeartbeatRequest, now time.Time) int16 {
	m, code := cg.classicMember(req.MemberID, req.InstanceID)
	switch {
	case code != 0:
		return code
	case req.Generation != m.Epoch:
		return kerr.IllegalGeneration.Code
	}
	m.session = armAt(now.Add(millis(m.classic.SessionTimeoutMs)))
	if m.Epoch < cg.epoch || m.State == reconcile.UnrevokedPartitions ||
		m.State == reconcile.UnreleasedPartitions && !cg.waitingOnUnreleased(m) {
		m.armClassicJoin(now)
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// armClassicJoin starts the time m has to rejoin, unless it runs already.
func (m *consumerMember) armClassicJoin(now time.Time) {
	if !m.classicJoin.armed {
		m.classicJoin = armAt(now.Add(m.rebalanceTimeout))
	}
}

// waitingOnUnreleased reports whether a partition of m's target that it
// does not have yet is still held by another member.
func (cg *consumerGroup) waitingOnUnreleased(m *consumerMember) bool {
	for t, ps := range cg.targets[m.id] {
		for _, p := range ps {
			if !m.Assigned.Contains(t, p) && cg.partitionEpoch(t, p) != -1 {
				return true
			}
		}
	}
	return false
}

// leaveConsumerGroup removes classic members of a consumer group (a
// consumer-protocol member leaves by its heartbeat: UNKNOWN_MEMBER_ID) and
// moves the group epoch on once if any left.
func (c *Coordinator) leaveConsumerGroup(g *group, leaving []kmsg.LeaveGroupRequestMember, now time.Time, res *runtime.Result) []kmsg.LeaveGroupResponseMember {
	w := consumerWrite{id: g.id, cg: g.consumer}
	var out []kmsg.LeaveGroupResponseMember
	for _, l := range leaving {
		r := kmsg.LeaveGroupResponseMember{MemberID: l.MemberID, InstanceID: l.InstanceID}
		id := l.MemberID
		if l.InstanceID != nil {
			if known, ok := w.cg.static[*l.InstanceID]; ok && id == "" {
				id = known // an admin removes a static member by its instance id
			}
		}
		m, code := w.cg.classicMember(id, l.InstanceID)
		if code == 0 {
			r.MemberID = m.id
			w.removeMember(m)
		}
		r.ErrorCode = code
		out = append(out, r)
	}
	if len(w.records) > 0 {
		view := c.opts.Topics()
		w.write(consumerGroupMetadataKey(w.id), consumerGroupMetadataValue(w.groupMetadata(w.cg.epoch+1, w.cg.subscriptionHash(view), now)))
		res.Records = append(res.Records, w.records...)
	}
	return out
}

// supportsClassicProtocols is whether a classic member offering ps may
// join: the consumer protocol type, and, if the group has classic members,
// a protocol they all support (Kafka's supportsClassicProtocols).
func (cg *consumerGroup) supportsClassicProtocols(protocolType string, ps []kmsg.JoinGroupRequestProtocol) bool {
	if protocolType != consumerProtocolType || len(ps) == 0 {
		return false
	}
	counts, classic := cg.classicProtocolCounts()
	if classic == 0 {
		return true
	}
	for _, p := range ps {
		if counts[p.Name] == classic {
			return true
		}
	}
	return false
}

// classicProtocolCounts counts, for each protocol name, the classic
// members that support it, and the classic members.
func (cg *consumerGroup) classicProtocolCounts() (map[string]int, int) {
	counts, classic := map[string]int{}, 0
	for _, m := range cg.members {
		if m.classic == nil {
			continue
		}
		classic++
		seen := map[string]bool{}
		for _, p := range m.classic.SupportedProtocols {
			if !seen[p.Name] {
				seen[p.Name] = true
				counts[p.Name]++
			}
		}
	}
	return counts, classic
}
