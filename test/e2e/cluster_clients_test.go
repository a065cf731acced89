package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestClusterOtherClients drives one three-node cluster with the clients
// other than franz-go, each seeded with a single node so that it has to find
// partition leaders and the group coordinator through Metadata and
// FindCoordinator:
//   - a sarama idempotent acks=all SyncProducer loses the leader of a
//     partition to SIGKILL halfway and must move to the new leader; a sarama
//     consumer seeded with another node then reads every acknowledged record
//     exactly once, at its acknowledged offset, in the order produced;
//   - a kafka-go Writer (hash balancer, acks=all) and a kafka-go group Reader
//     seeded with another node: keys, headers and timestamps survive, and the
//     group's commits reach the end offsets;
//   - kcat (librdkafka) produces with acks=all through one node and reads
//     back through another, neither of them the partition's leader.
//
// Every topic has 3 partitions, replication factor 3 and
// min.insync.replicas 2, so acks=all holds with one node down.
func TestClusterOtherClients(t *testing.T) {
	t.Parallel()
	// Three offsets partitions keep the run light and still put the
	// group's coordinator on some node of the three.
	c := startCluster(t, 3, "offsets.topic.num.partitions=3")
	adm := c.newAdmin()
	minISR := map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}
	const saramaTopic, kafkaGoTopic, kcatTopic = "clients-sarama", "clients-kafkago", "clients-kcat"
	for _, topic := range []string{saramaTopic, kafkaGoTopic, kcatTopic} {
		c.createTopic(adm, topic, clusterClientsPartitions, 3, minISR)
	}
	for _, topic := range []string{saramaTopic, kafkaGoTopic, kcatTopic} {
		c.waitISR(adm, topic, 3)
	}

	clusterSaramaLeaderKill(t, c, adm, saramaTopic)
	clusterKafkaGoGroup(t, c, kafkaGoTopic)
	clusterKcatAcrossNodes(t, c, kcatTopic)
}

const (
	clusterClientsPartitions = 3
	// clusterSaramaRecords is what the sarama producer writes: the first
	// half before the kill, a quarter while the leader is dead and the
	// last quarter after the node is back in every ISR.
	clusterSaramaRecords = 400
	// clusterClientsTimeout is the failsafe of each client phase.
	clusterClientsTimeout = 120 * time.Second
)

// clusterSaramaLeaderKill is the sarama part of TestClusterOtherClients.
func clusterSaramaLeaderKill(t *testing.T, c *Cluster, adm *kadm.Client, topic string) {
	// The producer's only seed is partition 0's preferred leader, the
	// node about to die: afterwards sarama has only the brokers that
	// Metadata told it of.
	seed := c.waitPreferredLeaders(adm, topic, 3)[0].Leader
	producer, err := sarama.NewSyncProducer([]string{c.Node(seed).Addr}, clusterSaramaConfig())
	if err != nil {
		t.Fatalf("sarama producer seeded with node %d: %v", seed, err)
	}
	producerOpen := true
	closeProducer := func() {
		if !producerOpen {
			return
		}
		producerOpen = false
		if err := producer.Close(); err != nil {
			t.Errorf("closing the sarama producer: %v", err)
		}
	}
	defer closeProducer()

	s := newSaramaSent(topic, pastBase())
	s.produce(producer, 0, clusterSaramaRecords/2)
	s.requireNoErrors(t, "before the kill")

	victim := c.leaderOf(adm, topic, 0)
	// The quarter produced while the leader dies is in flight when
	// SIGKILL lands: sarama has to retry it on the successor, which the
	// idempotent sequence numbers keep from duplicating.
	during := make(chan struct{})
	go func() {
		defer close(during)
		s.produce(producer, clusterSaramaRecords/2, clusterSaramaRecords*3/4)
	}()
	c.Node(victim).Kill()
	t.Logf("killed node %d, the leader of %s/0 (producer seed: node %d), with %d records acknowledged", victim, topic, seed, s.ackedCount())
	successor := c.leaderOf(adm, topic, 0, victim)
	t.Logf("node %d leads %s/0 now", successor, topic)
	select {
	case <-during:
	case <-time.After(clusterClientsTimeout):
		t.Fatalf("sarama: %d records acknowledged %v after the kill of node %d", s.ackedCount(), clusterClientsTimeout, victim)
	}
	s.requireNoErrors(t, "while the leader was down")

	c.Node(victim).Restart()
	c.waitBrokers(1, 2, 3)
	c.waitISR(adm, topic, 3)
	t.Logf("node %d is back in every ISR of %s", victim, topic)
	s.produce(producer, clusterSaramaRecords*3/4, clusterSaramaRecords)
	s.requireNoErrors(t, "after the restart")
	closeProducer()

	reader := successor
	if reader == seed {
		reader = seed%3 + 1
	}
	got := saramaReadAll(t, c.Node(reader).Addr, topic)
	s.check(t, got)
	t.Logf("sarama: node %d read back %d acknowledged records of %d partitions", reader, s.ackedCount(), len(got))
}

// clusterSaramaConfig is saramaConfig for a producer that outlives a leader:
// idempotent (one request in flight), retries for much longer than an
// election takes, and refreshes Metadata often.
func clusterSaramaConfig() *sarama.Config {
	cfg := saramaConfig()
	cfg.ClientID = "strata-e2e-sarama-cluster"
	cfg.Producer.Partitioner = sarama.NewHashPartitioner
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	// 300 × 100 ms of backoff alone outlasts the fencing of a dead node
	// (broker.session.timeout.ms 3000) many times over: a failsafe.
	cfg.Producer.Retry.Max = 300
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.Retry.Max = 50
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.RefreshFrequency = 500 * time.Millisecond
	return cfg
}

// saramaAck is where the broker acknowledged a record.
type saramaAck struct {
	partition int32
	offset    int64
}

// saramaSent produces records seq 0, 1, … with a SyncProducer, one at a
// time, and remembers where each was acknowledged or why it failed.
type saramaSent struct {
	topic string
	base  time.Time

	mu struct {
		sync.Mutex
		acked  map[int]saramaAck
		failed map[int]error
	}
}

func newSaramaSent(topic string, base time.Time) *saramaSent {
	s := &saramaSent{topic: topic, base: base}
	s.mu.acked = make(map[int]saramaAck)
	s.mu.failed = make(map[int]error)
	return s
}

func saramaClusterKey(seq int) string { return fmt.Sprintf("key-%d", seq) }

func (s *saramaSent) message(seq int) *sarama.ProducerMessage {
	return &sarama.ProducerMessage{
		Topic:     s.topic,
		Key:       sarama.StringEncoder(saramaClusterKey(seq)),
		Value:     sarama.StringEncoder(value("sarama", seq)),
		Headers:   []sarama.RecordHeader{{Key: []byte("seq"), Value: []byte(strconv.Itoa(seq))}},
		Timestamp: s.base.Add(time.Duration(seq) * time.Millisecond),
	}
}

// produce sends seqs [from, to) in turn; it does not stop at an error.
func (s *saramaSent) produce(producer sarama.SyncProducer, from, to int) {
	for seq := from; seq < to; seq++ {
		partition, offset, err := producer.SendMessage(s.message(seq))
		s.mu.Lock()
		if err != nil {
			s.mu.failed[seq] = err
		} else {
			s.mu.acked[seq] = saramaAck{partition, offset}
		}
		s.mu.Unlock()
	}
}

func (s *saramaSent) ackedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.acked)
}

// requireNoErrors fails the test if any send failed: with retries that
// outlast an election, a failure is an answer sarama does not retry.
func (s *saramaSent) requireNoErrors(t *testing.T, when string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.mu.failed) == 0 {
		return
	}
	seqs := slices.Sorted(maps.Keys(s.mu.failed))
	t.Fatalf("sarama: %d sends failed %s; first seq %d: %v", len(seqs), when, seqs[0], s.mu.failed[seqs[0]])
}

// check verifies what was read back: every record is one this producer
// sent, with its key, header and timestamp; seqs strictly increase in each
// partition (nothing duplicated or reordered); every acknowledged record is
// there, at the partition and offset of its acknowledgement.
func (s *saramaSent) check(t *testing.T, got map[int32][]*sarama.ConsumerMessage) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	found := make(map[int]bool, len(s.mu.acked))
	for partition := range int32(clusterClientsPartitions) {
		last := -1
		for _, m := range got[partition] {
			var seq int
			if _, err := fmt.Sscanf(string(m.Value), "sarama-%d", &seq); err != nil {
				t.Fatalf("%s/%d offset %d holds %q, not a record of this producer", s.topic, partition, m.Offset, m.Value)
			}
			if seq <= last {
				t.Fatalf("%s/%d: seq %d at offset %d after seq %d (duplicated or reordered)", s.topic, partition, seq, m.Offset, last)
			}
			last = seq
			want := s.message(seq)
			if string(m.Key) != saramaClusterKey(seq) {
				t.Errorf("%s/%d offset %d: key %q, want %q", s.topic, partition, m.Offset, m.Key, saramaClusterKey(seq))
			}
			if len(m.Headers) != 1 || string(m.Headers[0].Key) != "seq" || !bytes.Equal(m.Headers[0].Value, want.Headers[0].Value) {
				t.Errorf("%s/%d offset %d: headers %v, want seq=%d", s.topic, partition, m.Offset, m.Headers, seq)
			}
			if m.Timestamp.UnixMilli() != want.Timestamp.UnixMilli() {
				t.Errorf("%s/%d offset %d: timestamp %d, want %d", s.topic, partition, m.Offset, m.Timestamp.UnixMilli(), want.Timestamp.UnixMilli())
			}
			ack, acked := s.mu.acked[seq]
			_, failed := s.mu.failed[seq]
			switch {
			case acked && (ack.partition != partition || ack.offset != m.Offset):
				t.Errorf("seq %d is at %s/%d offset %d, acknowledged at %d offset %d", seq, s.topic, partition, m.Offset, ack.partition, ack.offset)
			case !acked && !failed:
				t.Errorf("seq %d is at %s/%d offset %d, but was never sent", seq, s.topic, partition, m.Offset)
			}
			found[seq] = true
		}
	}
	missing := 0
	for seq, ack := range s.mu.acked {
		if !found[seq] {
			if missing < 5 {
				t.Errorf("acknowledged seq %d (%s/%d offset %d) is missing", seq, s.topic, ack.partition, ack.offset)
			}
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged records are missing", missing, len(s.mu.acked))
	}
	perPartition := make(map[int32]int)
	for _, ack := range s.mu.acked {
		perPartition[ack.partition]++
	}
	if len(perPartition) != clusterClientsPartitions {
		t.Errorf("the keys went to partitions %v only, want all %d", perPartition, clusterClientsPartitions)
	}
}

// saramaReadAll reads every partition of topic from the oldest offset to the
// high watermark with a sarama Consumer seeded with addr alone.
func saramaReadAll(t *testing.T, addr, topic string) map[int32][]*sarama.ConsumerMessage {
	t.Helper()
	client, err := sarama.NewClient([]string{addr}, saramaConfig())
	if err != nil {
		t.Fatalf("sarama client seeded with %s: %v", addr, err)
	}
	defer func() {
		if err := client.Close(); err != nil {
			t.Errorf("closing the sarama client: %v", err)
		}
	}()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer func() {
		if err := consumer.Close(); err != nil {
			t.Errorf("closing the sarama consumer: %v", err)
		}
	}()
	deadline := time.After(clusterClientsTimeout)
	out := make(map[int32][]*sarama.ConsumerMessage)
	for partition := range int32(clusterClientsPartitions) {
		end, err := client.GetOffset(topic, partition, sarama.OffsetNewest)
		if err != nil {
			t.Fatalf("sarama: the high watermark of %s/%d: %v", topic, partition, err)
		}
		if end == 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(topic, partition, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("sarama ConsumePartition %s/%d: %v", topic, partition, err)
		}
		for next := int64(0); next < end; {
			select {
			case m := <-pc.Messages():
				out[partition] = append(out[partition], m)
				next = m.Offset + 1
			case err := <-pc.Errors():
				t.Fatalf("sarama consumer of %s/%d after %d records: %v", topic, partition, len(out[partition]), err)
			case <-deadline:
				t.Fatalf("sarama consumer: %s/%d read up to offset %d of %d within %v", topic, partition, next, end, clusterClientsTimeout)
			}
		}
		if err := pc.Close(); err != nil {
			t.Errorf("closing the sarama consumer of %s/%d: %v", topic, partition, err)
		}
	}
	return out
}

// clusterKafkaGoRecords is what the kafka-go Writer writes; the keys repeat
// every clusterKafkaGoKeys records, so each key has several records that
// the hash balancer must keep in one partition.
const (
	clusterKafkaGoRecords = 300
	clusterKafkaGoKeys    = 24
)

// clusterKafkaGoGroup is the kafka-go part of TestClusterOtherClients: a
// Writer seeded with node 1 and a group Reader seeded with node 2.
func clusterKafkaGoGroup(t *testing.T, c *Cluster, topic string) {
	const group = "clients-kafkago-group"
	transport := &kafka.Transport{
		DialTimeout: clientDialTimeout,
		IdleTimeout: 5 * time.Second,
		ClientID:    "strata-e2e-kafkago-cluster",
	}
	defer transport.CloseIdleConnections()
	w := &kafka.Writer{
		Addr:         kafka.TCP(c.Node(1).Addr),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    50,
		BatchTimeout: 10 * time.Millisecond,
		ReadTimeout:  15 * time.Second,
		WriteTimeout: 15 * time.Second,
		MaxAttempts:  10,
		Transport:    transport,
	}
	base := pastBase()
	msgs := make([]kafka.Message, clusterKafkaGoRecords)
	for i := range msgs {
		msgs[i] = kafka.Message{
			Key:   fmt.Appendf(nil, "k-%02d", i%clusterKafkaGoKeys),
			Value: []byte(value("kafkago", i)),
			Headers: []kafka.Header{
				{Key: "seq", Value: []byte(strconv.Itoa(i))},
				{Key: "client", Value: []byte("kafka-go")},
			},
			Time: base.Add(time.Duration(i) * time.Millisecond),
		}
	}
	ctx := testContext(t, clusterClientsTimeout)
	// Several calls, so that each partition holds several batches.
	for start := 0; start < len(msgs); start += 50 {
		if err := w.WriteMessages(ctx, msgs[start:start+50]...); err != nil {
			w.Close()
			t.Fatalf("kafka-go WriteMessages from seq %d: %v", start, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("closing the kafka-go writer: %v", err)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{c.Node(2).Addr},
		GroupID:           group,
		Topic:             topic,
		StartOffset:       kafka.FirstOffset,
		MinBytes:          1,
		MaxBytes:          1 << 20,
		MaxWait:           250 * time.Millisecond,
		HeartbeatInterval: 300 * time.Millisecond,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  200 * time.Millisecond,
		Dialer:            &kafka.Dialer{Timeout: clientDialTimeout, ClientID: "strata-e2e-kafkago-cluster"},
	})
	readerOpen := true
	defer func() {
		if readerOpen {
			r.Close()
		}
	}()
	// CommitInterval 0: ReadMessage commits each record before returning it.
	got := make(map[int32][]kafka.Message)
	seen := make(map[int]bool, len(msgs))
	for len(seen) < len(msgs) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("kafka-go ReadMessage after %d records: %v", len(seen), err)
		}
		var seq int
		if _, err := fmt.Sscanf(string(m.Value), "kafkago-%d", &seq); err != nil || seq < 0 || seq >= len(msgs) {
			t.Fatalf("%s/%d offset %d holds %q, not a record of this writer", topic, m.Partition, m.Offset, m.Value)
		}
		if seen[seq] {
			t.Fatalf("%s/%d offset %d: seq %d read twice", topic, m.Partition, m.Offset, seq)
		}
		seen[seq] = true
		requireKafkaGoMessage(t, msgs[seq], m)
		got[int32(m.Partition)] = append(got[int32(m.Partition)], m)
	}
	readerOpen = false
	if err := r.Close(); err != nil {
		t.Fatalf("closing the kafka-go reader: %v", err)
	}

	ends := make(map[int32]int64)
	keyPartition := make(map[string]int32)
	for partition, ms := range got {
		last := -1
		for i, m := range ms {
			if want := int64(i); m.Offset != want {
				t.Fatalf("%s/%d: record %d has offset %d, want %d", topic, partition, i, m.Offset, want)
			}
			seq, _ := strconv.Atoi(string(m.Headers[0].Value))
			if seq <= last {
				t.Fatalf("%s/%d: seq %d at offset %d after seq %d (reordered)", topic, partition, seq, m.Offset, last)
			}
			last = seq
			if p, ok := keyPartition[string(m.Key)]; ok && p != partition {
				t.Errorf("key %q is in partitions %d and %d", m.Key, p, partition)
			}
			keyPartition[string(m.Key)] = partition
		}
		ends[partition] = int64(len(ms))
	}
	if len(got) != clusterClientsPartitions {
		t.Errorf("the hash balancer used partitions %v only, want all %d", slices.Sorted(maps.Keys(got)), clusterClientsPartitions)
	}
	// A fresh admin: the one from before the sarama part's restart may hold
	// a connection the restarted node closed.
	requireCommitted(t, c.newAdmin(), group, topic, ends)
	t.Logf("kafka-go: group %q read %d records of %v through node 2 and committed %v", group, len(seen), topic, ends)
}

// requireKafkaGoMessage checks a record read against the one written: key,
// value, headers in order and millisecond timestamp.
func requireKafkaGoMessage(t *testing.T, want, got kafka.Message) {
	t.Helper()
	if !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) {
		t.Fatalf("partition %d offset %d is %q=%q, want %q=%q", got.Partition, got.Offset, got.Key, got.Value, want.Key, want.Value)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Fatalf("partition %d offset %d has headers %v, want %v", got.Partition, got.Offset, got.Headers, want.Headers)
	}
	for i, h := range want.Headers {
		if got.Headers[i].Key != h.Key || !bytes.Equal(got.Headers[i].Value, h.Value) {
			t.Fatalf("partition %d offset %d: header %d is %q=%q, want %q=%q", got.Partition, got.Offset, i, got.Headers[i].Key, got.Headers[i].Value, h.Key, h.Value)
		}
	}
	if got.Time.UnixMilli() != want.Time.UnixMilli() {
		t.Fatalf("partition %d offset %d: timestamp %d, want %d", got.Partition, got.Offset, got.Time.UnixMilli(), want.Time.UnixMilli())
	}
}

// clusterKcatAcrossNodes is the kcat part of TestClusterOtherClients: it
// produces to partition 0 with acks=all through one node that does not lead
// it, and reads it back through the third node, so that librdkafka routes
// both by Metadata.
func clusterKcatAcrossNodes(t *testing.T, c *Cluster, topic string) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat is not on PATH: skipping the kcat part (CI installs it: apt-get install kcat)")
		return
	}
	leader := c.leaderOf(c.newAdmin(), topic, 0)
	var others []int32
	for _, id := range c.ids() {
		if id != leader {
			others = append(others, id)
		}
	}
	producerNode, consumerNode := others[0], others[1]

	lines := []string{"k1:v1", "k2:value with spaces", "k3:v3", "k1:v1 again"}
	ctx, cancel := context.WithTimeout(context.Background(), clusterClientsTimeout)
	defer cancel()
	produce := exec.CommandContext(ctx, kcat, "-P", "-b", c.Node(producerNode).Addr, "-t", topic, "-p", "0", "-K:",
		"-X", "acks=all", "-X", "message.timeout.ms=30000", "-X", "socket.timeout.ms=10000")
	produce.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	produce.WaitDelay = 5 * time.Second
	if out, err := produce.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P through node %d: %v\n%s", producerNode, err, out)
	}

	consume := exec.CommandContext(ctx, kcat, "-C", "-b", c.Node(consumerNode).Addr, "-t", topic, "-p", "0",
		"-o", "beginning", "-e", "-q", "-f", "%p:%o:%k=%s\n", "-X", "socket.timeout.ms=10000")
	consume.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	consume.Stderr = &stderr
	out, err := consume.Output()
	if err != nil {
		t.Fatalf("kcat -C through node %d: %v\n%s", consumerNode, err, stderr.String())
	}
	var want strings.Builder
	for i, line := range lines {
		k, v, _ := strings.Cut(line, ":")
		fmt.Fprintf(&want, "0:%d:%s=%s\n", i, k, v)
	}
	if string(out) != want.String() {
		t.Fatalf("kcat -C through node %d read:\n%s\nwant:\n%s", consumerNode, out, want.String())
	}
	t.Logf("kcat: produced through node %d, read through node %d; node %d leads %s/0", producerNode, consumerNode, leader, topic)
}
