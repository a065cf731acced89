package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The share group tests of this file check what KIP-932 says a
// share-partition does with each record: redelivery after a release or an
// expired or dropped lock (with the delivery count raised), archiving
// after a reject or at the delivery limit, durability of accepted records
// across a crash, and the ShareAcknowledge errors on the wire. Each topic
// has one partition, so that every member of a group shares it.

// shareOffset names a record of a share-partition.
type shareOffset struct {
	partition int32
	offset    int64
}

func (o shareOffset) String() string { return fmt.Sprintf("%d/%d", o.partition, o.offset) }

// shareLedger records what share group members received: every record's
// delivery counts in the order it was delivered, when the first delivery
// came, and the acknowledgements the broker refused.
type shareLedger struct {
	mu struct {
		sync.Mutex
		deliveries map[shareOffset][]int32
		firstAt    time.Time
		ackErrs    []string
	}
}

func newShareLedger() *shareLedger {
	l := &shareLedger{}
	l.mu.deliveries = map[shareOffset][]int32{}
	return l
}

func (l *shareLedger) add(r *kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.mu.deliveries) == 0 {
		l.mu.firstAt = time.Now()
	}
	k := shareOffset{r.Partition, r.Offset}
	l.mu.deliveries[k] = append(l.mu.deliveries[k], r.DeliveryCount())
}

// ackResults is a kgo.ShareAckCallback that keeps the refusals.
func (l *shareLedger) ackResults(_ *kgo.Client, rs kgo.ShareAckResults) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rs {
		if r.Err != nil {
			l.mu.ackErrs = append(l.mu.ackErrs, fmt.Sprintf("%s/%d: %v", r.Topic, r.Partition, r.Err))
		}
	}
}

// counts is the delivery counts of the record at (partition 0, offset),
// in the order they were delivered; nil if it never was.
func (l *shareLedger) counts(offset int64) []int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.mu.deliveries[shareOffset{0, offset}])
}

func (l *shareLedger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.mu.deliveries)
}

func (l *shareLedger) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.mu.deliveries {
		n += len(c)
	}
	return n
}

// offsets is every offset delivered, ascending.
func (l *shareLedger) offsets() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]int64, 0, len(l.mu.deliveries))
	for k := range l.mu.deliveries {
		out = append(out, k.offset)
	}
	slices.Sort(out)
	return out
}

func (l *shareLedger) firstDelivery() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.firstAt
}

func (l *shareLedger) ackErrors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.mu.ackErrs)
}

// requireCounts fails the test unless the record at offset was delivered
// with exactly the delivery counts want, in that order.
func (l *shareLedger) requireCounts(t *testing.T, offset int64, want ...int32) {
	t.Helper()
	if got := l.counts(offset); !slices.Equal(got, want) {
		t.Errorf("offset %d delivered with delivery counts %v, want %v", offset, got, want)
	}
}

// startShareMember is a kgo share group member of group reading topic
// that acknowledges each record as decide says, at once, and records
// what it gets in the returned ledger. stop ends its polling, flushes its
// acknowledgements (FlushAcks must succeed) and closes it, leaving the
// group; it runs when the test ends if not called before.
func startShareMember(t *testing.T, addr, group, topic string, decide func(*kgo.Record) kgo.AckStatus, opts ...kgo.Opt) (*shareLedger, func()) {
	t.Helper()
	l := newShareLedger()
	cl := newClient(t, addr, append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ShareAckCallback(l.ackResults)}, opts...)...)
	pollCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pollCtx.Err() == nil {
			cl.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) {
				l.add(r)
				r.Ack(decide(r))
			})
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
			flushCtx, flushCancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer flushCancel()
			if err := cl.FlushAcks(flushCtx); err != nil {
				t.Errorf("flushing acknowledgements of share group %s: %v", group, err)
			}
			cl.Close()
		})
	}
	t.Cleanup(stop)
	return l, stop
}

func acceptAll(*kgo.Record) kgo.AckStatus { return kgo.AckAccept }

// waitShareLedger waits until cond holds, failing the test with what
// after within.
func waitShareLedger(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireNoAckErrors fails the test if the broker refused any of l's
// acknowledgements (kgo's FlushAcks does not report them).
func requireNoAckErrors(t *testing.T, l *shareLedger) {
	t.Helper()
	if errs := l.ackErrors(); len(errs) > 0 {
		t.Fatalf("the broker refused acknowledgements: %v", errs)
	}
}

// requireOnlyNew starts a new member of group, produces one record to
// topic at offset next, and checks that it gets that record, delivered
// for the first time, and nothing else: whatever the group delivered
// before is done for good.
func requireOnlyNew(t *testing.T, addr, group, topic string, next int64) {
	t.Helper()
	got, stop := startShareMember(t, addr, group, topic, acceptAll)
	produceSync(t, newClient(t, addr), &kgo.Record{Topic: topic, Value: []byte("marker")})
	waitShareLedger(t, 20*time.Second, "a new member of "+group+" gets the record produced last", func() bool { return got.distinct() > 0 })
	// Time for a stray delivery to come after the marker.
	time.Sleep(500 * time.Millisecond)
	stop()
	if offs := got.offsets(); !slices.Equal(offs, []int64{next}) {
		t.Fatalf("a new member of %s got offsets %v; want only %d, produced last", group, offs, next)
	}
	got.requireCounts(t, next, 1)
	requireNoAckErrors(t, got)
}

// rawShareMember is a share group member driven by raw requests, reading
// partition 0 of one topic, over its own kgo client (so its own
// connection, to which the broker ties its share session).
type rawShareMember struct {
	t       *testing.T
	cl      *kgo.Client
	group   string
	id      string
	topicID [16]byte
	// batchSize is the fetches' BatchSize; 0 sends their MaxRecords, as
	// franz-go does.
	batchSize int32
}

func newRawShareMember(t *testing.T, addr, group, id string, topicID [16]byte) *rawShareMember {
	t.Helper()
	// kgo closes connections idle for ConnIdleTimeout, which would end the
	// share session; none of these tests runs that long.
	cl := newClient(t, addr, kgo.ConnIdleTimeout(2*time.Minute))
	return &rawShareMember{t: t, cl: cl, group: group, id: id, topicID: topicID}
}

// join makes the member join the group, subscribed to topic.
func (m *rawShareMember) join(topic string) {
	m.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = m.group, m.id, 0
	req.SubscribedTopicNames = []string{topic}
	resp, err := req.RequestWith(testContext(m.t, 10*time.Second), m.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		m.t.Fatalf("ShareGroupHeartbeat join of %s to %s: %v", m.id, m.group, err)
	}
}

// fetch sends a ShareFetch of partition 0 at epoch, with acks.
func (m *rawShareMember) fetch(epoch, maxRecords int32, maxWait time.Duration, acks ...kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) *kmsg.ShareFetchResponse {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id)
	req.ShareSessionEpoch = epoch
	req.MaxWaitMillis = int32(maxWait.Milliseconds())
	req.MinBytes, req.MaxBytes = 1, 1<<20
	req.MaxRecords, req.BatchSize = maxRecords, maxRecords
	if m.batchSize > 0 {
		req.BatchSize = m.batchSize
	}
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.topicID
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rp.Partition, rp.PartitionMaxBytes = 0, 1<<20
	rp.AcknowledgementBatches = acks
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(m.t, maxWait+15*time.Second), m.cl)
	if err != nil {
		m.t.Fatalf("ShareFetch of %s at epoch %d: %v", m.id, epoch, err)
	}
	return resp
}

// open opens the member's share session (ShareFetch at epoch 0, whose
// next epoch is 1) and returns the offsets it acquired with their
// delivery counts.
func (m *rawShareMember) open(maxRecords int32, maxWait time.Duration) map[int64]int16 {
	m.t.Helper()
	resp := m.fetch(0, maxRecords, maxWait)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("ShareFetch opening %s's session: %v", m.id, err)
	}
	acquired := map[int64]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				m.t.Fatalf("ShareFetch opening %s's session: partition %d: %v", m.id, p.Partition, err)
			}
			for _, a := range p.AcquiredRecords {
				for o := a.FirstOffset; o <= a.LastOffset; o++ {
					acquired[o] = a.DeliveryCount
				}
			}
		}
	}
	return acquired
}

// acknowledge sends a ShareAcknowledge of partition 0 at epoch.
func (m *rawShareMember) acknowledge(epoch int32, acks ...kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) *kmsg.ShareAcknowledgeResponse {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id)
	req.ShareSessionEpoch = epoch
	if len(acks) > 0 {
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = m.topicID
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.AcknowledgementBatches = acks
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(testContext(m.t, 15*time.Second), m.cl)
	if err != nil {
		m.t.Fatalf("ShareAcknowledge of %s at epoch %d: %v", m.id, epoch, err)
	}
	return resp
}

// requireAcquiredAll fails the test unless acquired is every offset of
// [0, n), each delivered for the first time.
func requireAcquiredAll(t *testing.T, acquired map[int64]int16, n int64) {
	t.Helper()
	for o := range n {
		if c, ok := acquired[o]; !ok || c != 1 {
			t.Fatalf("the opening ShareFetch acquired %v (offset → delivery count); want every offset of [0, %d) at delivery 1", acquired, n)
		}
	}
	if int64(len(acquired)) != n {
		t.Fatalf("the opening ShareFetch acquired %d offsets, want %d: %v", len(acquired), n, acquired)
	}
}

func shareFetchAck(first, last int64, typ kgo.AckStatus) kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch {
	b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, []int8{int8(typ)}
	return b
}

func shareAck(first, last int64, typ kgo.AckStatus) kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch {
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, []int8{int8(typ)}
	return b
}

// shareAckPartitionCode is the ErrorCode of partition 0 in resp.
func shareAckPartitionCode(t *testing.T, resp *kmsg.ShareAcknowledgeResponse) int16 {
	t.Helper()
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.Partition == 0 {
				return rp.ErrorCode
			}
		}
	}
	t.Fatalf("ShareAcknowledge response without partition 0: %+v", resp)
	return 0
}

func requireCode(t *testing.T, what string, got int16, want error) {
	t.Helper()
	if gotErr := kerr.ErrorForCode(got); gotErr != want {
		t.Fatalf("%s: got %v, want %v", what, gotErr, want)
	}
}

// TestShareRedeliveryAfterReleaseAndReject: a member that releases a
// record gets it again, at the same offset, with delivery count 2; a
// record it rejects or accepts is not delivered again, neither to it nor
// to a later member of the group.
func TestShareRedeliveryAfterReleaseAndReject(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, group, n = "redeliver", "redelivery", 30
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceN(t, newClient(t, b.Addr), topic, n)

	// First deliveries: offset%3 == 0 released, 1 rejected, 2 accepted;
	// any later delivery accepted.
	got, stop := startShareMember(t, b.Addr, group, topic, func(r *kgo.Record) kgo.AckStatus {
		if r.DeliveryCount() > 1 {
			return kgo.AckAccept
		}
		return [...]kgo.AckStatus{kgo.AckRelease, kgo.AckReject, kgo.AckAccept}[r.Offset%3]
	})
	const released = n / 3
	waitShareLedger(t, 20*time.Second, fmt.Sprintf("%d deliveries: %d records, the %d released ones twice", n+released, n, released),
		func() bool { return got.total() >= n+released })
	// Time for a wrong redelivery of a rejected or accepted record.
	time.Sleep(time.Second)
	stop()
	for o := int64(0); o < n; o++ {
		if o%3 == 0 {
			got.requireCounts(t, o, 1, 2)
		} else {
			got.requireCounts(t, o, 1)
		}
	}
	if got.distinct() != n {
		t.Errorf("delivered offsets %v, want [0, %d)", got.offsets(), n)
	}
	requireNoAckErrors(t, got)
	if t.Failed() {
		t.FailNow()
	}
	requireOnlyNew(t, b.Addr, group, topic, n)
}

// TestShareDeliveryLimitArchives: with group.share.delivery.count.limit=2,
// a record released at every delivery is delivered exactly twice, then
// archived: never delivered again, while the member goes on to the
// records after it.
func TestShareDeliveryLimitArchives(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "group.share.delivery.count.limit=2")
	const topic, group, n, poisoned = "poison", "limited", 10, 3
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	prod := newClient(t, b.Addr)
	produceN(t, prod, topic, n)

	got, stop := startShareMember(t, b.Addr, group, topic, func(r *kgo.Record) kgo.AckStatus {
		if r.Offset < poisoned {
			return kgo.AckRelease
		}
		return kgo.AckAccept
	})
	waitShareLedger(t, 20*time.Second, "the released records delivered twice and the others once",
		func() bool { return got.total() >= n+poisoned })
	// Records produced after the archived ones are delivered.
	produceN(t, prod, topic, 5)
	waitShareLedger(t, 20*time.Second, "the records produced after the archived ones delivered",
		func() bool { return got.distinct() >= n+5 })
	// Time for a delivery past the limit.
	time.Sleep(time.Second)
	stop()
	for o := int64(0); o < n+5; o++ {
		if o < poisoned {
			got.requireCounts(t, o, 1, 2)
		} else {
			got.requireCounts(t, o, 1)
		}
	}
	requireNoAckErrors(t, got)
	if t.Failed() {
		t.FailNow()
	}
	requireOnlyNew(t, b.Addr, group, topic, n+5)
}

// TestShareLockExpiryRedelivers: records a member acquired and never
// acknowledged are delivered to another member once their acquisition
// lock (group.share.record.lock.duration.ms, 1 s here) expires, not
// before, with delivery count 2, while the first member's connection and
// share session stay open.
func TestShareLockExpiryRedelivers(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "group.share.min.record.lock.duration.ms=1000", "group.share.record.lock.duration.ms=1000")
	const topic, group, n = "expiry", "lapsed", 20
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceN(t, newClient(t, b.Addr), topic, n)

	holder := newRawShareMember(t, b.Addr, group, "silent-holder", topicIDOf(t, adm, topic))
	holder.join(topic)
	acquiredAt := time.Now()
	requireAcquiredAll(t, holder.open(n, 5*time.Second), n)

	// Its acknowledgements are not checked: under a 1 s lock, a slow one
	// may come after the lock's end, which is the client's to handle.
	got, _ := startShareMember(t, b.Addr, group, topic, acceptAll)
	waitShareLedger(t, 20*time.Second, fmt.Sprintf("the %d expired records delivered to the second member", n),
		func() bool { return got.distinct() >= n })
	// The broker locked the records after acquiredAt, for 1 s.
	after := got.firstDelivery().Sub(acquiredAt)
	if after < time.Second {
		t.Errorf("records locked for 1 s were delivered to another member %v after they were acquired", after)
	}
	t.Logf("records delivered again %v after they were acquired", after)
	for o := int64(0); o < n; o++ {
		if c := got.counts(o); len(c) == 0 || c[0] != 2 {
			t.Errorf("offset %d delivered to the second member with delivery counts %v, want 2 first", o, c)
		}
	}
	// The holder's session is still open at its next epoch: the records
	// came back by their lock's expiry, not by its connection closing.
	resp := holder.acknowledge(1)
	requireCode(t, "ShareAcknowledge of the holder, at epoch 1 of its session, after its locks expired", resp.ErrorCode, nil)
}

// TestShareConnectionCloseReleases: the records a member acquired are
// delivered to another member as soon as the first member's connection
// closes (its share session ends with it), with delivery count 2, long
// before their 30 s acquisition lock would expire.
func TestShareConnectionCloseReleases(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, group, n = "dropped", "dropouts", 20
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceN(t, newClient(t, b.Addr), topic, n)

	holder := newRawShareMember(t, b.Addr, group, "vanishing-holder", topicIDOf(t, adm, topic))
	holder.join(topic)
	requireAcquiredAll(t, holder.open(n, 5*time.Second), n)

	got, stop := startShareMember(t, b.Addr, group, topic, acceptAll)
	// While the holder's connection is open, its records stay locked.
	time.Sleep(2 * time.Second)
	if offs := got.offsets(); len(offs) > 0 {
		t.Fatalf("records locked by a member with an open connection were delivered to another: %v", offs)
	}
	closedAt := time.Now()
	holder.cl.Close()
	waitShareLedger(t, 10*time.Second, fmt.Sprintf("the %d records of the closed connection delivered to the other member", n),
		func() bool { return got.distinct() >= n })
	t.Logf("records delivered again %v after the holder's connection closed", got.firstDelivery().Sub(closedAt))
	stop()
	for o := int64(0); o < n; o++ {
		got.requireCounts(t, o, 2)
	}
	requireNoAckErrors(t, got)
}

// TestShareAcceptedSurvivesKill: records a member accepted (FlushAcks
// returned and the broker answered every acknowledgement without error)
// are not delivered again after the broker is killed with SIGKILL and
// restarted on its data; every other record is delivered to a new member
// of the group (those acquired but not acknowledged before the kill, at
// least once).
func TestShareAcceptedSurvivesKill(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, group, n, firstPart = "durable", "survivors", 200, 60
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceN(t, newClient(t, b.Addr), topic, n)

	// Small strict fetches, so that the first member holds a part of the
	// topic, with more acquired in its buffer, when the broker dies.
	first := newShareLedger()
	cl := newClient(t, b.Addr, kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.ShareMaxRecords(20), kgo.ShareMaxRecordsStrict(), kgo.ShareAckCallback(first.ackResults))
	ctx := testContext(t, 30*time.Second)
	accepted := map[int64]bool{}
	for len(accepted) < firstPart {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("the first member got %d records within 30 s, want %d", len(accepted), firstPart)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			first.add(r)
			accepted[r.Offset] = true
			r.Ack(kgo.AckAccept)
		})
	}
	// One more poll, left unacknowledged: records the member holds when
	// the broker dies (kgo would accept them only at a next poll).
	held := 0
	for held == 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("the first member got no records to hold within 30 s")
		}
		held = fetches.NumRecords()
	}
	if err := cl.FlushAcks(testContext(t, 10*time.Second)); err != nil {
		t.Fatalf("FlushAcks: %v", err)
	}
	requireNoAckErrors(t, first)
	b.Kill()
	// The member goes while the broker is down: it cannot leave, and must
	// not fetch from the restarted broker.
	leaveCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = cl.LeaveGroupContext(leaveCtx)
	cancel()
	cl.Close()
	b.Restart()

	want := n - len(accepted)
	got, stop := startShareMember(t, b.Addr, group, topic, acceptAll)
	waitShareLedger(t, 30*time.Second, fmt.Sprintf("the %d records not accepted before the kill delivered after the restart", want),
		func() bool {
			for o := int64(0); o < n; o++ {
				if !accepted[o] && got.counts(o) == nil {
					return false
				}
			}
			return true
		})
	// Time for a wrong delivery of an accepted record.
	time.Sleep(500 * time.Millisecond)
	stop()
	var again []int64
	redelivered := 0
	for _, o := range got.offsets() {
		if accepted[o] {
			again = append(again, o)
		}
		if c := got.counts(o); c[0] > 1 {
			redelivered++
		}
	}
	if len(again) > 0 {
		t.Fatalf("records accepted before the kill delivered again after the restart: %v", again)
	}
	t.Logf("accepted %d records and held %d before the kill; after the restart %d delivered, %d of them with a delivery count above 1",
		len(accepted), held, got.distinct(), redelivered)
	requireNoAckErrors(t, got)
}

// TestShareAcknowledgeErrors: a ShareAcknowledge of records another
// member holds is INVALID_RECORD_STATE for that partition and changes
// nothing; a ShareFetch opening a session (epoch 0) with acknowledgements
// is INVALID_REQUEST; a ShareAcknowledge without a session is
// SHARE_SESSION_NOT_FOUND, at epoch 0 or another epoch than the
// session's INVALID_SHARE_SESSION_EPOCH. None of those refusals touches
// the session: the holder then accepts its records at epoch 1.
func TestShareAcknowledgeErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic, group, n = "wire", "wire-errors", 10
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	produceN(t, newClient(t, b.Addr), topic, n)
	topicID := topicIDOf(t, adm, topic)

	holder := newRawShareMember(t, b.Addr, group, "holder", topicID)
	holder.join(topic)
	requireAcquiredAll(t, holder.open(n, 5*time.Second), n)
	other := newRawShareMember(t, b.Addr, group, "other", topicID)
	other.join(topic)
	if got := other.open(n, 100*time.Millisecond); len(got) > 0 {
		t.Fatalf("a second member acquired %v while the first holds every record", got)
	}

	resp := other.acknowledge(1, shareAck(0, 4, kgo.AckAccept))
	requireCode(t, "ShareAcknowledge of records another member holds: top level", resp.ErrorCode, nil)
	requireCode(t, "ShareAcknowledge of records another member holds: partition", shareAckPartitionCode(t, resp), kerr.InvalidRecordState)

	fetched := holder.fetch(0, n, 100*time.Millisecond, shareFetchAck(0, n-1, kgo.AckAccept))
	requireCode(t, "ShareFetch at epoch 0 with acknowledgements", fetched.ErrorCode, kerr.InvalidRequest)

	stranger := newRawShareMember(t, b.Addr, group, "stranger", topicID)
	resp = stranger.acknowledge(1, shareAck(0, n-1, kgo.AckAccept))
	requireCode(t, "ShareAcknowledge of a member without a share session", resp.ErrorCode, kerr.ShareSessionNotFound)

	resp = holder.acknowledge(0, shareAck(0, n-1, kgo.AckAccept))
	requireCode(t, "ShareAcknowledge at epoch 0", resp.ErrorCode, kerr.InvalidShareSessionEpoch)
	resp = holder.acknowledge(7, shareAck(0, n-1, kgo.AckAccept))
	requireCode(t, "ShareAcknowledge at epoch 7 of a session at epoch 1", resp.ErrorCode, kerr.InvalidShareSessionEpoch)

	resp = holder.acknowledge(1, shareAck(0, n-1, kgo.AckAccept))
	requireCode(t, "ShareAcknowledge of the holder at epoch 1, after the refusals: top level", resp.ErrorCode, nil)
	requireCode(t, "ShareAcknowledge of the holder at epoch 1, after the refusals: partition", shareAckPartitionCode(t, resp), nil)
}

// TestShareFetchAcknowledgeOnly: a ShareFetch with MaxRecords 0 (the Java
// client's way of sending acknowledgements alone) acknowledges and
// acquires nothing, as Kafka: the records it does not hold stay for the
// other members.
func TestShareFetchAcknowledgeOnly(t *testing.T) {
	t.Parallel()
	const topic, group, n = "ack-only", "ack-only", 10
	b, topicID := startShareBatches(t, topic, group, n) // a batch each: four are acquired alone

	first := newRawShareMember(t, b.Addr, group, "first", topicID)
	first.join(topic)
	if got := first.open(4, 5*time.Second); len(got) != 4 {
		t.Fatalf("first acquired %v; want 4 records", got)
	}
	resp := first.fetch(1, 0, 0, shareFetchAck(0, 3, kgo.AckAccept))
	requireCode(t, "an acknowledgement-only ShareFetch", resp.ErrorCode, nil)
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			requireCode(t, "its acknowledgement", p.AcknowledgeErrorCode, nil)
			if len(p.AcquiredRecords) > 0 {
				t.Fatalf("an acknowledgement-only ShareFetch acquired %+v", p.AcquiredRecords)
			}
		}
	}
	second := newRawShareMember(t, b.Addr, group, "second", topicID)
	second.join(topic)
	if got := second.open(n, 5*time.Second); len(got) != n-4 {
		t.Fatalf("second acquired %v; want the %d records the first did not take", got, n-4)
	}
}

// TestShareFetchBatchSize: in the batch-optimized mode a ShareFetch's
// acquired records come in pieces cut at log batches once BatchSize
// offsets are reached, as Kafka lists them; a redelivery is cut alike.
func TestShareFetchBatchSize(t *testing.T) {
	t.Parallel()
	const topic, group, n = "batch-size", "batch-size", 10
	b, topicID := startShareBatches(t, topic, group, n)
	m := newRawShareMember(t, b.Addr, group, "member", topicID)
	m.batchSize = 3
	m.join(topic)
	want := [][3]int64{{0, 2, 1}, {3, 5, 1}, {6, 8, 1}, {9, 9, 1}}
	resp := m.fetch(0, 100, 5*time.Second)
	requireAcquiredPieces(t, "the first delivery", resp, want)

	resp = m.fetch(1, 0, 0, shareFetchAck(0, n-1, kgo.AckRelease))
	requireCode(t, "releasing them", resp.ErrorCode, nil)
	for i := range want {
		want[i][2] = 2
	}
	resp = m.fetch(2, 100, 5*time.Second)
	requireAcquiredPieces(t, "the redelivery", resp, want)
}

// startShareBatches starts a broker with a one-partition topic of n
// records, one per log batch, that share group group reads from the
// earliest offset, and returns the broker and the topic's id.
func startShareBatches(t *testing.T, topic, group string, n int) (*Broker, [16]byte) {
	t.Helper()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	shareEarliest(t, b.Addr, group)
	prod := newClient(t, b.Addr)
	for range n {
		produceN(t, prod, topic, 1)
	}
	return b, topicIDOf(t, adm, topic)
}

// requireAcquiredPieces checks the AcquiredRecords of partition 0 in
// resp: first offset, last offset and delivery count of each.
func requireAcquiredPieces(t *testing.T, what string, resp *kmsg.ShareFetchResponse, want [][3]int64) {
	t.Helper()
	requireCode(t, what, resp.ErrorCode, nil)
	var got [][3]int64
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			requireCode(t, what, p.ErrorCode, nil)
			for _, a := range p.AcquiredRecords {
				got = append(got, [3]int64{a.FirstOffset, a.LastOffset, int64(a.DeliveryCount)})
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s acquired %v; want %v (first, last, deliveries)", what, got, want)
	}
}
