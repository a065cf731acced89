package e2e

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRandomRequestsLeaveTheBrokerServing sends every API that ApiVersions
// advertises, at every version, with random field values (requestFiller:
// edges, special values, names that exist and names that do not), each on
// a connection of its own. Whatever a request holds, the broker must answer
// it with a response that decodes, or close the connection; it must not
// exit, and a client must be able to produce and consume afterwards. A
// librdkafka test once found a DeleteRecords to offset -1001 that panicked
// the broker: this test looks for the next one.
//
// E2E_RANDOM_SEED picks the first seed (default 1) and
// E2E_RANDOM_ROUNDS the number of rounds (default 3), each a sweep of
// every advertised version with its own seed. A failure names the seed,
// the round and the request as JSON.
func TestRandomRequestsLeaveTheBrokerServing(t *testing.T) {
	seed := envInt(t, "E2E_RANDOM_SEED", 1)
	rounds := envInt(t, "E2E_RANDOM_ROUNDS", 3)
	b := startBroker(t, t.TempDir())
	f := prepareRandomRequests(t, b.Addr)
	apis := advertisedAPIs(t, b.Addr)
	var answered, closed, timedOut int
	for round := range rounds {
		f.rng = rand.New(rand.NewPCG(uint64(seed), uint64(round)))
		for _, k := range apis {
			for v := k.MinVersion; v <= k.MaxVersion; v++ {
				req := kmsg.RequestForKey(k.ApiKey)
				req.SetVersion(v)
				f.fillRequest(req)
				what := func() string {
					return fmt.Sprintf("seed %d round %d: %s v%d %s", seed, round, kmsg.NameForKey(k.ApiKey), v, requestJSON(req))
				}
				outcome, err := sendRandomRequest(b.Addr, req)
				if !b.running() {
					t.Fatalf("the broker exited after %s%s", what(), b.crashReport())
				}
				switch {
				case err != nil:
					t.Fatalf("%s: %v", what(), err)
				case outcome == randomAnswered:
					answered++
				case outcome == randomClosed:
					closed++
				default:
					timedOut++
					if os.Getenv("E2E_RANDOM_VERBOSE") != "" {
						t.Logf("not answered: %s", what())
					}
				}
			}
		}
	}
	t.Logf("%d rounds from seed %d: %d answered, %d connections closed, %d not answered within %v",
		rounds, seed, answered, closed, timedOut, randomRequestWait)
	requireHealthy(t, b.Addr, randomHealthTopic, "random requests")
}

const (
	// randomRequestWait is how long a random request may take to be
	// answered. Long polls with a wait the filler chose long are left
	// unanswered when it passes; that is no failure.
	randomRequestWait = 2 * time.Second
	// acksZeroWait is how long a Produce with acks 0 is watched for an
	// answer it must not get.
	acksZeroWait = 100 * time.Millisecond
	// randomHealthTopic is no name the filler uses, so that no random
	// request deletes it.
	randomHealthTopic = "random-health"
)

// prepareRandomRequests creates topics, records, a committed group and a
// transactional producer for the random requests to find, and returns a
// filler whose names include them.
func prepareRandomRequests(t *testing.T, addr string) *requestFiller {
	t.Helper()
	adm := newAdmin(t, addr)
	compact := "compact"
	createTopic(t, adm, "random", 3, nil)
	createTopic(t, adm, "random-compact", 1, map[string]*string{"cleanup.policy": &compact})
	createTopic(t, adm, randomHealthTopic, 1, nil)
	cl := newClient(t, addr)
	produceSync(t, cl, &kgo.Record{Topic: "random", Value: []byte("one")}, &kgo.Record{Topic: "random-compact", Key: []byte("k"), Value: []byte("v")})
	committer := newClient(t, addr, kgo.ConsumerGroup("random-group"), kgo.ConsumeTopics("random"))
	if err := committer.CommitRecords(testContext(t, 20*time.Second), &kgo.Record{Topic: "random", Partition: 0, Offset: 0}); err != nil {
		t.Fatalf("committing for random-group: %v", err)
	}
	txn := newClient(t, addr, kgo.TransactionalID("random-txn"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceSync(t, txn, &kgo.Record{Topic: "random", Value: []byte("in a transaction")})
	if err := txn.EndTransaction(testContext(t, 20*time.Second), kgo.TryCommit); err != nil {
		t.Fatalf("committing random-txn: %v", err)
	}
	details, err := adm.ListTopics(testContext(t, 10*time.Second), "random", "random-compact")
	if err != nil {
		t.Fatal(err)
	}
	f := &requestFiller{
		names: []string{
			"random", "random-compact", "__consumer_offsets", "__transaction_state", "random-group",
			"random-share", "random-txn", "consumer", "range", "share",
			"retention.ms", "retention.bytes", "cleanup.policy", "min.insync.replicas", "segment.bytes",
			"max.message.bytes", "compression.type", "-1", "0", "1", "compact", "delete",
			"User:ANONYMOUS", "User:alice", "User:", "*", "127.0.0.1", "PLAIN", "SCRAM-SHA-256",
		},
		batch: recordBatch(time.Now(), []byte("random")),
	}
	for _, d := range details {
		f.ids = append(f.ids, d.ID)
	}
	return f
}

type randomOutcome int

const (
	randomAnswered randomOutcome = iota
	randomClosed
	randomTimedOut
)

// sendRandomRequest sends req on a connection of its own and reads what
// comes back: an answer that must decode at req's version, the connection
// closed, or nothing within randomRequestWait. An error is a broker fault:
// no connection, or an answer that is not req's response.
func sendRandomRequest(addr string, req kmsg.Request) (randomOutcome, error) {
	c, err := net.DialTimeout("tcp", addr, clientDialTimeout)
	if err != nil {
		return 0, fmt.Errorf("the broker takes no connection: %w", err)
	}
	defer c.Close()
	const correlationID = 11
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("strata-e2e-random")).AppendRequest(nil, req, correlationID)
	if err := c.SetWriteDeadline(time.Now().Add(randomRequestWait)); err != nil {
		return 0, err
	}
	if _, err := c.Write(frame); err != nil {
		return randomClosed, nil // closed while the request was written
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return expectNoAnswer(c)
	}
	resp, err := readFrameOrClose(c, randomRequestWait)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return randomTimedOut, nil
	case err != nil:
		return randomClosed, nil
	}
	return randomAnswered, checkResponseFrame(req, resp, correlationID)
}

// expectNoAnswer checks that nothing comes back on c for a while: a
// Produce with acks 0 gets no response (a refused one closes the
// connection, as Kafka's), and a client would take any answer for the
// answer to its next request.
func expectNoAnswer(c net.Conn) (randomOutcome, error) {
	frame, err := readFrameOrClose(c, acksZeroWait)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return randomAnswered, nil
	case err != nil:
		return randomClosed, nil
	}
	return 0, fmt.Errorf("a Produce with acks 0 got a response of %d bytes", len(frame))
}

// checkResponseFrame checks that frame is req's response: its correlation
// id, then a body that decodes at req's version and encodes back to the
// same bytes.
func checkResponseFrame(req kmsg.Request, frame []byte, correlationID int32) error {
	if len(frame) < 4 || int32(binary.BigEndian.Uint32(frame)) != correlationID {
		return fmt.Errorf("response of %d bytes without correlation id %d", len(frame), correlationID)
	}
	body := frame[4:]
	if req.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		var err error
		if body, err = skipTags(body); err != nil {
			return fmt.Errorf("response header: %w", err)
		}
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decoding the response: %w", err)
	}
	if again := resp.AppendTo(nil); len(again) != len(body) {
		return fmt.Errorf("the response is %d bytes, its decoded form encodes to %d: fields are missing or left over", len(body), len(again))
	}
	return nil
}

// requestJSON shows a request for a failure message.
func requestJSON(req kmsg.Request) string {
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Sprintf("%+v", req)
	}
	return string(b)
}
