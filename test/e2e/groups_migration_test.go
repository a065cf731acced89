package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFranzGroupRollingUpgradeAndDowngrade moves a live group of kgo
// members from the classic protocol to the consumer protocol (KIP-848)
// and back, one member at a time, while records arrive (Kafka's online
// migration): the first consumer-protocol member upgrades the group, whose
// classic members stay in it; when the last classic member is gone the
// group is all consumer-protocol; then classic members come back and the
// last consumer-protocol member's leave downgrades it to a classic group.
// Every record is consumed, and none twice unless the commit after it
// failed.
func TestFranzGroupRollingUpgradeAndDowngrade(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	for _, classic := range []struct {
		name string
		b    kgo.GroupBalancer
	}{
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
		{"eager-range", kgo.RangeBalancer()},
	} {
		t.Run(classic.name, func(t *testing.T) {
			t.Parallel()
			const partitions, perBatch = 6, 60
			topic, group := "migrate-"+classic.name, "g-migrate-"+classic.name
			createTopic(t, adm, topic, partitions, nil)
			prod := manualPartitioner(t, b.Addr)
			l := newLedger()
			startClassic := func() *groupMember {
				return startMember(t, b.Addr, group, topic, l, defaultPace, kgo.Balancers(classic.b))
			}
			startConsumer := func() *groupMember {
				return startMember(t, b.Addr, group, topic, l, defaultPace, kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer())
			}
			ends := map[int32]int64{}
			produced := 0
			produce := func() {
				for p, n := range produceSpread(t, prod, topic, partitions, perBatch) {
					ends[p] += n
				}
				produced += perBatch
				time.Sleep(100 * time.Millisecond)
			}
			// consumedAll waits until everything produced so far was read.
			consumedAll := func(stage string) {
				t.Helper()
				waitFor(t, 60*time.Second, fmt.Sprintf("%d records consumed %s", produced, stage), func() bool { return l.count() >= produced })
			}

			classics := []*groupMember{startClassic(), startClassic()}
			produce()
			consumedAll("by the classic group")
			requireGroupMembers(t, classics[0].cl, group, false, 0, 0)

			consumers := []*groupMember{startConsumer()}
			produce()
			requireGroupMembers(t, consumers[0].cl, group, true, 2, 1)
			consumedAll("after the upgrade")
			for i := range classics {
				classics[i].leave()
				consumers = append(consumers, startConsumer())
				produce()
			}
			requireGroupMembers(t, consumers[0].cl, group, true, 0, 3)
			consumedAll("by the consumer-protocol group")

			classics = []*groupMember{startClassic(), startClassic()}
			produce()
			requireGroupMembers(t, consumers[0].cl, group, true, 2, 3)
			consumedAll("by the mixed group")
			for _, m := range consumers {
				m.leave()
				produce()
			}
			requireGroupMembers(t, classics[0].cl, group, false, 0, 0)
			consumedAll("after the downgrade")
			for _, m := range classics {
				m.leave()
			}
			l.check(t, ends)
			requireCommitted(t, adm, group, topic, ends)
		})
	}
}

// requireGroupMembers waits until group is a consumer-protocol group
// (consumer true) of classicN classic and consumerN consumer-protocol
// members, as ConsumerGroupDescribe shows it, or a classic group, as
// DescribeGroups shows it, stable with members.
func requireGroupMembers(t *testing.T, cl *kgo.Client, group string, consumer bool, classicN, consumerN int) {
	t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if consumer {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups = []string{group}
			resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
			if err == nil {
				g := resp.Groups[0]
				counts := map[int8]int{}
				for _, m := range g.Members {
					counts[m.MemberType]++
				}
				if g.ErrorCode == 0 && counts[0] == classicN && counts[1] == consumerN {
					return
				}
				last = fmt.Sprintf("error %d, state %s, %d classic and %d consumer-protocol members", g.ErrorCode, g.State, counts[0], counts[1])
			}
		} else {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = []string{group}
			resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
			if err == nil {
				g := resp.Groups[0]
				if g.ErrorCode == 0 && g.State == "Stable" && len(g.Members) > 0 {
					return
				}
				last = fmt.Sprintf("error %d, state %s, %d members", g.ErrorCode, g.State, len(g.Members))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("group %s: %s; want consumer protocol %v with %d classic and %d consumer-protocol members", group, last, consumer, classicN, consumerN)
}

// TestOtherClientsJoinConsumerProtocolGroup: a sarama and a kafka-go
// consumer (classic protocol) join a consumer-protocol group of a kgo
// member, as its classic members, and the three share the topic; when the
// kgo member leaves, the group downgrades to a classic group of the two,
// which reads on. Every record is read and committed.
func TestOtherClientsJoinConsumerProtocolGroup(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	const topic, group, partitions, perBatch = "migrate-clients", "g-migrate-clients", 6, 60
	createTopic(t, adm, topic, partitions, nil)
	prod := manualPartitioner(t, b.Addr)
	ends := map[int32]int64{}
	produce := func() {
		for p, n := range produceSpread(t, prod, topic, partitions, perBatch) {
			ends[p] += n
		}
	}
	produced := func() int {
		n := 0
		for _, e := range ends {
			n += int(e)
		}
		return n
	}

	l := newLedger()
	franz := startMember(t, b.Addr, group, topic, l, defaultPace, kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer())
	produce()
	waitFor(t, 60*time.Second, "the kgo member to read the first batch", func() bool { return l.count() >= perBatch })

	var seen seenSet
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	startSaramaMember(t, ctx, &wg, b.Addr, group, topic, sarama.NewBalanceStrategyRange(), &seen)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr}, GroupID: group, Topic: topic, StartOffset: kafka.FirstOffset,
		MaxWait: 200 * time.Millisecond, HeartbeatInterval: 300 * time.Millisecond, SessionTimeout: 10 * time.Second,
		RebalanceTimeout: 10 * time.Second, JoinGroupBackoff: 200 * time.Millisecond, CommitInterval: 100 * time.Millisecond})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer r.Close()
		for {
			msg, err := r.ReadMessage(ctx)
			if err != nil {
				return
			}
			seen.add(int32(msg.Partition), msg.Offset)
		}
	}()
	requireGroupMembers(t, franz.cl, group, true, 2, 1)
	for range 3 {
		produce()
		time.Sleep(200 * time.Millisecond)
	}
	readAll := func(stage string) {
		t.Helper()
		waitFor(t, 60*time.Second, "every record read "+stage, func() bool {
			s := map[partOffset]bool{}
			l.mu.Lock()
			for k := range l.seen {
				s[partOffset{int32(k[0]), k[1]}] = true
			}
			l.mu.Unlock()
			seen.mu.Lock()
			for k := range seen.seen {
				s[k] = true
			}
			seen.mu.Unlock()
			return len(s) >= produced()
		})
	}
	readAll("by the mixed group")

	franz.leave()
	requireGroupMembers(t, newClient(t, b.Addr), group, false, 0, 0)
	for range 2 {
		produce()
	}
	readAll("after the downgrade")
	requireCommitted(t, adm, group, topic, ends)
}
