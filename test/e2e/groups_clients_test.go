package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafka "github.com/segmentio/kafka-go"
)

// partOffset names one record.
type partOffset struct {
	p int32
	o int64
}

// seenSet counts distinct records consumed by several goroutines.
type seenSet struct {
	mu   sync.Mutex
	seen map[partOffset]bool
}

func (s *seenSet) add(p int32, o int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[partOffset]bool{}
	}
	s.seen[partOffset{p, o}] = true
}

func (s *seenSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

type saramaHandler struct{ seen *seenSet }

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		h.seen.add(msg.Partition, msg.Offset)
		s.MarkMessage(msg, "")
	}
	return nil
}

// TestSaramaConsumerGroup consumes a topic with two sarama ConsumerGroup
// members and checks that their commits cover every record.
func TestSaramaConsumerGroup(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	const topic, group, partitions, n = "groups-sarama", "g-sarama", 4, 400
	createTopic(t, adm, topic, partitions, nil)
	ends := produceSpread(t, manualPartitioner(t, b.Addr), topic, partitions, n)

	var seen seenSet
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		startSaramaMember(t, ctx, &wg, b.Addr, group, topic, sarama.NewBalanceStrategyRoundRobin(), &seen)
	}
	waitFor(t, 60*time.Second, "sarama to consume everything", func() bool { return seen.count() >= n })
	requireCommitted(t, adm, group, topic, ends)
	cancel()
	wg.Wait()
}

// startSaramaMember runs a sarama ConsumerGroup member of group, reading
// topic from the start into seen and committing every 100 ms, until ctx
// ends (wg waits for it).
func startSaramaMember(t *testing.T, ctx context.Context, wg *sync.WaitGroup, addr, group, topic string, strategy sarama.BalanceStrategy, seen *seenSet) {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{strategy}
	cfg.Consumer.Group.Heartbeat.Interval = 300 * time.Millisecond
	cg, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cg.Close()
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, saramaHandler{seen}); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
				t.Logf("sarama Consume: %v", err)
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
}

// TestKafkaGoReaderGroup reads with a kafka-go Reader in a group (commits
// after every message) and checks the committed offsets.
func TestKafkaGoReaderGroup(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	const topic, group, partitions, n = "groups-kafkago", "g-kafkago", 3, 150
	createTopic(t, adm, topic, partitions, nil)
	ends := produceSpread(t, manualPartitioner(t, b.Addr), topic, partitions, n)

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{b.Addr},
		GroupID:           group,
		Topic:             topic,
		StartOffset:       kafka.FirstOffset,
		MaxWait:           500 * time.Millisecond,
		HeartbeatInterval: 300 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  200 * time.Millisecond,
	})
	var seen seenSet
	ctx := testContext(t, 60*time.Second)
	for seen.count() < n {
		msg, err := r.ReadMessage(ctx)
		if err != nil {
			r.Close()
			t.Fatalf("kafka-go ReadMessage after %d records: %v", seen.count(), err)
		}
		seen.add(int32(msg.Partition), msg.Offset)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	requireCommitted(t, adm, group, topic, ends)
}

// TestKcatGroup consumes with kcat -G (librdkafka's balanced consumer),
// which commits what it consumed when it exits.
func TestKcatGroup(t *testing.T) {
	t.Parallel()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not on PATH (CI installs it: apt-get install kcat)")
	}
	b := startBroker(t, t.TempDir(), groupBrokerOverrides...)
	adm := newAdmin(t, b.Addr)
	const topic, group, partitions, n = "groups-kcat", "g-kcat", 2, 40
	createTopic(t, adm, topic, partitions, nil)
	ends := produceSpread(t, manualPartitioner(t, b.Addr), topic, partitions, n)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-b", b.Addr, "-G", group, "-X", "auto.offset.reset=earliest",
		"-c", "40", "-f", "%p:%o\n", "-q", topic)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat -G: %v\n%s", err, out)
	}
	if lines := strings.Count(string(out), "\n"); lines != n {
		t.Fatalf("kcat -G printed %d records, want %d:\n%s", lines, n, out)
	}
	requireCommitted(t, adm, group, topic, ends)
}
