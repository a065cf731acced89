package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEveryAdvertisedVersionAnswers sends every request that ApiVersions
// advertises, at every version of its range, over its own connection, and
// checks each answer: it decodes at that version and encodes back to the
// same bytes (nothing missing, nothing left over), no error code in it is
// UNKNOWN_SERVER_ERROR or UNSUPPORTED_VERSION, and for the APIs a client
// uses to read and write data and topics (sweepChecks) it did what was
// asked. The requests carry real content where an empty one would prove
// little (sweepFills). The broker must serve a client afterwards.
func TestEveryAdvertisedVersionAnswers(t *testing.T) {
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	for _, topic := range sweepTopics {
		createTopic(t, adm, topic, 1, nil)
	}
	s := prepareSweep(t, adm, newClient(t, b.Addr), &sweepState{nodes: 1, addr: b.Addr})
	s.groupAddr = b.Addr
	runSweep(t, s)
}

const (
	sweepTopic       = "sweep"
	sweepGrowTopic   = "sweep-grow"
	sweepDeleteTopic = "sweep-delete"
	sweepConfigTopic = "sweep-configs"
	sweepGroup       = "sweep-group"
	// sweepCommitted is the offset OffsetCommit stores and OffsetFetch reads.
	sweepCommitted = 1
)

// sweepTopics are the topics the sweep's requests use, made before it.
var sweepTopics = []string{sweepTopic, sweepGrowTopic, sweepDeleteTopic, sweepConfigTopic}

// sweepState is where the sweep sends its requests and what they need to
// know.
type sweepState struct {
	nodes int    // brokers in the cluster
	addr  string // the broker asked, leader of the sweep's topics
	// groupAddr is sweepGroup's coordinator, which the group APIs ask.
	groupAddr string
	topicID   [16]byte
}

// target is where the request of key goes.
func (s *sweepState) target(key int16) string {
	switch kmsg.Key(key) {
	case kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.JoinGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.SyncGroup,
		kmsg.DescribeGroups, kmsg.DeleteGroups, kmsg.OffsetDelete:
		return s.groupAddr
	}
	return s.addr
}

// prepareSweep writes what the sweep reads (a record in sweepTopic, five
// in sweepDeleteTopic) and commits an offset for sweepGroup, as a client
// finds the group's coordinator before it commits (the sweep's raw
// OffsetCommit would otherwise race the loading of __consumer_offsets).
func prepareSweep(t *testing.T, adm *kadm.Client, cl *kgo.Client, s *sweepState) *sweepState {
	t.Helper()
	produceSync(t, cl, &kgo.Record{Topic: sweepTopic, Value: []byte("first")})
	for i := range 5 {
		produceSync(t, cl, &kgo.Record{Topic: sweepDeleteTopic, Value: fmt.Appendf(nil, "doomed %d", i)})
	}
	details, err := adm.ListTopics(testContext(t, 10*time.Second), sweepTopic)
	if err != nil {
		t.Fatal(err)
	}
	s.topicID = details[sweepTopic].ID
	var first kadm.Offsets
	first.AddOffset(sweepTopic, 0, 0, -1)
	if err := adm.CommitAllOffsets(testContext(t, 20*time.Second), sweepGroup, first); err != nil {
		t.Fatalf("committing for group %q: %v", sweepGroup, err)
	}
	return s
}

// runSweep sends every advertised API at every version, then checks that
// the broker still serves a client.
func runSweep(t *testing.T, s *sweepState) {
	t.Helper()
	for _, k := range advertisedAPIs(t, s.addr) {
		for v := k.MinVersion; v <= k.MaxVersion; v++ {
			t.Run(fmt.Sprintf("%s/v%d", kmsg.NameForKey(k.ApiKey), v), func(t *testing.T) {
				sweepOne(t, s, k.ApiKey, v)
			})
		}
	}
	requireHealthy(t, s.addr, sweepTopic, "the version sweep")
}

// sweepOne sends key at version v and checks the answer.
func sweepOne(t *testing.T, s *sweepState, key, v int16) {
	req := kmsg.RequestForKey(key)
	if req == nil {
		t.Fatalf("ApiVersions advertises key %d, which the client library does not know", key)
	}
	req.SetVersion(v)
	if fill := sweepFills[key]; fill != nil {
		fill(s, req, v)
	}
	body, closed := sendRaw(t, s.target(key), req)
	if closed {
		if key == kmsg.SASLAuthenticate.Int16() {
			return // Kafka closes a connection that authenticates without a handshake
		}
		t.Fatalf("the broker closed the connection instead of answering")
	}
	resp := req.ResponseKind()
	resp.SetVersion(v)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decoding the response: %v", err)
	}
	if again := resp.AppendTo(nil); !bytes.Equal(again, body) {
		t.Fatalf("the response is %d bytes, its decoded form encodes to %d (first difference at byte %d): fields are missing or left over",
			len(body), len(again), firstDifference(body, again))
	}
	for _, ec := range errorCodes(resp) {
		if ec.code == -1 || ec.code == 35 {
			t.Errorf("%s is %d (UNKNOWN_SERVER_ERROR -1, UNSUPPORTED_VERSION 35)", ec.path, ec.code)
		}
	}
	if check := sweepChecks[key]; check != nil {
		if err := check(s, resp, v); err != nil {
			t.Error(err)
		}
	}
}

// advertisedAPIs asks the broker's ApiVersions (v3) for its key ranges.
func advertisedAPIs(t *testing.T, addr string) []kmsg.ApiVersionsResponseApiKey {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName = "strata-e2e"
	req.ClientSoftwareVersion = "1"
	body, closed := sendRaw(t, addr, req)
	if closed {
		t.Fatal("ApiVersions: connection closed")
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	if err := resp.ReadFrom(body); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions: %v, error code %d", err, resp.ErrorCode)
	}
	if len(resp.ApiKeys) == 0 {
		t.Fatal("ApiVersions advertises nothing")
	}
	return resp.ApiKeys
}

// sendRaw sends req on a new connection and returns the response body after
// its header, or closed when the broker closed the connection instead.
func sendRaw(t *testing.T, addr string, req kmsg.Request) (body []byte, closed bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, clientDialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const correlationID = 7
	writeAll(t, c, kmsg.NewRequestFormatter(kmsg.FormatterClientID("strata-e2e-sweep")).AppendRequest(nil, req, correlationID))
	frame, err := readFrameOrClose(c, rawIOTimeout)
	if err != nil {
		return nil, true
	}
	if body, err = responseBody(req, frame, correlationID); err != nil {
		t.Fatal(err)
	}
	return body, false
}

// responseBody is the body of frame, the response to req sent with
// correlationID, after its header.
func responseBody(req kmsg.Request, frame []byte, correlationID int32) ([]byte, error) {
	if len(frame) < 4 || int32(binary.BigEndian.Uint32(frame)) != correlationID {
		return nil, fmt.Errorf("response of %d bytes without correlation id %d", len(frame), correlationID)
	}
	body := frame[4:]
	// Every flexible response header has tags, but ApiVersions' (KIP-511).
	if req.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		var err error
		if body, err = skipTags(body); err != nil {
			return nil, fmt.Errorf("response header: %w", err)
		}
	}
	return body, nil
}

// readFrameOrClose reads one size-prefixed frame of at most 1 MiB within
// wait, or returns the error that ended the connection.
func readFrameOrClose(c net.Conn, wait time.Duration) ([]byte, error) {
	if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("response claims %d bytes", n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(c, frame); err != nil {
		return nil, err
	}
	return frame, nil
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
