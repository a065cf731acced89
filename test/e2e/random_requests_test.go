package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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
// the broker: this test looks for the next one (sendRandomRequests: how to
// run it longer, with other seeds).
func TestRandomRequestsLeaveTheBrokerServing(t *testing.T) {
	b := startBroker(t, t.TempDir())
	f, sweep := prepareRandomRequests(t, b.Addr)
	sendRandomRequests(t, f, sweep, []*Broker{b}, dialBroker)
	requireHealthy(t, b.Addr, randomHealthTopic, "random requests")
}

// TestRandomRequestsWithTheAuthorizerOn is the same against a broker that
// keeps ACLs: random CreateAcls, DescribeAcls and DeleteAcls filters reach
// the ACL store. The test's principal is a super user, so that no ACL the
// requests create locks it out of the final check.
func TestRandomRequestsWithTheAuthorizerOn(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(),
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS")
	f, sweep := prepareRandomRequests(t, b.Addr)
	sendRandomRequests(t, f, sweep, []*Broker{b}, dialBroker)
	requireHealthy(t, b.Addr, randomHealthTopic, "random requests")
}

// TestRandomRequestsAgainstATieredTopic is the same with a topic most of
// whose segments are in the remote tier only: fetches, offset lookups,
// record deletions and epoch queries at random offsets reach the remote
// read path.
func TestRandomRequestsAgainstATieredTopic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTieredBroker(t, dir)
	const tiered = "random-tiered"
	fillTieredTopic(t, b.Addr, tiered, 100)
	waitTiered(t, b.Addr, tiered)
	waitRolledTiered(t, b.Addr, tiered, newSegmentSizes(filepath.Join(dir, tiered+"-0")))
	f, sweep := prepareRandomRequests(t, b.Addr)
	f.topics = append(f.topics, tiered, tiered, tiered) // most topic fields name it
	sendRandomRequests(t, f, sweep, []*Broker{b}, dialBroker)
	requireHealthy(t, b.Addr, randomHealthTopic, "random requests")
}

// TestClusterRandomRequestsLeaveTheNodesServing is the same against a
// three-node cluster, each request to the next node: requests the
// controller serves are forwarded to it, replica fetches and elections
// name other nodes, reassignments move partitions between them. No node
// may exit, and each must serve a client afterwards.
func TestClusterRandomRequestsLeaveTheNodesServing(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, "min.insync.replicas=1")
	f, sweep := prepareRandomRequests(t, c.Nodes[0].Addr)
	sendRandomRequests(t, f, sweep, c.Nodes, dialBroker)
	for _, b := range c.Nodes {
		requireHealthy(t, b.Addr, randomHealthTopic, "random requests")
	}
}

// sendRandomRequests sends E2E_RANDOM_ROUNDS rounds of random requests
// (default 3), each every version of every API the first node advertises,
// request i to node i modulo their number; the seed of round r is
// (E2E_RANDOM_SEED, r), E2E_RANDOM_SEED 1 by default. It fails when a node
// exits, or answers with something that is not the request's response or
// with UNKNOWN_SERVER_ERROR, naming the seed, round and request (as JSON).
// E2E_RANDOM_VERBOSE=1 logs each request left unanswered and the nodes'
// warnings and errors.
func sendRandomRequests(t *testing.T, f *requestFiller, sweep *sweepState, nodes []*Broker, dial func(*Broker) (net.Conn, error)) {
	t.Helper()
	seed := envInt(t, "E2E_RANDOM_SEED", 1)
	rounds := envInt(t, "E2E_RANDOM_ROUNDS", 3)
	verbose := os.Getenv("E2E_RANDOM_VERBOSE") != ""
	apis := advertisedAPIs(t, nodes[0].Addr)
	var sent, answered, closed, timedOut int
	unknown := map[string]int{} // UNKNOWN_SERVER_ERROR answers by API
	clean := map[string]int{}   // answers without an error code by API
	for round := range rounds {
		f.rng = rand.New(rand.NewPCG(uint64(seed), uint64(round)))
		for _, k := range apis {
			for v := k.MinVersion; v <= k.MaxVersion; v++ {
				req := f.request(sweep, k.ApiKey, v)
				to := nodes[sent%len(nodes)]
				sent++
				what := func() string {
					return fmt.Sprintf("seed %d round %d: %s v%d to %s %s", seed, round, kmsg.NameForKey(k.ApiKey), v, to.Addr, requestJSON(req))
				}
				outcome, resp, err := sendRandomRequest(dial, to, req)
				for _, b := range nodes {
					if !b.running() {
						t.Fatalf("the node at %s exited after %s%s", b.Addr, what(), b.crashReport())
					}
				}
				switch {
				case err != nil:
					t.Fatalf("%s: %v", what(), err)
				case outcome == randomAnswered:
					answered++
					if resp != nil {
						f.learn(resp)
					}
					if resp != nil && !hasErrorCode(resp) {
						clean[kmsg.NameForKey(k.ApiKey)]++
					}
					if resp != nil && hasUnknownServerError(resp) {
						unknown[kmsg.NameForKey(k.ApiKey)]++
						if verbose {
							t.Logf("UNKNOWN_SERVER_ERROR: %s", what())
						}
					}
				case outcome == randomClosed:
					closed++
					if verbose {
						t.Logf("connection closed: %s", what())
					}
				default:
					timedOut++
					if verbose {
						t.Logf("not answered: %s", what())
					}
				}
			}
		}
	}
	t.Logf("%d rounds from seed %d: %d answered, %d connections closed, %d not answered within %v",
		rounds, seed, answered, closed, timedOut, randomRequestWait)
	if len(unknown) > 0 {
		t.Errorf("UNKNOWN_SERVER_ERROR (a fault the broker did not name) in answers to %v", unknown)
	}
	if verbose {
		for _, k := range apis {
			if name := kmsg.NameForKey(k.ApiKey); clean[name] == 0 {
				t.Logf("no answer to %s was free of error codes: the random requests may not reach far into its handler", name)
			}
		}
		for _, b := range nodes {
			for line := range strings.Lines(b.output.String()) {
				if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
					t.Logf("%s: %s", b.Addr, strings.TrimSpace(line))
				}
			}
		}
	}
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
// filler whose names include them. It prepares what the version sweep's
// requests need too (sweepFills): half the random requests are one of
// those, valid, with a few fields made random.
func prepareRandomRequests(t *testing.T, addr string) (*requestFiller, *sweepState) {
	t.Helper()
	adm := newAdmin(t, addr)
	for _, topic := range sweepTopics {
		createTopic(t, adm, topic, 1, nil)
	}
	sweep := prepareSweep(t, adm, newClient(t, addr), &sweepState{nodes: 1, addr: addr})
	sweep.groupAddr = addr
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
		topics: slices.Concat([]string{"random", "random-compact", "__consumer_offsets", "__transaction_state"}, sweepTopics),
		groups: []string{"random-group", "random-share", sweepGroup},
		txns:   []string{"random-txn"},
		names: []string{
			"consumer", "range", "share", "retention.ms", "retention.bytes", "cleanup.policy", "min.insync.replicas", "segment.bytes",
			"max.message.bytes", "compression.type", "-1", "0", "1", "compact", "delete",
			"User:ANONYMOUS", "User:alice", "User:", "*", "127.0.0.1", "PLAIN", "SCRAM-SHA-256",
		},
		batch: recordBatch(time.Now(), []byte("random")),
	}
	for _, d := range details {
		f.ids = append(f.ids, d.ID)
	}
	f.ids = append(f.ids, sweep.topicID)
	return f, sweep
}

type randomOutcome int

const (
	randomAnswered randomOutcome = iota
	randomClosed
	randomTimedOut
)

// dialBroker connects to b's first listener.
func dialBroker(b *Broker) (net.Conn, error) {
	return net.DialTimeout("tcp", b.Addr, clientDialTimeout)
}

// sendRandomRequest sends req on a connection of its own (dial's) and reads what
// comes back: an answer that must decode at req's version, the connection
// closed, or nothing within randomRequestWait. An error is a broker fault:
// no connection, or an answer that is not req's response.
func sendRandomRequest(dial func(*Broker) (net.Conn, error), to *Broker, req kmsg.Request) (randomOutcome, kmsg.Response, error) {
	c, err := dial(to)
	if err != nil {
		return 0, nil, fmt.Errorf("the broker takes no connection: %w", err)
	}
	defer c.Close()
	const correlationID = 11
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("strata-e2e-random")).AppendRequest(nil, req, correlationID)
	if err := c.SetWriteDeadline(time.Now().Add(randomRequestWait)); err != nil {
		return 0, nil, err
	}
	if _, err := c.Write(frame); err != nil {
		return randomClosed, nil, nil // closed while the request was written
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		outcome, err := expectNoAnswer(c)
		return outcome, nil, err
	}
	got, err := readFrameOrClose(c, randomRequestWait)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return randomTimedOut, nil, nil
	case err != nil:
		return randomClosed, nil, nil
	}
	resp, err := decodeResponseFrame(req, got, correlationID)
	return randomAnswered, resp, err
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

// decodeResponseFrame decodes frame as req's response: its correlation id,
// then a body that decodes at req's version and encodes back to the same
// bytes.
func decodeResponseFrame(req kmsg.Request, frame []byte, correlationID int32) (kmsg.Response, error) {
	body, err := responseBody(req, frame, correlationID)
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decoding the response: %w", err)
	}
	if again := resp.AppendTo(nil); !bytes.Equal(again, body) {
		return nil, fmt.Errorf("the response is %d bytes, its decoded form encodes to %d (first difference at byte %d): fields are missing or left over",
			len(body), len(again), firstDifference(body, again))
	}
	return resp, nil
}

// hasErrorCode reports whether any error code in resp is not zero.
func hasErrorCode(resp kmsg.Response) bool {
	for _, ec := range errorCodes(resp) {
		if ec.code != 0 {
			return true
		}
	}
	return false
}

// hasUnknownServerError reports whether any error code in resp is
// UNKNOWN_SERVER_ERROR.
func hasUnknownServerError(resp kmsg.Response) bool {
	for _, ec := range errorCodes(resp) {
		if ec.code == kerr.UnknownServerError.Code {
			return true
		}
	}
	return false
}

// requestJSON shows a request for a failure message.
func requestJSON(req any) string {
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Sprintf("%+v", req)
	}
	return string(b)
}
