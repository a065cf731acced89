package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupBrokerOverrides start a broker whose groups rebalance at once, as a
// test wants (Kafka's default holds the first rebalance for 3 s), whose
// consumer-protocol members heartbeat every 300 ms (below Kafka's least,
// which the bound is lowered for), and whose offsets topic is small, so
// that its creation is quick.
var groupBrokerOverrides = []string{"group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=10",
	"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=300"}

// ledger records what the members of one group consumed, keyed by
// partition and offset, and which records were consumed by a poll whose
// commit failed (those alone may be delivered again).
type ledger struct {
	mu       sync.Mutex
	seen     map[[2]int64]int
	unsafe   map[[2]int64]bool
	failures int
}

func newLedger() *ledger {
	return &ledger{seen: map[[2]int64]int{}, unsafe: map[[2]int64]bool{}}
}

func (l *ledger) add(recs []*kgo.Record, committed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		k := [2]int64{int64(r.Partition), r.Offset}
		l.seen[k]++
		if !committed {
			l.unsafe[k] = true
		}
	}
	if !committed {
		l.failures++
	}
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// check fails t if a record in [0, ends[p]) of some partition was never
// consumed, or was consumed twice although the commit after it succeeded.
func (l *ledger) check(t *testing.T, ends map[int32]int64) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	dups := 0
	for p, end := range ends {
		for o := range end {
			k := [2]int64{int64(p), o}
			switch n := l.seen[k]; {
			case n == 0:
				t.Fatalf("partition %d offset %d was never consumed", p, o)
			case n > 1 && !l.unsafe[k]:
				t.Fatalf("partition %d offset %d was consumed %d times although its commit succeeded", p, o, n)
			case n > 1:
				dups++
			}
		}
	}
	t.Logf("%d records consumed, %d redelivered after %d failed commits", len(l.seen), dups, l.failures)
}

// groupMember is one kgo group consumer that commits after every poll and
// blocks rebalances between a poll and its commit, so that a partition
// moves only with everything consumed from it committed.
type groupMember struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
}

// memberPace is how long a member pauses after each poll, so that
// consumption spans the membership changes and restarts of a test.
type memberPace struct {
	maxPoll int
	pause   time.Duration
}

var defaultPace = memberPace{maxPoll: 50, pause: 5 * time.Millisecond}

func startMember(t *testing.T, addr, group, topic string, l *ledger, pace memberPace, opts ...kgo.Opt) *groupMember {
	t.Helper()
	base := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(10 * time.Second),
		kgo.HeartbeatInterval(300 * time.Millisecond),
		kgo.RebalanceTimeout(20 * time.Second),
	}
	cl := newClient(t, addr, append(base, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollRecords(ctx, pace.maxPoll)
			if errors.Is(ctx.Err(), context.Canceled) {
				// Records polled but not recorded are not committed
				// either: the next owner reads them.
				cl.AllowRebalance()
				return
			}
			recs := fs.Records()
			if len(recs) > 0 {
				cctx, ccancel := context.WithTimeout(context.Background(), 15*time.Second)
				err := cl.CommitUncommittedOffsets(cctx)
				ccancel()
				l.add(recs, err == nil)
			}
			cl.AllowRebalance()
			time.Sleep(pace.pause)
		}
	}()
	return m
}

// leave stops polling and leaves the group.
func (m *groupMember) leave() {
	m.cancel()
	<-m.done
	m.cl.Close()
}

// produceSpread produces n records over the partitions of topic, round
// robin, and returns each partition's end offset.
func produceSpread(t *testing.T, cl *kgo.Client, topic string, partitions int32, n int) map[int32]int64 {
	t.Helper()
	ends := map[int32]int64{}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		p := int32(i) % partitions
		recs[i] = &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "v-%d", i)}
		ends[p]++
	}
	produceSync(t, cl, recs...)
	return ends
}

func manualPartitioner(t *testing.T, addr string) *kgo.Client {
	return newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

// waitOutput waits until output() holds every one of wants: a process's
// output reaches the test through a pipe, and its log line may come a
// moment after what the test saw of its effect.
func waitOutput(t *testing.T, who string, output func() string, wants ...string) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("%s to log %q", who, wants), func() bool {
		out := output()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	})
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// requireCommitted waits until the group's committed offsets equal ends.
// committedAt reports whether group's committed offsets of topic are ends.
func committedAt(t *testing.T, adm *kadm.Client, group, topic string, ends map[int32]int64) bool {
	t.Helper()
	resp, err := adm.FetchOffsets(testContext(t, 10*time.Second), group)
	if err != nil {
		return false
	}
	for p, end := range ends {
		if o, found := resp.Lookup(topic, p); !found || o.Err != nil || o.At != end {
			return false
		}
	}
	return true
}

func requireCommitted(t *testing.T, adm *kadm.Client, group, topic string, ends map[int32]int64) {
	t.Helper()
	var last kadm.OffsetResponses
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := adm.FetchOffsets(testContext(t, 10*time.Second), group)
		if err == nil {
			last = resp
			ok := true
			for p, end := range ends {
				o, found := resp.Lookup(topic, p)
				if !found || o.Err != nil || o.At != end {
					ok = false
				}
			}
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: committed offsets %v (err %v), want %v", group, last, err, ends)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFranzGroupMembersLeaveAndJoin runs a group of three kgo members over
// a six-partition topic while records arrive; one member leaves and another
// joins mid-way. Every record is consumed, and none twice unless the commit
// after it failed.
func TestFranzGroupMembersLeaveAndJoin(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
		opts []kgo.Opt
	}{
		{"eager-range", kgo.RangeBalancer(), nil},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer(), nil},
		// KIP-848: the broker assigns (its uniform assignor), members
		// heartbeat with ConsumerGroupHeartbeat.
		{"consumer-protocol", kgo.CooperativeStickyBalancer(), []kgo.Opt{kgo.ServerSideBalancer()}},
	} {
		t.Run(bal.name, func(t *testing.T) {
			t.Parallel()
			const partitions, batches, perBatch = 6, 20, 60
			topic, group := "groups-"+bal.name, "g-"+bal.name
			createTopic(t, adm, topic, partitions, nil)
			prod := manualPartitioner(t, b.Addr)
			l := newLedger()
			members := []*groupMember{}
			for range 3 {
				members = append(members, startMember(t, b.Addr, group, topic, l, defaultPace, append([]kgo.Opt{kgo.Balancers(bal.b)}, bal.opts...)...))
			}
			ends := map[int32]int64{}
			for i := range batches {
				for p, n := range produceSpread(t, prod, topic, partitions, perBatch) {
					ends[p] += n
				}
				switch i {
				case batches / 3:
					waitFor(t, 30*time.Second, "consumption to start", func() bool { return l.count() > 0 })
					members[0].leave()
				case 2 * batches / 3:
					members = append(members, startMember(t, b.Addr, group, topic, l, defaultPace, append([]kgo.Opt{kgo.Balancers(bal.b)}, bal.opts...)...))
				}
				time.Sleep(100 * time.Millisecond)
			}
			total := batches * perBatch
			waitFor(t, 60*time.Second, fmt.Sprintf("%d records consumed", total), func() bool { return l.count() >= total })
			if bal.opts != nil {
				requireConsumerProtocol(t, members[1].cl, group, len(members)-1)
			}
			for _, m := range members[1:] {
				m.leave()
			}
			l.check(t, ends)
			requireCommitted(t, adm, group, topic, ends)
		})
	}
}

// requireConsumerProtocol checks that group is a consumer-protocol
// (KIP-848) group of n members, as ConsumerGroupDescribe shows it.
func requireConsumerProtocol(t *testing.T, cl *kgo.Client, group string, n int) {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ConsumerGroupDescribe of %s: %v", group, err)
	}
	if g := resp.Groups[0]; g.ErrorCode != 0 || len(g.Members) != n || g.AssignorName != "uniform" {
		t.Fatalf("group %s as ConsumerGroupDescribe shows it: error %d, %d members, assignor %q; want a consumer-protocol group of %d members (uniform)",
			group, g.ErrorCode, len(g.Members), g.AssignorName, n)
	}
}
