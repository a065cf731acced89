package group

import (
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	testSession   = 10 * time.Second
	testRebalance = 30 * time.Second
)

// harness drives a Coordinator like the runtime does, with a manual clock,
// and records every reply and record. Records are kept as a load reads
// them back: a transactional batch's with Txn set, a marker as a Record
// with Marker set.
type harness struct {
	tb      tb
	c       *Coordinator
	now     time.Time
	token   uint64
	replies map[uint64]kmsg.Response
	errs    map[uint64]error // event replies
	issued  map[uint64]kmsg.Request
	records []runtime.Record
	effects []any
}

// harnessTopics are the topics a harness's coordinator sees.
var harnessTopics = viewOf(map[string]int32{"t1": 4, "t2": 2})

func testOptions() Options {
	o := DefaultOptions(func() TopicsView { return harnessTopics }, rand.NewChaCha8([32]byte{1}))
	o.InitialRebalanceDelay = 0
	return o
}

func newHarness(tb tb, opts Options) *harness {
	c, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &harness{tb: tb, c: c, now: t0, replies: map[uint64]kmsg.Response{}, errs: map[uint64]error{}, issued: map[uint64]kmsg.Request{}}
}

func (h *harness) absorb(res runtime.Result) {
	h.tb.Helper()
	if res.Txn != nil {
		// The runtime appends Records as one batch of res.Txn: only that
		// producer's offset commits may be in it.
		if len(res.Records) == 0 || len(res.Markers) > 0 {
			h.tb.Fatalf("transactional result with %d records and %d markers", len(res.Records), len(res.Markers))
		}
		for _, r := range res.Records {
			if okey, _, err := readKey(r.Key); err != nil || okey == nil || r.Value == nil {
				h.tb.Fatalf("transactional batch holds a record that is no offset commit (%v)", err)
			}
		}
	}
	for _, r := range res.Records {
		r.Txn = res.Txn
		h.records = append(h.records, r)
	}
	for _, m := range res.Markers {
		h.records = append(h.records, runtime.Record{Marker: &m})
	}
	h.effects = append(h.effects, res.Effects...)
	for _, r := range res.Replies {
		if _, ok := h.issued[r.Token]; !ok {
			h.tb.Fatalf("reply to token %d that was never issued", r.Token)
		}
		if _, dup := h.replies[r.Token]; dup {
			h.tb.Fatalf("second reply to token %d", r.Token)
		}
		h.replies[r.Token] = r.Resp
		if r.Err != nil {
			h.errs[r.Token] = r.Err
		}
	}
}

// event hands an event to the coordinator and returns its reply's error.
func (h *harness) event(ev any) error {
	h.tb.Helper()
	h.token++
	h.issued[h.token] = nil
	h.absorb(h.c.Handle(runtime.Op{Token: h.token, Event: ev}, h.now))
	if !h.answered(h.token) {
		h.tb.Fatalf("event %+v not answered at once", ev)
	}
	return h.errs[h.token]
}

// do hands req to the coordinator and returns the op's token.
func (h *harness) do(req kmsg.Request, client string) uint64 {
	h.token++
	h.issued[h.token] = req
	h.absorb(h.c.Handle(runtime.Op{Token: h.token, Req: req, ClientID: client, ClientHost: "/10.0.0.1"}, h.now))
	return h.token
}

func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.absorb(h.c.Tick(h.now))
}

func (h *harness) answered(tok uint64) bool { _, ok := h.replies[tok]; return ok }

func (h *harness) resp(tok uint64) kmsg.Response {
	h.tb.Helper()
	r, ok := h.replies[tok]
	if !ok {
		h.tb.Fatalf("op %d (%T) has no reply yet", tok, h.issued[tok])
	}
	return r
}

func (h *harness) joinResp(tok uint64) *kmsg.JoinGroupResponse {
	h.tb.Helper()
	return h.resp(tok).(*kmsg.JoinGroupResponse)
}

func (h *harness) syncResp(tok uint64) *kmsg.SyncGroupResponse {
	h.tb.Helper()
	return h.resp(tok).(*kmsg.SyncGroupResponse)
}

func wantCode(tb tb, what string, got int16, want *kerr.Error) {
	tb.Helper()
	w := int16(0)
	if want != nil {
		w = want.Code
	}
	if got != w {
		tb.Fatalf("%s: error code %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// consumerMeta is a consumer-protocol subscription to topics.
func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

func joinReq(group, memberID string, instance *string, protocols ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group = group
	req.MemberID = memberID
	req.InstanceID = instance
	req.SessionTimeoutMillis = int32(testSession / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(testRebalance / time.Millisecond)
	req.ProtocolType = consumerProtocolType
	if len(protocols) == 0 {
		protocols = []string{"range"}
	}
	for _, p := range protocols {
		req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: consumerMeta("t")})
	}
	return req
}

// joinNew runs the MEMBER_ID_REQUIRED dance and returns the member id and the
// token of the second join (whose reply may be deferred).
func (h *harness) joinNew(group, client string, protocols ...string) (string, uint64) {
	h.tb.Helper()
	first := h.joinResp(h.do(joinReq(group, "", nil, protocols...), client))
	wantCode(h.tb, "first join", first.ErrorCode, kerr.MemberIDRequired)
	return first.MemberID, h.do(joinReq(group, first.MemberID, nil, protocols...), client)
}

func syncReq(group, memberID string, gen int32, assign map[string][]byte) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = group, memberID, gen
	for _, id := range slices.Sorted(maps.Keys(assign)) {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: assign[id]})
	}
	return req
}

func heartbeatReq(group, memberID string, gen int32) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation = group, memberID, gen
	return req
}

func commitReq(group, memberID string, gen int32, topic string, offsets ...int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID, req.Generation = group, memberID, gen
	t := kmsg.OffsetCommitRequestTopic{Topic: topic}
	for p, o := range offsets {
		t.Partitions = append(t.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: int32(p), Offset: o, LeaderEpoch: 3, Metadata: kmsg.StringPtr("m")})
	}
	req.Topics = append(req.Topics, t)
	return req
}

func commitCodes(r kmsg.Response) []int16 {
	var out []int16
	for _, t := range r.(*kmsg.OffsetCommitResponse).Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

// stableGroup forms a group of n dynamic members (joined in order, leader
// first) and syncs it; it returns the member ids and the generation.
func (h *harness) stableGroup(group string, n int) ([]string, int32) {
	h.tb.Helper()
	var ids []string
	var toks []uint64
	for i := range n {
		id, tok := h.joinNew(group, fmt.Sprintf("c%d", i))
		ids, toks = append(ids, id), append(toks, tok)
		if i == 0 {
			continue
		}
		// Existing members rejoin so the join phase ends.
		for j := range i {
			if !h.answered(toks[j]) || h.joinResp(toks[j]).ErrorCode == 0 {
				toks[j] = h.do(joinReq(group, ids[j], nil), fmt.Sprintf("c%d", j))
			}
		}
	}
	gen := h.joinResp(toks[0]).Generation
	assign := map[string][]byte{}
	for _, id := range ids {
		assign[id] = []byte("a-" + id)
	}
	var syncs []uint64
	for i, id := range ids {
		if i == 0 {
			continue
		}
		syncs = append(syncs, h.do(syncReq(group, id, gen, nil), "c"))
	}
	lead := h.do(syncReq(group, ids[0], gen, assign), "c")
	wantCode(h.tb, "leader sync", h.syncResp(lead).ErrorCode, nil)
	for _, s := range syncs {
		wantCode(h.tb, "follower sync", h.syncResp(s).ErrorCode, nil)
	}
	return ids, gen
}

// snapshot is what a reload must reproduce: per group, the persisted
// metadata (encoded), the committed offsets and the pending transactional
// offsets by producer (each with its order, which replay must reproduce
// too).
type snapshot map[string]groupSnap

type groupSnap struct {
	meta     string
	consumer string
	share    string
	offsets  map[base.TopicPartition]string
	pending  map[int64]map[base.TopicPartition]string
}

func snapshotOf(c *Coordinator) snapshot {
	s := snapshot{}
	for id, g := range c.groups {
		if g.persisted == nil && g.consumer == nil && len(g.offsets) == 0 && len(g.txnOffsets) == 0 {
			continue
		}
		gs := groupSnap{consumer: consumerSnap(g.consumer), offsets: map[base.TopicPartition]string{}, pending: map[int64]map[base.TopicPartition]string{}}
		if g.persisted != nil {
			gs.meta = hex.EncodeToString(g.persisted.AppendTo(nil))
		}
		for tp, e := range g.offsets {
			gs.offsets[tp] = entrySnap(e)
		}
		for pid, pending := range g.txnOffsets {
			gs.pending[pid] = map[base.TopicPartition]string{}
			for tp, e := range pending {
				gs.pending[pid][tp] = entrySnap(e)
			}
		}
		s[id] = gs
	}
	for id, sg := range c.shares {
		s[id] = groupSnap{share: shareSnap(sg)}
	}
	return s
}

// shareSnap is a share group's persisted state, as its records would
// write it.
func shareSnap(sg *shareGroup) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d hash %d target %d %v state %v;", sg.epoch, sg.metadataHash, sg.assignmentEpoch, sg.targets, sg.stateTopics)
	for _, id := range sg.memberIDs() {
		m := sg.members[id]
		fmt.Fprintf(&b, " %s meta %x epochs %d/%d assigned %v;", id, shareMemberMetadataValue(m.metadata()), m.epoch, m.previousEpoch, m.assigned)
	}
	return b.String()
}

// consumerSnap is a consumer group's persisted state, as its records
// would write it ("" for none).
func consumerSnap(cg *consumerGroup) string {
	if cg == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d hash %d created %v/%v target %d %v;", cg.epoch, cg.metadataHash, cg.created.UnixMilli(), cg.hasCreated, cg.assignmentEpoch, cg.targets)
	for _, id := range cg.memberIDs() {
		m := cg.members[id]
		fmt.Fprintf(&b, " %s meta %x current %x since %v;", id, memberMetadataValue(m.metadata()), currentMemberAssignmentValue(currentAssignmentOf(m.Member)), m.assignedSince)
	}
	for _, expr := range slices.Sorted(maps.Keys(cg.regexes)) {
		fmt.Fprintf(&b, " regex %q %v;", expr, cg.regexes[expr])
	}
	return b.String()
}

func entrySnap(e offsetEntry) string {
	return fmt.Sprintf("%s@%d", hex.EncodeToString(offsetValue(e)), e.order)
}

// producersOf is the fencing state: epoch, last coordinator epoch and the
// groups with pending offsets, by producer id.
func producersOf(c *Coordinator) map[int64]string {
	out := map[int64]string{}
	for id, p := range c.producers {
		out[id] = fmt.Sprintf("epoch %d coordinator %d/%v groups %v", p.epoch, p.coordinatorEpoch, p.hasMarker, slices.Sorted(maps.Keys(p.groups)))
	}
	return out
}

// replayAll loads records into a new coordinator as the runtime does.
func replayAll(tb tb, opts Options, records []runtime.Record) *Coordinator {
	c, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	for i, r := range records {
		switch {
		case r.Marker != nil:
			err = c.ReplayMarker(*r.Marker)
		case r.Txn != nil:
			err = c.ReplayTxn(*r.Txn, r.Key, r.Value)
		default:
			err = c.Replay(r.Key, r.Value)
		}
		if err != nil {
			tb.Fatalf("replay of record %d: %v", i, err)
		}
	}
	return c
}

// checkInvariants asserts the invariants documented on group.
func checkInvariants(tb tb, c *Coordinator) {
	tb.Helper()
	for id, sg := range c.shares {
		if g, ok := c.groups[id]; ok && !g.garbage() {
			tb.Fatalf("group id %s is a share group and a %v group", id, g.listed().GroupType)
		}
		subscribers := map[string]int{}
		for mid, m := range sg.members {
			for _, topic := range m.topics {
				subscribers[topic]++
			}
			if m.id != mid || !slices.IsSorted(m.topics) {
				tb.Fatalf("share group %s: member %s is %+v", id, mid, m)
			}
		}
		if !maps.Equal(subscribers, sg.subscribers) {
			tb.Fatalf("share group %s: subscribers %v, members say %v", id, sg.subscribers, subscribers)
		}
		for mid := range sg.targets {
			if sg.members[mid] == nil {
				tb.Fatalf("share group %s: target of %s, who is not a member", id, mid)
			}
		}
	}
	for id, g := range c.groups {
		if g.state == 0 || g.state == stateDead {
			tb.Fatalf("group %s in state %v in the map", id, g.state)
		}
		if !slices.Equal(slices.Sorted(slices.Values(g.order)), slices.Sorted(maps.Keys(g.members))) {
			tb.Fatalf("group %s: order %v does not match members", id, g.order)
		}
		supported, awaiting := map[string]int{}, 0
		for _, m := range g.members {
			for _, p := range m.protocols {
				supported[p.name]++
			}
			if m.awaitJoin != nil {
				awaiting++
				if g.state != statePreparingRebalance {
					tb.Fatalf("group %s: member awaits join in state %v", id, g.state)
				}
			}
			if m.awaitSync != nil && g.state != stateCompletingRebalance {
				tb.Fatalf("group %s: member awaits sync in state %v", id, g.state)
			}
			if m.instanceID != nil && g.static[*m.instanceID] != m.id {
				tb.Fatalf("group %s: static map misses %s", id, m.id)
			}
		}
		for name, n := range g.supported {
			if supported[name] != n {
				tb.Fatalf("group %s: supported[%s] = %d, members say %d", id, name, n, supported[name])
			}
		}
		if awaiting != g.numAwaitingJoin {
			tb.Fatalf("group %s: numAwaitingJoin %d, members say %d", id, g.numAwaitingJoin, awaiting)
		}
		if (g.leader == "") != (len(g.members) == 0) || (g.leader != "" && g.members[g.leader] == nil) {
			tb.Fatalf("group %s: leader %q not a member", id, g.leader)
		}
		if len(g.members) == 0 && g.state != stateEmpty && g.state != statePreparingRebalance {
			tb.Fatalf("group %s: no members in state %v", id, g.state)
		}
		if g.garbage() {
			tb.Fatalf("group %s kept with nothing in it", id)
		}
		if g.consumer != nil {
			checkSubscriptionCounts(tb, g.consumer)
		}
		for pid, pending := range g.txnOffsets {
			if len(pending) == 0 {
				tb.Fatalf("group %s: empty pending offsets of producer %d", id, pid)
			}
			if p := c.producers[pid]; p == nil || !p.groups[id] {
				tb.Fatalf("group %s: producer %d holds pending offsets but does not list the group", id, pid)
			}
			for tp, e := range pending {
				if e.order == 0 || e.order > c.offsetOrder {
					tb.Fatalf("group %s %v: pending order %d outside (0, %d]", id, tp, e.order, c.offsetOrder)
				}
			}
		}
		for tp, e := range g.offsets {
			if e.order == 0 || e.order > c.offsetOrder {
				tb.Fatalf("group %s %v: order %d outside (0, %d]", id, tp, e.order, c.offsetOrder)
			}
		}
	}
	for pid, p := range c.producers {
		for id := range p.groups {
			if g := c.groups[id]; g == nil || len(g.txnOffsets[pid]) == 0 {
				tb.Fatalf("producer %d lists group %s without pending offsets there", pid, id)
			}
		}
	}
}

func tpOf(topic string, p int32) base.TopicPartition {
	return base.TopicPartition{Topic: topic, Partition: p}
}
