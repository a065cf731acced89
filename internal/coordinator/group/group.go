package group

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
)

// consumerProtocolType is the protocol type of Kafka consumers; only its
// member metadata is parsed (for OffsetDelete and offset expiry).
const consumerProtocolType = "consumer"

// protocol is one assignment protocol a member supports, in its order of
// preference.
type protocol struct {
	name     string
	metadata []byte
}

// waitingJoin is a JoinGroup whose response waits for the join phase to end.
type waitingJoin struct {
	token uint64
	req   *kmsg.JoinGroupRequest
}

// waitingSync is a SyncGroup whose response waits for the leader's SyncGroup.
type waitingSync struct {
	token uint64
	req   *kmsg.SyncGroupRequest
}

// member is one member of a classic group.
//
// Invariants: awaitJoin != nil only while the group is PreparingRebalance;
// awaitSync != nil only while it is CompletingRebalance. The session timer
// is not checked while the member waits for a response (the rebalance timer
// covers it); it is re-armed when the response is produced.
type member struct {
	id               string
	instanceID       *string // nil for a dynamic member
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	protocols        []protocol
	assignment       []byte
	awaitJoin        *waitingJoin
	awaitSync        *waitingSync
	session          deadline
}

func (m *member) metadataFor(name string) ([]byte, bool) {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata, true
		}
	}
	return nil, false
}

func (m *member) sameProtocols(ps []kmsg.JoinGroupRequestProtocol) bool {
	return slices.EqualFunc(m.protocols, protocolsOf(ps), func(a, b protocol) bool {
		return a.name == b.name && bytes.Equal(a.metadata, b.metadata)
	})
}

// A name the request lists twice is kept once, at its first place (its
// preference), as Kafka's set of protocol names does: the group counts
// the members supporting each name, and a member counted twice made a
// one-member group look as if no protocol were common to all.
func protocolsOf(ps []kmsg.JoinGroupRequestProtocol) []protocol {
	out := make([]protocol, 0, len(ps))
	for _, p := range ps {
		out = appendProtocol(out, p.Name, p.Metadata)
	}
	return out
}

// appendProtocol is ps with the protocol name added, unless ps names it
// already (protocolsOf: a member supports each name once).
func appendProtocol(ps []protocol, name string, metadata []byte) []protocol {
	if slices.ContainsFunc(ps, func(q protocol) bool { return q.name == name }) {
		return ps
	}
	return append(ps, protocol{name: name, metadata: metadata})
}

// offsetEntry is one committed offset, or one pending transactional offset.
type offsetEntry struct {
	offset      base.Offset
	leaderEpoch base.Epoch
	hasEpoch    bool
	metadata    string
	committed   time.Time // millisecond precision: what the record holds
	// order is the position, among the offset-commit records of this
	// __consumer_offsets partition, of the record that wrote the entry
	// (Coordinator.offsetOrder): a committed transaction's offset replaces
	// a committed one only if its record came later.
	order uint64
}

// group is one classic consumer group.
//
// Invariants:
//   - order holds exactly the keys of members, in join order.
//   - supported[p] counts the members that list protocol p.
//   - numAwaitingJoin counts the members with awaitJoin != nil.
//   - static maps each static member's instance id to its member id.
//   - leader is a member id, or "" only when there are no members.
//   - persisted is the GroupMetadataValue last written or replayed (nil
//     when none or after a tombstone): what a reload would see.
//   - txnOffsets[pid], when present, is not empty, and it is present
//     exactly when the coordinator's producers[pid].groups holds g.id.
type group struct {
	id              string
	state           groupState
	stateSince      time.Time
	hasStateSince   bool
	generation      int32
	protocolType    string // "" until a member joined: a simple (offsets-only) group
	protocol        string // "" while no protocol is selected
	leader          string
	members         map[string]*member
	order           []string
	static          map[string]string
	pending         map[string]deadline // member ids handed out with MEMBER_ID_REQUIRED
	supported       map[string]int
	numAwaitingJoin int
	pendingSync     map[string]bool
	syncDeadline    deadline
	joinDeadline    deadline
	initialDelay    bool          // the join phase is the initial delay of an empty group
	initialNewJoin  bool          // a member joined during the current delay
	initialLeft     time.Duration // what the initial delay may still be extended by
	subscribed      map[string]bool
	subscribedKnown bool
	offsets         map[base.TopicPartition]offsetEntry
	// txnOffsets are the pending transactional offsets, by producer id:
	// written, not yet committed or aborted by a marker; OffsetFetch does
	// not show them.
	txnOffsets map[int64]map[base.TopicPartition]offsetEntry
	persisted  *kmsg.GroupMetadataValue
	// consumer is set when the group speaks the consumer protocol
	// (KIP-848): the classic fields above are then those of an empty
	// group, and only the offsets are shared.
	consumer *consumerGroup
}

func newGroup(id string, now time.Time) *group {
	return &group{
		id:            id,
		state:         stateEmpty,
		stateSince:    now,
		hasStateSince: true,
		members:       map[string]*member{},
		static:        map[string]string{},
		pending:       map[string]deadline{},
		supported:     map[string]int{},
		offsets:       map[base.TopicPartition]offsetEntry{},
		txnOffsets:    map[int64]map[base.TopicPartition]offsetEntry{},
	}
}

func (g *group) transition(to groupState, now time.Time) {
	if !validTransition(g.state, to) {
		panic(fmt.Sprintf("group %q: invalid transition %v -> %v", g.id, g.state, to))
	}
	g.state = to
	g.stateSince = now
	g.hasStateSince = true
}

// addMember adds m; the first member of an empty group sets its protocol
// type, and a group without a leader gets m as its leader.
func (g *group) addMember(m *member, protocolType string) {
	if len(g.members) == 0 {
		g.protocolType = protocolType
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	for _, p := range m.protocols {
		g.supported[p.name]++
	}
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if m.awaitJoin != nil {
		g.numAwaitingJoin++
	}
	if g.leader == "" {
		g.leader = m.id
	}
}

// dropMember removes m without answering what it waits for; callers answer.
func (g *group) dropMember(m *member) {
	for _, p := range m.protocols {
		g.supported[p.name]--
	}
	delete(g.members, m.id)
	g.order = slices.DeleteFunc(g.order, func(id string) bool { return id == m.id })
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	if m.awaitJoin != nil {
		g.numAwaitingJoin--
	}
	delete(g.pendingSync, m.id)
	if g.leader == m.id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

func (g *group) setProtocols(m *member, ps []protocol) {
	for _, p := range m.protocols {
		g.supported[p.name]--
	}
	m.protocols = ps
	for _, p := range m.protocols {
		g.supported[p.name]++
	}
}

// supportsProtocols reports whether a member with this protocol type and
// these protocols may join: an empty group takes any non-empty set; a
// non-empty group needs the same type and one protocol all members support.
func (g *group) supportsProtocols(protocolType string, ps []kmsg.JoinGroupRequestProtocol) bool {
	if g.state == stateEmpty {
		return protocolType != "" && len(ps) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		if g.supported[p.Name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol is Kafka's vote: among the protocols every member supports,
// each member votes for its most preferred; most votes wins. Ties go to the
// candidate that the earliest-joined member prefers, so the choice is
// deterministic. The group must have members.
func (g *group) selectProtocol() string {
	votes := map[string]int{}
	var firstSeen []string
	for _, id := range g.order {
		for _, p := range g.members[id].protocols {
			if g.supported[p.name] != len(g.members) {
				continue
			}
			if votes[p.name] == 0 {
				firstSeen = append(firstSeen, p.name)
			}
			votes[p.name]++
			break
		}
	}
	// A protocol may be named "" (Kafka does not refuse the name), so the
	// first candidate, not an empty name, starts the count.
	if len(firstSeen) == 0 {
		panic(fmt.Sprintf("group %q: no protocol common to all %d members", g.id, len(g.members)))
	}
	best := firstSeen[0]
	for _, name := range firstSeen[1:] {
		if votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

// computeSubscribed derives the topics the group consumes from the members'
// consumer-protocol metadata. Unknown (subscribedKnown false) when the group
// is not a consumer group, has no protocol yet, or a member's metadata does
// not parse.
func (g *group) computeSubscribed() {
	g.subscribed, g.subscribedKnown = nil, false
	if g.protocolType != consumerProtocolType {
		return
	}
	if len(g.members) == 0 {
		g.subscribed, g.subscribedKnown = map[string]bool{}, true
		return
	}
	if g.protocol == "" {
		return
	}
	topics := map[string]bool{}
	for _, m := range g.members {
		raw, _ := m.metadataFor(g.protocol)
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(raw); err != nil {
			return
		}
		for _, t := range meta.Topics {
			topics[t] = true
		}
	}
	g.subscribed, g.subscribedKnown = topics, true
}

// isSubscribedTo is Kafka's rule: when the topics are unknown, a consumer
// group counts as subscribed (deleting its offsets is refused).
func (g *group) isSubscribedTo(topic string) bool {
	if g.subscribedKnown {
		return g.subscribed[topic]
	}
	return g.protocolType == consumerProtocolType
}

// subscribedTo reports whether the group's members consume topic, so
// that its offsets may not be deleted (OffsetDelete's
// GROUP_SUBSCRIBED_TO_TOPIC).
func (g *group) subscribedTo(topic string) bool {
	if g.consumer != nil {
		return g.consumer.subscribedTopics()[topic]
	}
	return g.state != stateEmpty && g.isSubscribedTo(topic)
}

// rebalanceTimeout is the largest rebalance timeout of the members.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// allJoined reports whether the join phase can end early.
func (g *group) allJoined() bool {
	return g.numAwaitingJoin == len(g.members) && len(g.pending) == 0
}

// garbage reports whether the group holds nothing worth keeping: no
// members, no offsets (committed or pending) and nothing persisted.
func (g *group) garbage() bool {
	return g.consumer == nil && g.classicEmpty() && len(g.offsets) == 0 && len(g.txnOffsets) == 0 && g.persisted == nil
}

// classicEmpty reports whether the group has no classic members, not
// even pending ones.
func (g *group) classicEmpty() bool {
	return g.state == stateEmpty && len(g.members) == 0 && len(g.pending) == 0
}

// empty reports whether the group has no members of either protocol.
func (g *group) empty() bool {
	return g.classicEmpty() && (g.consumer == nil || len(g.consumer.members) == 0)
}
