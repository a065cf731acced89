package group

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Online migration between the protocols (KIP-848; Kafka's
// convertToConsumerGroup and convertToClassicGroup). A consumer-protocol
// member joining a classic group with members upgrades it: each classic
// member becomes a classic member of the consumer group, stable at the
// classic generation with the partitions of its last assignment, and the
// join then rebalances the group as any other. When the last
// consumer-protocol member of a group whose others are classic leaves (or
// is fenced), the group downgrades: a classic group of the remaining
// members at the group epoch, each with its target assignment, that
// rebalances at once.

// upgradeAllowed is whether a consumer-protocol join may turn classic group
// g, which has members, into a consumer group (Kafka's
// validateOnlineUpgrade): the policy allows it, its members speak the
// consumer protocol, and they fit in a consumer group.
func upgradeAllowed(policy MigrationPolicy, consumerMaxSize int, g *group) bool {
	return policy.upgrades() && g.protocolType == consumerProtocolType && len(g.members) <= consumerMaxSize
}

// downgradeOnLeave is whether consumer group cg turns classic as leaving
// goes (Kafka's validateOnlineDowngradeWithFencedMember): the policy
// allows it, leaving is the last member that is not classic, others
// remain, and they fit in a classic group.
func downgradeOnLeave(policy MigrationPolicy, classicMaxSize int, cg *consumerGroup, leaving *consumerMember) bool {
	if !policy.downgrades() || leaving.classic != nil || len(cg.members) < 2 || len(cg.members)-1 > classicMaxSize {
		return false
	}
	_, classic := cg.classicProtocolCounts()
	return classic == len(cg.members)-1
}

// downgradeOnReplace is whether consumer group cg turns classic as a
// classic static member takes over the instance of replaced (Kafka's
// validateOnlineDowngradeWithReplacedMemberId): the policy allows it,
// replaced is the last member that is not classic, and the members fit
// in a classic group.
func downgradeOnReplace(policy MigrationPolicy, classicMaxSize int, cg *consumerGroup, replaced *consumerMember) bool {
	if !policy.downgrades() || replaced.classic != nil || len(cg.members) > classicMaxSize {
		return false
	}
	_, classic := cg.classicProtocolCounts()
	return classic == len(cg.members)-1
}

// upgradedMember is a classic member as a member of the consumer group it
// becomes part of.
type upgradedMember struct {
	id       string
	meta     memberMetadata
	assigned assignor.Assignment
}

// upgradedMembers reads g's members into consumer group members, in join
// order: the subscription of the group's protocol (a member's first while
// none is selected), and its last assignment, partitions that an earlier
// member also claims left out. A member whose consumer protocol does not
// parse stops the upgrade.
func upgradedMembers(g *group, view TopicsView) ([]upgradedMember, error) {
	claimed := map[base.TopicID]map[int32]bool{}
	out := make([]upgradedMember, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		raw, ok := m.metadataFor(g.protocol)
		if !ok && len(m.protocols) > 0 {
			raw = m.protocols[0].metadata
		}
		sub, err := readSubscription(raw)
		if err != nil {
			return nil, fmt.Errorf("member %s: %v", id, err)
		}
		assigned, err := readClassicAssignment(m.assignment, view)
		if err != nil {
			return nil, fmt.Errorf("member %s: %v", id, err)
		}
		assigned = withoutHeld(assigned, func(t base.TopicID, p int32) bool { return claimed[t][p] })
		for t, ps := range assigned {
			if claimed[t] == nil {
				claimed[t] = map[int32]bool{}
			}
			for _, p := range ps {
				claimed[t][p] = true
			}
		}
		names := slices.Clone(sub.Topics)
		slices.Sort(names)
		protocols := make([]classicProtocol, len(m.protocols))
		for i, p := range m.protocols {
			protocols[i] = classicProtocol{Name: p.name, Metadata: p.metadata}
		}
		out = append(out, upgradedMember{id: id, assigned: assigned, meta: memberMetadata{
			InstanceID: m.instanceID, RackID: sub.Rack, ClientID: m.clientID, ClientHost: m.clientHost,
			SubscribedTopicNames: slices.Compact(names), RebalanceTimeoutMs: int32(m.rebalanceTimeout.Milliseconds()),
			Classic: &classicMemberMetadata{SessionTimeoutMs: int32(m.sessionTimeout.Milliseconds()), SupportedProtocols: protocols},
		}})
	}
	return out, nil
}

// upgrade turns classic group g, which has members, into a consumer group
// of them (upgradeAllowed must hold): joins and syncs waiting in a
// rebalance are told to rejoin, the classic metadata goes, and the
// consumer group's records come in Kafka's order (members, group epoch at
// the generation, targets, target epoch, assignments). Offsets stay.
func (c *Coordinator) upgrade(g *group, view TopicsView, now time.Time, res *runtime.Result) (*group, heartbeatRefusal) {
	members, err := upgradedMembers(g, view)
	if err != nil {
		return nil, heartbeatRefusal{kerr.GroupIDNotFound.Code, fmt.Sprintf("Cannot upgrade the classic group %s: %v.", g.id, err)}
	}
	for _, id := range g.order {
		m := g.members[id]
		if m.awaitJoin != nil {
			reply(res, m.awaitJoin.token, joinError(m.awaitJoin.req, m.id, kerr.RebalanceInProgress.Code))
		}
		if m.awaitSync != nil {
			reply(res, m.awaitSync.token, syncError(m.awaitSync.req, kerr.RebalanceInProgress.Code))
		}
	}
	generation := g.generation
	fresh := c.classicToConsumer(g.id, g, now, res)
	w := consumerWrite{id: g.id}
	for _, um := range members {
		w.write(memberMetadataKey(w.id, um.id), memberMetadataValue(um.meta))
	}
	w.write(consumerGroupMetadataKey(w.id), consumerGroupMetadataValue(w.groupMetadata(generation, w.cg.subscriptionHash(view), now)))
	for _, um := range members {
		w.write(targetAssignmentMemberKey(w.id, um.id), targetAssignmentMemberValue(targetAssignmentMember{TopicPartitions: topicPartitionsOf(um.assigned)}))
	}
	w.write(targetAssignmentMetadataKey(w.id), targetAssignmentMetadataValue(targetAssignmentMetadata{AssignmentEpoch: generation, AssignmentTimestampMs: now.UnixMilli()}))
	for _, um := range members {
		stable := reconcile.Member{Epoch: generation, PreviousEpoch: generation, State: reconcile.Stable, Assigned: um.assigned, PendingRevocation: assignor.Assignment{}}
		w.write(currentMemberAssignmentKey(w.id, um.id), currentMemberAssignmentValue(currentAssignmentOf(stable)))
	}
	for _, m := range w.cg.members {
		m.session = armAt(now.Add(millis(m.classic.SessionTimeoutMs)))
	}
	fresh.consumer = w.cg
	res.Records = append(res.Records, w.records...)
	return fresh, heartbeatRefusal{}
}

// fenceConsumerMember removes m from consumer group g (it left, or a timer
// of its ran out) and moves the group epoch on, unless its going
// downgrades the group.
func (c *Coordinator) fenceConsumerMember(g *group, m *consumerMember, view TopicsView, now time.Time, res *runtime.Result) {
	if downgradeOnLeave(c.opts.MigrationPolicy, c.opts.MaxSize, g.consumer, m) && c.downgrade(g, m, view, now, res) {
		return
	}
	w := consumerWrite{id: g.id, cg: g.consumer}
	w.fence(m, view, now)
	res.Records = append(res.Records, w.records...)
}

// downgrade turns consumer group g into a classic group of its members but
// leaving (downgradeOnLeave must hold) and starts its rebalance; with
// leaving nil (a static member was replaced, downgradeOnReplace), the
// group is classic already and stays stable. The consumer group's records
// go, the classic metadata comes at the group epoch with each member's
// target assignment in its own protocol version. Members without a
// protocol they all support (which joins keep from happening) stop it:
// false, and nothing changed.
func (c *Coordinator) downgrade(g *group, leaving *consumerMember, view TopicsView, now time.Time, res *runtime.Result) bool {
	cg := g.consumer
	fresh := newGroup(g.id, now)
	for _, id := range cg.memberIDs() {
		cm := cg.members[id]
		if cm == leaving {
			continue
		}
		m := &member{id: id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
			rebalanceTimeout: cm.rebalanceTimeout, sessionTimeout: millis(cm.classic.SessionTimeoutMs)}
		for _, p := range cm.classic.SupportedProtocols { // as its JoinGroup listed them: once each
			m.protocols = appendProtocol(m.protocols, p.Name, p.Metadata)
		}
		fresh.addMember(m, consumerProtocolType)
	}
	if !fresh.hasCommonProtocol() {
		return false
	}
	fresh.protocol = fresh.selectProtocol()
	fresh.generation = cg.epoch
	fresh.state = stateStable
	for _, m := range fresh.members {
		meta, _ := m.metadataFor(fresh.protocol)
		m.assignment = classicAssignment(cg.targets[m.id], view, meta)
		m.session = armAt(now.Add(m.sessionTimeout))
	}
	fresh.computeSubscribed()
	fresh.offsets, fresh.txnOffsets = g.offsets, g.txnOffsets

	c.dropConsumerState(g, res)
	c.groups[g.id] = fresh
	c.writeGroup(fresh, res)
	if leaving != nil {
		c.maybePrepareRebalance(fresh, now, res)
	}
	return true
}

// hasCommonProtocol reports whether one protocol is supported by every
// member (selectProtocol needs one).
func (g *group) hasCommonProtocol() bool {
	for _, n := range g.supported {
		if n == len(g.members) {
			return true
		}
	}
	return false
}
