package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// walker is one walk's client: a connection to each node it talks to,
// its choice of version for each API (a client keeps one), where it last
// found each coordinator and partition leader, and its own randomness.
type walker struct {
	t         *testing.T
	env       *walkEnv
	name      string
	rng       *rand.Rand
	f         requestFiller
	versions  map[int16]int16
	home      int32   // the partition whose leader its share requests go to
	homeParts []int32 // the partitions that node leads (homePartitions)
	conns     map[*Broker]net.Conn
	corr      int32
	routes    map[walkRoute]*Broker
	mutated   bool // whether send changed a field of its last request
	// onMutate, when set, runs when send has changed a field of a request,
	// before it goes out: what the walk tracks of its own state must be
	// forgotten before the broker can act on it.
	onMutate func()
}

func (env *walkEnv) newWalker(t *testing.T, i int) *walker {
	w := &walker{
		t: t, env: env, name: fmt.Sprintf("walker %d", i), versions: map[int16]int16{}, home: int32(i % walkPartitions),
		conns: map[*Broker]net.Conn{}, routes: map[walkRoute]*Broker{},
	}
	w.rng = rand.New(rand.NewPCG(uint64(env.seed), uint64(i)))
	w.f = env.filler
	w.f.rng = w.rng
	return w
}

func (w *walker) close() {
	for _, c := range w.conns {
		c.Close()
	}
}

// pick is the step a walk takes: next, the protocol's, or one in
// walkAnyStepOneIn times any of its steps.
func (w *walker) pick(next, steps int) int {
	if w.rng.IntN(walkAnyStepOneIn) == 0 {
		return w.rng.IntN(steps)
	}
	return next
}

// oneIn reports true one time in n.
func (w *walker) oneIn(n int) bool { return w.rng.IntN(n) == 0 }

// send sends req, at the walker's version of its API, to the node a
// client would send it to (routeOf), one time in walkMutateOneIn with a
// random field, and returns the answer: nil when the API is not
// advertised, the node is unknown, the connection closed or no answer
// came within walkWait (the connection is then dropped; the next request
// opens another). It fails the test for an answer that does not decode,
// one with UNKNOWN_SERVER_ERROR, or a node that exited.
func (w *walker) send(req kmsg.Request) kmsg.Response {
	w.mutated = false
	key := req.Key()
	span, ok := w.env.apis[key]
	if !ok {
		return nil
	}
	v, ok := w.versions[key]
	if !ok {
		v = span[0] + int16(w.rng.IntN(int(span[1]-span[0])+1))
		w.versions[key] = v
	}
	req.SetVersion(v)
	route := w.routeOf(req)
	node := w.resolve(route)
	if node == nil {
		return nil
	}
	w.mutated = w.oneIn(walkMutateOneIn)
	if w.mutated {
		w.f.mutate(req, 1)
		if w.onMutate != nil {
			w.onMutate()
		}
	}
	sentAt := time.Now()
	resp, outcome, err := w.exchange(node, req)
	w.env.count(kmsg.Key(key), outcome, resp)
	w.env.journal(w.name, fmt.Sprintf("%s %s v%d mutated=%v to %s: %v %s -> %s", sentAt.Format("05.000"), kmsg.NameForKey(key), v, w.mutated,
		node.Addr, outcome, clip(requestJSON(req), 400), clip(requestJSON(resp), 300)))
	if os.Getenv("E2E_WALK_TRACE") != "" {
		w.t.Logf("%s %s %s to %s %v after %v: %s -> %s", sentAt.Format("05.000"), w.name, kmsg.NameForKey(key), node.Addr, outcome,
			time.Since(sentAt).Round(time.Millisecond), requestJSON(req), requestJSON(resp))
	}
	what := func() string {
		return fmt.Sprintf("%s (seed %d) %s v%d to %s %s", w.name, w.env.seed, kmsg.NameForKey(key), v, node.Addr, requestJSON(req))
	}
	for _, b := range w.env.nodes {
		if !b.running() {
			w.fail("the node at %s exited after %s%s", b.Addr, what(), b.crashReport())
			return nil
		}
	}
	switch {
	case err != nil:
		w.fail("%s: %v", what(), err)
		return nil
	case outcome != randomAnswered:
		delete(w.routes, route)
	case resp != nil && hasUnknownServerError(resp):
		w.fail("UNKNOWN_SERVER_ERROR (a fault the broker did not name) answering %s", what())
	case resp != nil && saysRetryLater(resp):
		delete(w.routes, route)
		time.Sleep(walkBackoff)
	}
	return resp
}

// walkBackoff is how long a walk waits after being told to retry later,
// as a client backs off.
const walkBackoff = 20 * time.Millisecond

// saysRetryLater reports whether resp carries an error a client retries
// after a pause and a new look for where to send it: the coordinator or
// leader moved or is loading, or a transaction is still ending.
func saysRetryLater(resp kmsg.Response) bool {
	for _, ec := range errorCodes(resp) {
		switch ec.code {
		case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code,
			kerr.ConcurrentTransactions.Code, kerr.NotLeaderForPartition.Code, kerr.LeaderNotAvailable.Code:
			return true
		}
	}
	return false
}

// exchange writes req on the walker's connection to node and reads its
// answer.
func (w *walker) exchange(node *Broker, req kmsg.Request) (kmsg.Response, randomOutcome, error) {
	c := w.conns[node]
	if c == nil {
		var err error
		if c, err = net.DialTimeout("tcp", node.Addr, clientDialTimeout); err != nil {
			return nil, 0, fmt.Errorf("the broker takes no connection: %w", err)
		}
		w.conns[node] = c
	}
	w.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("strata-e2e-walk")).AppendRequest(nil, req, w.corr)
	if err := c.SetWriteDeadline(time.Now().Add(walkWait)); err != nil {
		return nil, 0, err
	}
	if _, err := c.Write(frame); err != nil {
		w.drop(node)
		return nil, randomClosed, nil
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		outcome, err := expectNoAnswer(c)
		if outcome != randomAnswered {
			w.drop(node)
		}
		return nil, outcome, err
	}
	got, err := readFrameOrClose(c, walkWait)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.drop(node)
		return nil, randomTimedOut, nil
	case err != nil:
		w.drop(node)
		return nil, randomClosed, nil
	}
	resp, err := decodeResponseFrame(req, got, w.corr)
	return resp, randomAnswered, err
}

func (w *walker) drop(node *Broker) {
	w.conns[node].Close()
	delete(w.conns, node)
}

// fail fails the test and stops every walk: the first fault is the one
// to read.
func (w *walker) fail(format string, args ...any) {
	if w.env.failed.Swap(true) {
		return
	}
	w.t.Errorf(format, args...)
}

// clip is s cut to n bytes at most.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
