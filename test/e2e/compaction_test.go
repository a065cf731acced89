package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// compactedTopicConfigs makes a topic that the cleaner compacts soon
// after its segments roll.
func compactedTopicConfigs(deleteRetentionMs string) map[string]*string {
	return map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("4096"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
		"delete.retention.ms":       kadm.StringPtr(deleteRetentionMs),
	}
}

// keyedState is what a consumer reading from the start ends up believing:
// the last value of each key (nil for a tombstone), and how many records
// of each key it read.
type keyedState struct {
	last  map[string][]byte
	count map[string]int
}

func stateOf(records []*kgo.Record) keyedState {
	s := keyedState{last: map[string][]byte{}, count: map[string]int{}}
	for _, r := range records {
		s.last[string(r.Key)] = r.Value
		s.count[string(r.Key)]++
	}
	return s
}

// produceKeyRounds writes rounds of one record per key, each round one
// batch, with a tombstone as the last write of tombstoned; codecs cycle so
// that the cleaner rewrites batches of every codec. It returns the final
// value of each key (nil for the tombstone).
func produceKeyRounds(t *testing.T, addr, topic string, keys, rounds int, tombstoned string) map[string][]byte {
	t.Helper()
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	pad := bytes.Repeat([]byte("p"), 150)
	want := map[string][]byte{}
	for r := range rounds {
		// Not idempotent: the cleaner keeps a record of each idempotent
		// producer's last batch, and every round is a new client.
		cl := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(codecs[r%len(codecs)]),
			kgo.DisableIdempotentWrite())
		var recs []*kgo.Record
		for k := range keys {
			key := fmt.Sprintf("key-%02d", k)
			value := append([]byte(fmt.Sprintf("%s-round-%02d-", key, r)), pad...)
			if key == tombstoned && r == rounds-1 {
				value = nil
			}
			recs = append(recs, &kgo.Record{Key: []byte(key), Value: value})
			want[key] = value
		}
		produceSync(t, cl, recs...)
		cl.Close()
	}
	return want
}

// rollPastKeys writes filler records with their own keys, so the active
// segment moves past every round and the cleaner may take them all.
func rollPastKeys(t *testing.T, addr, topic string, n int) {
	t.Helper()
	cl := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite())
	pad := bytes.Repeat([]byte("f"), 400)
	for i := range n {
		produceSync(t, cl, &kgo.Record{Key: []byte(fmt.Sprintf("filler-%03d", i)), Value: pad})
	}
	cl.Close()
}

// waitCompacted polls a consumer's view of topic until done says the
// cleaner has done its work.
func waitCompacted(t *testing.T, addr, topic string, done func(keyedState) bool) []*kgo.Record {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		records := consumeAll(t, addr, topic)[0]
		if done(stateOf(records)) {
			return records
		}
		if time.Now().After(deadline) {
			s := stateOf(records)
			t.Fatalf("the cleaner did not compact %s within 30s: %d records, per key %v", topic, len(records), s.count)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// requireFinalState checks that a consumer from the start sees exactly the
// final value of every key, in ascending offsets.
func requireFinalState(t *testing.T, who string, got keyedState, want map[string][]byte) {
	t.Helper()
	for k, v := range want {
		gv, ok := got.last[k]
		if !ok {
			t.Fatalf("%s: key %s is gone; its last write was %q", who, k, v)
		}
		if !bytes.Equal(gv, v) || (gv == nil) != (v == nil) {
			t.Fatalf("%s: key %s ends as %q, want %q", who, k, gv, v)
		}
	}
}

func requireAscending(t *testing.T, records []*kgo.Record) {
	t.Helper()
	for i := 1; i < len(records); i++ {
		if records[i].Offset <= records[i-1].Offset {
			t.Fatalf("offsets not ascending: %d then %d", records[i-1].Offset, records[i].Offset)
		}
	}
}

// TestCompactionKeepsLastValuePerKey runs the broker's log cleaner for
// real: 30 rounds over 10 keys (every codec, a tombstone last for one key)
// compact to one record per key, which franz-go, sarama and kafka-go all
// read from the start with offsets left as they were; the compacted log
// survives kill -9; an idempotent producer goes on writing after it.
func TestCompactionKeepsLastValuePerKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "log.cleaner.backoff.ms=100")
	adm := newAdmin(t, b.Addr)
	const topic, keys, rounds = "compact-keys", 10, 30
	createTopic(t, adm, topic, 1, compactedTopicConfigs("86400000"))
	want := produceKeyRounds(t, b.Addr, topic, keys, rounds, "key-03")
	rollPastKeys(t, b.Addr, topic, 30)

	records := waitCompacted(t, b.Addr, topic, func(s keyedState) bool {
		for k := range want {
			if s.count[k] != 1 {
				return false
			}
		}
		return true
	})
	requireAscending(t, records)
	requireFinalState(t, "franz-go", stateOf(records), want)
	if got := stateOf(records).last["key-03"]; got != nil {
		t.Fatalf("the tombstone of key-03 is gone before delete.retention.ms: value %q", got)
	}
	requireFinalState(t, "sarama", saramaKeyedState(t, b.Addr, topic, records[len(records)-1].Offset), want)
	requireFinalState(t, "kafka-go", kafkaGoKeyedState(t, b.Addr, topic, records[len(records)-1].Offset), want)

	b.Kill()
	requireInspectShowsHorizon(t, filepath.Join(dir, topic+"-0"))
	b.Restart()
	after := consumeAll(t, b.Addr, topic)[0]
	if len(after) != len(records) {
		t.Fatalf("after kill -9 the compacted log has %d records, before %d", len(after), len(records))
	}
	requireFinalState(t, "franz-go after restart", stateOf(after), want)

	// A new write of a compacted key lands after everything, and reads back.
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic))
	produceSync(t, cl, &kgo.Record{Key: []byte("key-00"), Value: []byte("after")})
	want["key-00"] = []byte("after")
	requireFinalState(t, "franz-go after a new write", stateOf(consumeAll(t, b.Addr, topic)[0]), want)
}

// TestCompactionDropsTombstonesAfterDeleteRetention: with
// delete.retention.ms=0 a tombstone survives the pass that first cleans it
// (which starts its delete horizon) and goes at a later pass, taking its
// key out of the log.
func TestCompactionDropsTombstonesAfterDeleteRetention(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "log.cleaner.backoff.ms=100")
	adm := newAdmin(t, b.Addr)
	const topic = "compact-tombstones"
	createTopic(t, adm, topic, 1, compactedTopicConfigs("0"))
	want := produceKeyRounds(t, b.Addr, topic, 5, 10, "key-02")
	rollPastKeys(t, b.Addr, topic, 30)
	delete(want, "key-02")
	records := waitCompacted(t, b.Addr, topic, func(s keyedState) bool {
		_, tombstoneLeft := s.last["key-02"]
		return !tombstoneLeft && s.count["key-00"] == 1
	})
	requireAscending(t, records)
	requireFinalState(t, "franz-go", stateOf(records), want)
}

// TestCompactedTopicRefusesRecordsWithoutKey: Kafka's LogValidator refuses
// a keyless record on a compacted topic with INVALID_RECORD.
func TestCompactedTopicRefusesRecordsWithoutKey(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "compact-keyless"
	createTopic(t, adm, topic, 1, compactedTopicConfigs("86400000"))
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.RecordRetries(0))
	err := cl.ProduceSync(testContext(t, clientDeliveryTimeout), &kgo.Record{Value: []byte("no key")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record on a compacted topic: got %v, want INVALID_RECORD", err)
	}
	produceSync(t, cl, &kgo.Record{Key: []byte("k"), Value: []byte("keyed")})

	// The response names the keyless records of a batch (KIP-467, Produce
	// v8+), so that clients fail those alone with INVALID_RECORD and the
	// others as collateral; librdkafka's 0011_produce_batch checks it.
	var recs []kmsg.Record
	for i := range 10 {
		r := kmsg.Record{Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}
		if i%4 == 0 {
			r.Key = nil
		}
		recs = append(recs, r)
	}
	topics, err := adm.ListTopics(testContext(t, clientDeliveryTimeout), topic)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, topics[topic].ID // v13+ name topics by id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = recordBatchOf(time.Now(), recs)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t, clientDeliveryTimeout), cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	var named []int32
	for _, r := range p.ErrorRecords {
		if r.ErrorMessage == nil || *r.ErrorMessage == "" {
			t.Fatalf("record %d named without a reason", r.RelativeOffset)
		}
		named = append(named, r.RelativeOffset)
	}
	if p.ErrorCode != kerr.InvalidRecord.Code || !slices.Equal(named, []int32{0, 4, 8}) || p.ErrorMessage == nil {
		t.Fatalf("a batch with keyless records 0, 4 and 8 (v%d): code %d, records %v, message %v; want INVALID_RECORD naming [0 4 8]",
			req.GetVersion(), p.ErrorCode, named, p.ErrorMessage)
	}
}

// saramaKeyedState reads partition 0 from the oldest offset through last.
func saramaKeyedState(t *testing.T, addr, topic string, last int64) keyedState {
	t.Helper()
	pc := saramaFromOldest(t, addr, topic)
	s := keyedState{last: map[string][]byte{}, count: map[string]int{}}
	timeout := time.After(consumeTimeout)
	for {
		select {
		case m := <-pc.Messages():
			s.last[string(m.Key)] = m.Value
			s.count[string(m.Key)]++
			if m.Offset >= last {
				return s
			}
		case err := <-pc.Errors():
			t.Fatalf("sarama consuming %s: %v", topic, err)
		case <-timeout:
			t.Fatalf("sarama did not reach offset %d of %s", last, topic)
		}
	}
}

// kafkaGoKeyedState reads partition 0 from the first offset through last.
func kafkaGoKeyedState(t *testing.T, addr, topic string, last int64) keyedState {
	t.Helper()
	r := newKafkaGoReader(addr, topic)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), consumeTimeout)
	defer cancel()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		t.Fatalf("kafka-go set offset: %v", err)
	}
	s := keyedState{last: map[string][]byte{}, count: map[string]int{}}
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("kafka-go reading %s: %v", topic, err)
		}
		s.last[string(m.Key)] = m.Value
		s.count[string(m.Key)]++
		if m.Offset >= last {
			return s
		}
	}
}

// TestConsumerOffsetsTopicIsCompacted: a group that commits again and
// again no longer grows __consumer_offsets without bound; the cleaner
// keeps its last commit, which a restart (kill -9) replays.
func TestConsumerOffsetsTopicIsCompacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "log.cleaner.backoff.ms=100", "offsets.topic.num.partitions=1", "offsets.topic.segment.bytes=4096",
		"strata.metrics.listener=127.0.0.1:0")
	adm := newAdmin(t, b.Addr)
	const topic, group, commits = "committed", "g-compacted", 400
	createTopic(t, adm, topic, 1, nil)
	ctx := testContext(t, clientDeliveryTimeout)
	for i := range commits {
		o := kadm.Offsets{}
		o.Add(kadm.Offset{Topic: topic, Partition: 0, At: int64(i), LeaderEpoch: -1})
		if resp, err := adm.CommitOffsets(ctx, group, o); err != nil || resp.Error() != nil {
			t.Fatalf("commit %d: %v, %v", i, err, resp.Error())
		}
	}
	partDir := filepath.Join(dir, "__consumer_offsets-0")
	deadline := time.Now().Add(30 * time.Second)
	for localLogBytes(t, partDir) > 3*4096 {
		if time.Now().After(deadline) {
			t.Fatalf("__consumer_offsets-0 holds %d bytes after %d commits of one offset; the cleaner did not compact it", localLogBytes(t, partDir), commits)
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := scrape(t, metricsBase(t, b)+"/metrics")
	if m["strata_log_cleaner_passes_total"] < 1 || m["strata_log_cleaner_written_bytes_total"] >= m["strata_log_cleaner_read_bytes_total"] ||
		m["strata_log_cleaner_uncleanable_partitions"] != 0 {
		t.Fatalf("cleaner metrics: passes %v, read %v, written %v, uncleanable %v", m["strata_log_cleaner_passes_total"],
			m["strata_log_cleaner_read_bytes_total"], m["strata_log_cleaner_written_bytes_total"], m["strata_log_cleaner_uncleanable_partitions"])
	}
	b.Kill()
	b.Restart()
	requireCommitted(t, newAdmin(t, b.Addr), group, topic, map[int32]int64{0: commits - 1})
}

// TestIdempotentProducerAcrossCompaction: a long-lived idempotent producer
// goes on in sequence after the cleaner rewrote its batches, and after a
// kill -9 and restart rebuilt its state.
func TestIdempotentProducerAcrossCompaction(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "log.cleaner.backoff.ms=100")
	adm := newAdmin(t, b.Addr)
	const topic = "compact-idempotent"
	createTopic(t, adm, topic, 1, compactedTopicConfigs("86400000"))
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.RecordRetries(3), kgo.ProducerBatchCompression(kgo.NoCompression()))
	pad := bytes.Repeat([]byte("i"), 300)
	want := map[string][]byte{}
	write := func(round int) {
		for k := range 4 {
			key := keyOf(k)
			v := append([]byte(fmt.Sprintf("r%03d-", round)), pad...)
			produceSync(t, cl, &kgo.Record{Key: []byte(key), Value: v})
			want[key] = v
		}
	}
	for r := range 40 {
		write(r)
	}
	// ~9 batches a segment: at most 3 of a key in the active segment.
	waitCompacted(t, b.Addr, topic, func(s keyedState) bool { return s.count[keyOf(0)] <= 4 })
	write(40)
	b.Kill()
	b.Restart()
	write(41)
	records := consumeAll(t, b.Addr, topic)[0]
	requireAscending(t, records)
	requireFinalState(t, "franz-go", stateOf(records), want)
}

func keyOf(i int) string { return fmt.Sprintf("key-%02d", i) }

// requireInspectShowsHorizon: strata inspect reads every compacted segment
// of partDir as valid, and shows the delete horizon the cleaner stamped on
// a batch holding a tombstone.
func requireInspectShowsHorizon(t *testing.T, partDir string) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(partDir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s: %v", partDir, err)
	}
	horizon := false
	for _, seg := range segs {
		out, code := runCLI(t, "inspect", "segment", seg)
		if code != 0 || !strings.Contains(out, "all valid") {
			t.Fatalf("inspect %s (exit %d):\n%s", seg, code, out)
		}
		horizon = horizon || strings.Contains(out, "deleteHorizonMs: ")
	}
	if !horizon {
		t.Fatalf("no segment of %s shows a delete horizon, though a tombstone was cleaned", partDir)
	}
}
