package group

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// consumerGroupType is the ListGroups v5+ type of a consumer-protocol
// group; its protocol type is consumerProtocolType.
const consumerGroupType = "consumer"

// consumerSettings are the group.consumer.* settings of group id: the
// broker's, or the group's own session and heartbeat interval.
func (c *Coordinator) consumerSettings(id string) consumerSettings {
	set := consumerSettings{
		sessionTimeout:    c.opts.ConsumerSessionTimeout,
		heartbeatInterval: c.opts.ConsumerHeartbeatInterval,
		maxSize:           c.opts.ConsumerMaxSize,
		assignors:         c.opts.ConsumerAssignors,
	}
	if c.opts.ConsumerGroupSettings != nil {
		if session, heartbeat, ok := c.opts.ConsumerGroupSettings(id); ok {
			set.sessionTimeout, set.heartbeatInterval = session, heartbeat
		}
	}
	return set
}

// consumerGroupHeartbeat is Kafka's consumerGroupHeartbeat: a member of a
// consumer group joins, heartbeats or leaves. A join creates the group,
// converts an empty classic group (its metadata tombstone first; its
// offsets stay), or upgrades one with members (consumer_migrate.go); a
// leave may downgrade the group.
func (c *Coordinator) consumerGroupHeartbeat(op runtime.Op, req *kmsg.ConsumerGroupHeartbeatRequest, now time.Time, res *runtime.Result) {
	g := c.groups[req.Group]
	refuse := func(refusal heartbeatRefusal) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = refusal.code, &refusal.message
		reply(res, op.Token, resp)
	}
	refusal := validateHeartbeat(req, c.opts.ConsumerAssignors)
	if refusal.code == 0 {
		upgradable := g != nil && upgradeAllowed(c.opts.MigrationPolicy, c.opts.ConsumerMaxSize, g)
		refusal = heartbeatTarget(g, req, upgradable)
	}
	if refusal.code != 0 {
		refuse(refusal)
		return
	}
	view := c.opts.Topics()
	switch {
	case g != nil && g.consumer == nil && len(g.members) > 0:
		if g, refusal = c.upgrade(g, view, now, res); refusal.code != 0 {
			refuse(refusal)
			return
		}
	case g == nil || g.consumer == nil:
		g = c.classicToConsumer(req.Group, g, now, res)
	}
	if op.TopicVisible != nil {
		view = visibleTopics{view, op.TopicVisible}
	}
	w := consumerWrite{id: req.Group, cg: g.consumer}
	var resp *kmsg.ConsumerGroupHeartbeatResponse
	var leaving *consumerMember
	if req.MemberEpoch < 0 {
		resp, leaving = w.leave(req)
	} else {
		resp = w.heartbeat(op, req, view, c.consumerSettings(req.Group), now, c.newConsumerMemberID)
	}
	if len(w.records) > 0 {
		g.consumer = w.cg
		res.Records = append(res.Records, w.records...)
	}
	if leaving != nil {
		c.fenceConsumerMember(g, leaving, view, now, res)
	}
	c.dropIfGarbage(c.groups[req.Group])
	reply(res, op.Token, resp)
}

// heartbeatTarget is whether a heartbeat may go to g (nil: no such group),
// as Kafka's getOrMaybeCreateConsumerGroup decides: a consumer group
// takes it; a join may create the group, convert an empty classic one, or
// upgrade one with members if upgradable.
func heartbeatTarget(g *group, req *kmsg.ConsumerGroupHeartbeatRequest, upgradable bool) heartbeatRefusal {
	switch {
	case g != nil && g.consumer != nil:
		return heartbeatRefusal{}
	case req.MemberEpoch != joinEpoch && g != nil && !g.classicEmpty():
		return heartbeatRefusal{kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s is not a consumer group.", req.Group)}
	case req.MemberEpoch != joinEpoch:
		return heartbeatRefusal{kerr.GroupIDNotFound.Code, fmt.Sprintf("Consumer group %s not found.", req.Group)}
	case g != nil && len(g.members) > 0 && !upgradable:
		return heartbeatRefusal{kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s is not a consumer group.", req.Group)}
	}
	return heartbeatRefusal{}
}

// classicToConsumer readies group id (g, nil when it does not exist) for
// its first consumer-protocol member: an empty classic group's metadata is
// deleted; its offsets stay. The group has no consumer state until records
// give it some.
func (c *Coordinator) classicToConsumer(id string, g *group, now time.Time, res *runtime.Result) *group {
	fresh := newGroup(id, now)
	if g != nil {
		if g.persisted != nil {
			c.writeGroupTombstone(g, res)
		}
		fresh.offsets, fresh.txnOffsets = g.offsets, g.txnOffsets
	}
	c.groups[id] = fresh
	return fresh
}

// dropConsumerState writes the tombstones of a consumer group's records
// (it must have no members): what remains is an empty classic group with
// the offsets.
func (c *Coordinator) dropConsumerState(g *group, res *runtime.Result) {
	w := consumerWrite{id: g.id, cg: g.consumer}
	w.deleteGroup()
	res.Records = append(res.Records, w.records...)
	g.consumer = nil
}

// tickConsumer fences the members of a consumer group whose session,
// revocation, rejoin or sync time ran out (the fence may downgrade the
// group, whose classic timers then take over); the group's settings are
// read only for members that need a session timer.
func (c *Coordinator) tickConsumer(g *group, view TopicsView, now time.Time, res *runtime.Result) {
	for _, m := range g.consumer.due(func() time.Duration { return c.consumerSettings(g.id).sessionTimeout }, &c.timers) {
		if c.groups[g.id] != g || g.consumer == nil {
			return // downgraded: the classic group's timers take over
		}
		c.fenceConsumerMember(g, m, view, now, res)
	}
}

// consumerGroupDescribe answers ConsumerGroupDescribe for the groups of
// this partition; a group that is missing or classic is
// GROUP_ID_NOT_FOUND.
func (c *Coordinator) consumerGroupDescribe(req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	view := c.opts.Topics()
	for _, id := range req.Groups {
		g := c.groups[id]
		if g != nil && g.consumer != nil {
			resp.Groups = append(resp.Groups, g.consumer.describe(id, view, c.opts.ConsumerAssignors))
			continue
		}
		d := kmsg.NewConsumerGroupDescribeResponseGroup()
		d.Group = id
		switch {
		case id == "":
			d.ErrorCode = kerr.InvalidGroupID.Code
		case g == nil:
			d.ErrorCode, d.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr(fmt.Sprintf("Group %s not found.", id))
		default:
			d.ErrorCode, d.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr(fmt.Sprintf("Group %s is not a consumer group.", id))
		}
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

// newConsumerMemberID names a member that a ConsumerGroupHeartbeat v0
// left unnamed, as Kafka does: a random UUID in its base64 form.
func (c *Coordinator) newConsumerMemberID() string {
	var b [16]byte
	c.readRandom(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// replayConsumerRecord applies a consumer group record. One for a group
// that is classic (with members or persisted metadata) is a broken log.
func (c *Coordinator) replayConsumerRecord(key, value []byte) error {
	k, err := readConsumerKey(key)
	if err != nil {
		return err
	}
	if isShareKeyType(k.Type) {
		return c.replayShareRecord(k, value)
	}
	if c.shares[k.Group] != nil {
		return fmt.Errorf("%w: a consumer group record for share group %q", ErrBadRecord, k.Group)
	}
	g, ok := c.groups[k.Group]
	if ok && g.consumer == nil && (!g.classicEmpty() || g.persisted != nil) {
		return fmt.Errorf("%w: a consumer group record for classic group %q", ErrBadRecord, k.Group)
	}
	var before *consumerGroup
	if ok {
		before = g.consumer
	}
	cg, err := replayConsumer(before, k, value)
	if err != nil {
		return err
	}
	if !ok {
		if cg == nil {
			return nil // a tombstone for nothing
		}
		g = c.loadedGroup(k.Group)
	}
	g.consumer = cg
	c.dropIfGarbage(g)
	return nil
}

// visibleTopics is a view whose regular expressions match only the topics
// the requesting client may see, as Kafka resolves them with the
// authorization of the heartbeat that refreshes them.
type visibleTopics struct {
	TopicsView
	visible func(topic string) bool
}

func (v visibleTopics) Names() []string {
	var names []string
	for _, name := range v.TopicsView.Names() {
		if v.visible(name) {
			names = append(names, name)
		}
	}
	return names
}
