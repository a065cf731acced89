package group

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
)

// consumerGroup is a KIP-848 ("consumer" protocol) group, as Kafka's
// ConsumerGroup: its state changes only by replaying its records
// (consumer_replay.go), so a coordinator that loads the records has the
// group that wrote them.
//
// Invariants:
//   - partitionEpochs[t][p] is the epoch of the one member that has
//     partition p of topic t assigned or pending revocation; a member's
//     partitions are there exactly while its assignment is.
//   - static maps the instance id of each static member to its member id.
//   - targets holds members' target assignments; a member's target goes
//     before the member itself (Kafka's tombstone order).
type consumerGroup struct {
	epoch           int32
	metadataHash    int64
	created         time.Time
	hasCreated      bool
	assignmentEpoch int32
	members         map[string]*consumerMember
	targets         map[string]assignor.Assignment
	partitionEpochs map[base.TopicID]map[int32]int32
	static          map[string]string
	regexes         map[string]regularExpression
	// subscribers counts the members subscribing to each topic name, and
	// regexUsers those subscribing with each regular expression (Kafka's
	// subscribedTopicNames and subscribedRegularExpressions): derived from
	// the members' metadata, so that a heartbeat need not visit every
	// member.
	subscribers map[string]int
	regexUsers  map[string]int
	// regexChecked is the view version each regular expression was last
	// resolved against, in memory only: after a load, each is resolved
	// again at the next heartbeat.
	regexChecked map[string]int64
}

// consumerMember is one member of a consumer group: what it subscribes
// with (its ConsumerGroupMemberMetadata) and where its reconciliation is
// (its ConsumerGroupCurrentMemberAssignment).
type consumerMember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	topics           []string
	regex            *string
	rebalanceTimeout time.Duration
	serverAssignor   *string
	classic          *classicMemberMetadata
	reconcile.Member
	// assignedSince is, for each partition the member holds (assigned or
	// pending revocation), the member epoch at which it got it (KIP-1251's
	// assignment epoch), derived from its assignment records in log order.
	// Not persisted: after the log cleaner kept only a member's last
	// record, its partitions count from that record's epoch, which only
	// refuses more commits at older epochs, never fewer.
	assignedSince map[base.TopicID]map[int32]int32
	// session ends the member unless it heartbeats first
	// (group.consumer.session.timeout.ms); revocation, while it is in
	// UnrevokedPartitions, unless it revokes first (its rebalance
	// timeout). Neither is persisted: the first Tick after a load arms
	// the sessions.
	session    deadline
	revocation deadline
	// A classic member has no revocation timer but two of Kafka's: join,
	// armed when it is told to rejoin (REBALANCE_IN_PROGRESS), and sync,
	// armed by its JoinGroup; each ends the member after its rebalance
	// timeout unless it rejoins, or syncs, first. Not persisted either.
	classicJoin deadline
	classicSync deadline
}

// equal reports whether two member metadata values say the same.
func (a memberMetadata) equal(b memberMetadata) bool {
	return equalPtr(a.InstanceID, b.InstanceID) && equalPtr(a.RackID, b.RackID) && a.ClientID == b.ClientID &&
		a.ClientHost == b.ClientHost && slices.Equal(a.SubscribedTopicNames, b.SubscribedTopicNames) &&
		equalPtr(a.SubscribedTopicRegex, b.SubscribedTopicRegex) && a.RebalanceTimeoutMs == b.RebalanceTimeoutMs &&
		equalPtr(a.ServerAssignor, b.ServerAssignor) && reflect.DeepEqual(a.Classic, b.Classic)
}

// metadata is m's ConsumerGroupMemberMetadata.
func (m *consumerMember) metadata() memberMetadata {
	return memberMetadata{InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
		SubscribedTopicNames: m.topics, SubscribedTopicRegex: m.regex, RebalanceTimeoutMs: int32(m.rebalanceTimeout.Milliseconds()),
		ServerAssignor: m.serverAssignor, Classic: m.classic}
}

// leaveEpoch is the epoch of a member that left (Kafka's
// LEAVE_GROUP_MEMBER_EPOCH): its assignment is gone.
const leaveEpoch = -1

func newConsumerGroup() *consumerGroup {
	return &consumerGroup{
		members:         map[string]*consumerMember{},
		targets:         map[string]assignor.Assignment{},
		partitionEpochs: map[base.TopicID]map[int32]int32{},
		static:          map[string]string{},
		regexes:         map[string]regularExpression{},
		regexChecked:    map[string]int64{},
		subscribers:     map[string]int{},
		regexUsers:      map[string]int{},
	}
}

// consumerGroupState is a consumer group's state, as ListGroups and
// ConsumerGroupDescribe name it.
type consumerGroupState string

const (
	consumerEmpty       consumerGroupState = "Empty"
	consumerAssigning   consumerGroupState = "Assigning"
	consumerReconciling consumerGroupState = "Reconciling"
	consumerStable      consumerGroupState = "Stable"
)

// state derives the group's state, as Kafka does: Empty without members,
// Assigning while the target assignment is behind the group epoch,
// Reconciling while a member is not stable at the target epoch.
func (cg *consumerGroup) state() consumerGroupState {
	switch {
	case len(cg.members) == 0:
		return consumerEmpty
	case cg.epoch > cg.assignmentEpoch:
		return consumerAssigning
	}
	for _, m := range cg.members {
		if m.State != reconcile.Stable || m.Epoch != cg.assignmentEpoch {
			return consumerReconciling
		}
	}
	return consumerStable
}

// partitionEpoch is the epoch of the member holding partition p of topic
// t, -1 when none does (reconcile.Input.PartitionEpoch).
func (cg *consumerGroup) partitionEpoch(t base.TopicID, p int32) int32 {
	if e, ok := cg.partitionEpochs[t][p]; ok {
		return e
	}
	return -1
}

// setAssignment replaces m's reconciliation state with next, moving its
// partitions' epochs. A partition that another member holds is a corrupt
// log: that is an error, and nothing changes.
func (cg *consumerGroup) setAssignment(m *consumerMember, next reconcile.Member) error {
	for _, a := range []assignor.Assignment{next.Assigned, next.PendingRevocation} {
		for t, ps := range a {
			for _, p := range ps {
				own := m.Assigned.Contains(t, p) || m.PendingRevocation.Contains(t, p)
				if e := cg.partitionEpoch(t, p); e != -1 && !own {
					return fmt.Errorf("partition %d of topic %x is already held at epoch %d", p, t, e)
				}
			}
		}
	}
	cg.releasePartitions(m)
	since := map[base.TopicID]map[int32]int32{}
	for _, a := range []assignor.Assignment{next.Assigned, next.PendingRevocation} {
		for t, ps := range a {
			if cg.partitionEpochs[t] == nil {
				cg.partitionEpochs[t] = map[int32]int32{}
			}
			if since[t] == nil {
				since[t] = map[int32]int32{}
			}
			for _, p := range ps {
				cg.partitionEpochs[t][p] = next.Epoch
				since[t][p] = next.Epoch
				if e, held := m.assignedSince[t][p]; held {
					since[t][p] = e
				}
			}
		}
	}
	m.Member, m.assignedSince = next, since
	return nil
}

// releasePartitions forgets the epochs of m's partitions.
func (cg *consumerGroup) releasePartitions(m *consumerMember) {
	for _, a := range []assignor.Assignment{m.Assigned, m.PendingRevocation} {
		for t, ps := range a {
			for _, p := range ps {
				delete(cg.partitionEpochs[t], p)
			}
			if len(cg.partitionEpochs[t]) == 0 {
				delete(cg.partitionEpochs, t)
			}
		}
	}
}

// countSubscription adds m's subscription to the counts (delta 1) or
// takes it out (-1).
func (cg *consumerGroup) countSubscription(m *consumerMember, delta int) {
	add := func(counts map[string]int, key string) {
		if counts[key] += delta; counts[key] == 0 {
			delete(counts, key)
		}
	}
	for _, name := range m.topics {
		add(cg.subscribers, name)
	}
	if m.regex != nil {
		add(cg.regexUsers, *m.regex)
	}
}

// memberIDs is the group's member ids, ascending.
func (cg *consumerGroup) memberIDs() []string {
	return slices.Sorted(maps.Keys(cg.members))
}

// assignmentOf turns a record's topic-partition list into an Assignment:
// partitions ascending, each once, no empty topic.
func assignmentOf(l []topicPartitions) assignor.Assignment {
	a := assignor.Assignment{}
	for _, tp := range l {
		ps := append(slices.Clone(a[tp.TopicID]), tp.Partitions...)
		slices.Sort(ps)
		if ps = slices.Compact(ps); len(ps) > 0 {
			a[tp.TopicID] = ps
		}
	}
	return a
}

// topicPartitionsOf is an Assignment as a record's topic-partition list,
// ascending by topic id.
func topicPartitionsOf(a assignor.Assignment) []topicPartitions {
	ids := slices.SortedFunc(maps.Keys(a), func(x, y base.TopicID) int { return slices.Compare(x[:], y[:]) })
	out := make([]topicPartitions, 0, len(ids))
	for _, id := range ids {
		out = append(out, topicPartitions{TopicID: id, Partitions: slices.Clone(a[id])})
	}
	return out
}
