package group

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// MaxVersions are the highest request versions the coordinator implements,
// by API key. OffsetCommit and OffsetFetch v10 name topics by id; the api
// layer resolves them to names and forwards such requests at v9.
var MaxVersions = map[int16]int16{
	kmsg.OffsetCommit.Int16():    9,
	kmsg.OffsetFetch.Int16():     9,
	kmsg.JoinGroup.Int16():       9,
	kmsg.Heartbeat.Int16():       4,
	kmsg.LeaveGroup.Int16():      5,
	kmsg.SyncGroup.Int16():       5,
	kmsg.DescribeGroups.Int16():  6,
	kmsg.ListGroups.Int16():      5,
	kmsg.DeleteGroups.Int16():    3,
	kmsg.OffsetDelete.Int16():    0,
	kmsg.TxnOffsetCommit.Int16(): 4,

	kmsg.ConsumerGroupHeartbeat.Int16(): 1,
	kmsg.ConsumerGroupDescribe.Int16():  1,

	kmsg.ShareGroupHeartbeat.Int16(): 1,
	kmsg.ShareGroupDescribe.Int16():  1,

	kmsg.DescribeShareGroupOffsets.Int16(): 1,
	kmsg.AlterShareGroupOffsets.Int16():    0,
	kmsg.DeleteShareGroupOffsets.Int16():   0,
}

// Coordinator holds the groups of one __consumer_offsets partition: classic
// groups and consumer-protocol (KIP-848) groups.
// It implements runtime.Shard. Not safe for concurrent use.
type Coordinator struct {
	opts   Options
	groups map[string]*group
	// shares are the share groups (KIP-932): a group id names a share
	// group or a classic/consumer group, never both.
	shares      map[string]*shareGroup
	expiryCheck deadline  // next offsets-expiry scan; armed by the first Tick
	timers      timerScan // the running Tick's pass over the timers
	// producers are the transactional producers that wrote offsets or
	// markers here: their fencing epochs and the groups where they hold
	// pending offsets (txn_offsets.go).
	producers map[int64]*producer
	// lastCensus is the census last handed to Options.OnCensus
	// (censusSent once one was).
	lastCensus []GroupCount
	censusSent bool
	// offsetOrder counts the offset-commit records (plain and
	// transactional) applied so far, in log order: Handle and Replay
	// advance it alike, so entries compare by it the same way live and
	// after a reload.
	offsetOrder uint64
	// topicsSeen are the topics the last look for deleted ones saw
	// (deleted_topics.go); nil before the first. offsetTopics are the
	// topics some group has (or had, until that topic's deletion is
	// seen) a committed or pending offset of.
	topicsSeen   TopicsView
	offsetTopics map[string]struct{}
}

var (
	_ runtime.Shard       = (*Coordinator)(nil)
	_ runtime.TxnReplayer = (*Coordinator)(nil)
)

// New returns an empty coordinator.
func New(opts Options) (*Coordinator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Coordinator{opts: opts, groups: map[string]*group{}, shares: map[string]*shareGroup{}, producers: map[int64]*producer{}}, nil
}

// Handle applies one request, or one event (TxnCompleted). Requests of
// other types than those in MaxVersions, and events of other types, are a
// programmer error.
func (c *Coordinator) Handle(op runtime.Op, now time.Time) runtime.Result {
	var res runtime.Result
	if op.Event != nil {
		c.handleEvent(op, now, &res)
		return res
	}
	if c.refuseShareGroupID(op, &res) {
		return res
	}
	txn, _ := op.Req.(*kmsg.TxnOffsetCommitRequest)
	if !c.applyTopicDeletions(c.opts.Topics(), txn != nil, &res) {
		reply(&res, op.Token, txnCommitError(txn, kerr.CoordinatorLoadInProgress.Code))
		return res
	}
	switch req := op.Req.(type) {
	case *kmsg.JoinGroupRequest:
		c.joinGroup(op, req, now, &res)
	case *kmsg.SyncGroupRequest:
		c.syncGroup(op, req, now, &res)
	case *kmsg.HeartbeatRequest:
		c.heartbeat(op, req, now, &res)
	case *kmsg.LeaveGroupRequest:
		c.leaveGroup(op, req, now, &res)
	case *kmsg.OffsetCommitRequest:
		c.offsetCommit(op, req, now, &res)
	case *kmsg.OffsetFetchRequest:
		reply(&res, op.Token, c.offsetFetch(req))
	case *kmsg.OffsetDeleteRequest:
		c.offsetDelete(op, req, &res)
	case *kmsg.DescribeGroupsRequest:
		reply(&res, op.Token, c.describeGroups(req))
	case *kmsg.ListGroupsRequest:
		reply(&res, op.Token, c.listGroups(req))
	case *kmsg.DeleteGroupsRequest:
		c.deleteGroups(op, req, &res)
	case *kmsg.TxnOffsetCommitRequest:
		c.txnOffsetCommit(op, req, now, &res)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		c.consumerGroupHeartbeat(op, req, now, &res)
	case *kmsg.ConsumerGroupDescribeRequest:
		reply(&res, op.Token, c.consumerGroupDescribe(req))
	case *kmsg.ShareGroupHeartbeatRequest:
		c.shareGroupHeartbeat(op, req, now, &res)
	case *kmsg.ShareGroupDescribeRequest:
		reply(&res, op.Token, c.shareGroupDescribe(req))
	case *kmsg.DescribeShareGroupOffsetsRequest:
		reply(&res, op.Token, c.describeShareGroupOffsets(req))
	case *kmsg.AlterShareGroupOffsetsRequest:
		c.alterShareGroupOffsets(op, req, now, &res)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		c.deleteShareGroupOffsets(op, req, &res)
	default:
		panic(fmt.Sprintf("group: Handle of unserved request %T", op.Req))
	}
	return res
}

// Tick drops the offsets and share state of deleted topics
// (deleted_topics.go) and fires the timers that are due at now:
// pending-member, session, sync and join-phase timeouts, consumer-protocol
// members' session and revocation timeouts, share members' session
// timeouts, idle producers' expiry, and (every retention check interval)
// offset expiry; then it publishes the group census
// (Options.OnCensus) if it changed. The first Tick after Replay arms the
// session timers of the loaded members and the expiry of the loaded idle
// producers.
func (c *Coordinator) Tick(now time.Time) runtime.Result {
	var res runtime.Result
	c.timers = timerScan{now: now}
	view := c.opts.Topics()
	c.applyTopicDeletions(view, false, &res)
	for _, id := range slices.Sorted(maps.Keys(c.groups)) {
		g := c.groups[id]
		if g.consumer == nil {
			c.tickGroup(g, now, &res)
			continue
		}
		c.tickConsumer(g, view, now, &res)
	}
	for _, id := range slices.Sorted(maps.Keys(c.shares)) {
		c.tickShare(id, c.shares[id], now, &res)
	}
	c.expireProducers(now)
	if !c.expiryCheck.armed {
		c.expiryCheck = armAt(now.Add(c.opts.OffsetsRetentionCheckInterval))
	} else if c.timers.due(c.expiryCheck) {
		c.expireOffsets(now, &res)
		c.expiryCheck = armAt(now.Add(c.opts.OffsetsRetentionCheckInterval))
	}
	c.timers.due(c.expiryCheck) // the next check may be the soonest timer
	c.publishCensus()
	res.WakeAt = c.timers.soonest
	return res
}

func (c *Coordinator) tickGroup(g *group, now time.Time, res *runtime.Result) {
	for id, d := range g.pending {
		if c.timers.due(d) {
			delete(g.pending, id)
		}
	}
	removed := false
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		if m.awaitJoin != nil || m.awaitSync != nil {
			continue
		}
		if !m.session.armed {
			m.session = armAt(now.Add(m.sessionTimeout))
			continue
		}
		if c.timers.due(m.session) {
			c.removeMember(g, m, res)
			removed = true
		}
	}
	if c.timers.due(g.syncDeadline) && (g.state == stateCompletingRebalance || g.state == stateStable) {
		g.syncDeadline = deadline{}
		for _, id := range slices.Clone(g.order) {
			if g.pendingSync[id] {
				c.removeMember(g, g.members[id], res)
				removed = true
			}
		}
	}
	if removed {
		c.afterRemoval(g, now, res)
	}
	if g.state == statePreparingRebalance && c.timers.due(g.joinDeadline) {
		if g.initialDelay && g.initialNewJoin && g.initialLeft > 0 {
			d := min(c.opts.InitialRebalanceDelay, g.initialLeft)
			g.initialLeft -= d
			g.initialNewJoin = false
			g.joinDeadline = armAt(now.Add(d))
		} else {
			c.completeJoin(g, now, res)
		}
	}
	c.maybeCompleteJoin(g, now, res)
	c.dropIfGarbage(g)
}

// newMemberID is Kafka's form: the client id (or instance id) and a UUID.
func (c *Coordinator) newMemberID(prefix string) string {
	var b [16]byte
	c.readRandom(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (c *Coordinator) readRandom(b []byte) {
	if _, err := io.ReadFull(c.opts.Random, b); err != nil {
		panic(fmt.Sprintf("group: Options.Random failed: %v", err))
	}
}

func (c *Coordinator) dropIfGarbage(g *group) {
	if g.garbage() {
		delete(c.groups, g.id)
	}
}

func reply(res *runtime.Result, token uint64, resp kmsg.Response) {
	res.Replies = append(res.Replies, runtime.Reply{Token: token, Resp: resp})
}

func millis(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }
