package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionFetcher sends raw Fetch requests of one topic (by id: the client
// speaks v13+) and remembers its session.
type sessionFetcher struct {
	t       *testing.T
	cl      *kgo.Client
	topicID [16]byte
}

// fetch sends one request; parts are (partition, offset) pairs to add or
// move, forget the partitions to drop. It waits at most 300 ms for data.
func (f sessionFetcher) fetch(id, epoch int32, parts map[int32]int64, forget ...int32) *kmsg.FetchResponse {
	f.t.Helper()
	req := consumerFetch("", f.topicID, parts, 1<<20)
	req.MaxWaitMillis, req.SessionID, req.SessionEpoch = 300, id, epoch
	if len(forget) > 0 {
		req.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{TopicID: f.topicID, Partitions: forget}}
	}
	resp, err := req.RequestWith(testContext(f.t, 20*time.Second), f.cl)
	if err != nil {
		f.t.Fatalf("Fetch (session %d, epoch %d): %v", id, epoch, err)
	}
	return resp
}

// answered lists the partitions of resp as "p=error/records", in order.
func answered(resp *kmsg.FetchResponse) []string {
	var out []string
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			out = append(out, fmt.Sprintf("%d=%d/%v", p.Partition, p.ErrorCode, len(p.RecordBatches) > 0))
		}
	}
	return out
}

// TestFetchSessionIncremental walks a KIP-227 session through the real
// broker: a full fetch opens it and answers every partition; incremental
// fetches answer only partitions with news (records, an error); a stale
// epoch, an unknown id and a forgotten partition behave as in Kafka;
// deleting the topic reports its partitions; epoch -1 closes the session.
func TestFetchSessionIncremental(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "sessions"
	createTopic(t, adm, topic, 3, nil)
	cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceTo := func(p int32) {
		produceSync(t, cl, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")})
	}
	f := sessionFetcher{t: t, cl: cl, topicID: topicIDOf(t, adm, topic)}
	produceTo(0)

	resp := f.fetch(0, 0, map[int32]int64{0: 0, 1: 0, 2: 0})
	id := resp.SessionID
	if resp.ErrorCode != 0 || id == 0 {
		t.Fatalf("full fetch: error %d, session %d; want a session", resp.ErrorCode, id)
	}
	if got := answered(resp); !slices.Equal(got, []string{"0=0/true", "1=0/false", "2=0/false"}) {
		t.Fatalf("full fetch answered %v", got)
	}

	// Partition 0 moves past its record: nothing is news.
	if got := answered(f.fetch(id, 1, map[int32]int64{0: 1})); len(got) != 0 {
		t.Fatalf("quiet incremental fetch answered %v", got)
	}
	produceTo(2)
	if got := answered(f.fetch(id, 2, nil)); !slices.Equal(got, []string{"2=0/true"}) {
		t.Fatalf("incremental fetch after a record to partition 2 answered %v", got)
	}
	if resp := f.fetch(id, 2, nil); resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("a repeated epoch got error %d", resp.ErrorCode)
	}
	if resp := f.fetch(id+1, 1, nil); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("an unknown session got error %d", resp.ErrorCode)
	}

	// Forgotten, partition 2's new record is no longer answered, and the
	// high watermark of partition 1 still is.
	produceTo(2)
	produceTo(1)
	if got := answered(f.fetch(id, 3, map[int32]int64{1: 1}, 2)); !slices.Equal(got, []string{"1=0/false"}) {
		t.Fatalf("fetch after forgetting partition 2 (partition 1 read up to its end) answered %v", got)
	}

	if _, err := adm.DeleteTopic(testContext(t, 10*time.Second), topic); err != nil {
		t.Fatal(err)
	}
	deleted := fmt.Sprint(kerr.UnknownTopicID.Code)
	if got := answered(f.fetch(id, 4, nil)); !slices.Equal(got, []string{"0=" + deleted + "/false", "1=" + deleted + "/false"}) {
		t.Fatalf("fetch after the topic was deleted answered %v", got)
	}

	resp = f.fetch(id, -1, nil)
	if resp.ErrorCode != 0 || resp.SessionID != 0 {
		t.Fatalf("closing fetch: error %d, session %d", resp.ErrorCode, resp.SessionID)
	}
	if resp := f.fetch(id, 5, nil); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("the closed session got error %d", resp.ErrorCode)
	}
}

// TestFetchSessionsFranzConsumer: franz-go opens a session, and a consumer
// of many partitions, fed while it reads, gets every record once, in
// order, through incremental fetches (strata_fetch_sessions counts it).
func TestFetchSessionsFranzConsumer(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "strata.metrics.listener=127.0.0.1:0")
	metrics := metricsBase(t, b)
	adm := newAdmin(t, b.Addr)
	const topic, partitions, perPartition = "many", 40, 50
	createTopic(t, adm, topic, partitions, nil)
	producer := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	consumer := newClient(t, b.Addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))

	go func() {
		for i := range perPartition {
			for p := range int32(partitions) {
				producer.Produce(testContext(t, 30*time.Second), &kgo.Record{Topic: topic, Partition: p, Value: []byte(value("s", i))}, nil)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	next := make(map[int32]int, partitions)
	ctx := testContext(t, 60*time.Second)
	for got := 0; got < partitions*perPartition; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want := value("s", next[r.Partition]); string(r.Value) != want || r.Offset != int64(next[r.Partition]) {
				t.Fatalf("partition %d: record %q at offset %d, want %q at %d", r.Partition, r.Value, r.Offset, want, next[r.Partition])
			}
			next[r.Partition]++
			got++
		})
	}
	s := scrape(t, metrics+"/metrics")
	if s["strata_fetch_sessions"] < 1 || s["strata_fetch_session_partitions"] < partitions {
		t.Fatalf("strata_fetch_sessions %v, strata_fetch_session_partitions %v: the consumer opened no session of its %d partitions",
			s["strata_fetch_sessions"], s["strata_fetch_session_partitions"], partitions)
	}
}

// TestFetchSessionDuplicateWhileLongPolling: a fetch of epoch n long-polls
// with file regions read (a consumer far behind, min.bytes not reached)
// while another request moves the session on. The first is answered
// INVALID_FETCH_SESSION_EPOCH, cleanly: its regions are dropped with its
// partitions, and the connection goes on serving.
func TestFetchSessionDuplicateWhileLongPolling(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "sessions-dup"
	createTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b.Addr)
	for i := range 200 {
		produceSync(t, cl, &kgo.Record{Topic: topic, Value: make([]byte, 1024), Key: []byte(value("k", i))})
	}
	f := sessionFetcher{t: t, cl: cl, topicID: topicIDOf(t, adm, topic)}
	id := f.fetch(0, 0, map[int32]int64{0: 200}).SessionID
	if id == 0 {
		t.Fatal("no session")
	}

	// Epoch 1 rewinds to 0 and asks for more than there is, so it waits
	// out its max wait with the backlog read as a file region.
	slow := consumerFetch("", f.topicID, map[int32]int64{0: 0}, 1<<20)
	slow.MaxWaitMillis, slow.MinBytes, slow.SessionID, slow.SessionEpoch = 4000, 10<<20, id, 1
	slowDone := make(chan *kmsg.FetchResponse, 1)
	slowErr := make(chan error, 1)
	go func() {
		resp, err := slow.RequestWith(testContext(t, 20*time.Second), cl)
		slowDone <- resp
		slowErr <- err
	}()
	// Epoch 2 is refused until the slow fetch has begun (and moved the
	// session to 2); then it overtakes it.
	other := sessionFetcher{t: t, cl: newClient(t, b.Addr), topicID: f.topicID}
	for try := 0; ; try++ {
		resp := other.fetch(id, 2, nil)
		if resp.ErrorCode == 0 {
			break
		}
		if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || try == 40 {
			t.Fatalf("epoch 2 while epoch 1 waits: error %d", resp.ErrorCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp := <-slowDone
	if err := <-slowErr; err != nil {
		t.Fatalf("the overtaken fetch: %v", err)
	}
	if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(resp.Topics) != 0 {
		t.Fatalf("the overtaken fetch: error %d, %d topics; want INVALID_FETCH_SESSION_EPOCH and nothing else", resp.ErrorCode, len(resp.Topics))
	}
	if got := answered(f.fetch(0, -1, map[int32]int64{0: 199})); !slices.Equal(got, []string{"0=0/true"}) {
		t.Fatalf("the connection after the overtaken fetch answered %v", got)
	}
}
