package runtime

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memLog is an in-memory partition: Append stores records only if its wait
// succeeds; readGate, when set, holds ReadFrom until closed.
type memLog struct {
	mu        sync.Mutex
	recs      []Record
	failNext  error         // the next wait returns it (and stores nothing)
	waitGate  chan struct{} // when set, wait blocks until it is closed
	readGate  chan struct{}
	readBatch int
}

func (l *memLog) ReadFrom(from base.Offset) ([]Record, base.Offset, error) {
	l.mu.Lock()
	gate := l.readGate
	l.mu.Unlock()
	if gate != nil {
		<-gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	end := min(int(from)+l.readBatch, len(l.recs))
	if int(from) >= end {
		return nil, from, nil
	}
	return append([]Record(nil), l.recs[from:end]...), base.Offset(end), nil
}

func (l *memLog) Append(recs []Record) (func() error, error) {
	return l.store(recs)
}

// AppendTxn stores recs as records of producer p.
func (l *memLog) AppendTxn(p Producer, recs []Record) (func() error, error) {
	stored := make([]Record, len(recs))
	for i, r := range recs {
		stored[i] = Record{Key: r.Key, Value: r.Value, Txn: &p}
	}
	return l.store(stored)
}

// AppendMarker stores m as a marker record.
func (l *memLog) AppendMarker(m Marker) (func() error, error) {
	return l.store([]Record{{Marker: &m}})
}

// holdWaits makes the durability waits of the appends from now on block
// until releaseWaits; fail, if not nil, fails the next one.
func (l *memLog) holdWaits(fail error) chan struct{} {
	gate := make(chan struct{})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitGate = gate
	if fail != nil {
		l.failNext = fail
	}
	return gate
}

// releaseWaits lets the waits held by gate, and every later one, through.
func (l *memLog) releaseWaits(gate chan struct{}) {
	l.mu.Lock()
	l.waitGate = nil
	l.mu.Unlock()
	close(gate)
}

func (l *memLog) store(recs []Record) (func() error, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fail, gate := l.failNext, l.waitGate
	l.failNext = nil
	return func() error {
		if gate != nil {
			<-gate
		}
		if fail != nil {
			return fail
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.recs = append(l.recs, recs...)
		return nil
	}, nil
}

// kvShard is a trivial shard: Heartbeat{Group: k, MemberID: v} sets k=v
// (one record); DescribeGroups{Groups: [k]} reads k; JoinGroup waits for
// the next Tick.
type kvShard struct {
	kv    map[string]string
	joins []Op
	// wakeIn, when set, is how far ahead of each Tick its WakeAt lies.
	wakeIn time.Duration
}

func (s *kvShard) Handle(op Op, now time.Time) Result {
	switch req := op.Req.(type) {
	case *kmsg.HeartbeatRequest:
		s.kv[req.Group] = req.MemberID
		return Result{
			Records: []Record{{Key: []byte(req.Group), Value: []byte(req.MemberID)}},
			Replies: []Reply{{Token: op.Token, Resp: req.ResponseKind()}},
		}
	case *kmsg.DescribeGroupsRequest:
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		resp.Groups = []kmsg.DescribeGroupsResponseGroup{{Group: s.kv[req.Groups[0]]}}
		return Result{Replies: []Reply{{Token: op.Token, Resp: resp}}}
	case *kmsg.JoinGroupRequest:
		s.joins = append(s.joins, op)
		return Result{}
	}
	panic("kvShard: unserved request")
}

func (s *kvShard) Tick(now time.Time) Result {
	var res Result
	for _, op := range s.joins {
		resp := op.Req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.MemberID = "joined"
		res.Replies = append(res.Replies, Reply{Token: op.Token, Resp: resp})
	}
	s.joins = nil
	if s.wakeIn > 0 {
		res.WakeAt = now.Add(s.wakeIn)
	}
	return res
}

func (s *kvShard) Replay(key, value []byte) error {
	if len(key) == 0 {
		return errors.New("empty key")
	}
	s.kv[string(key)] = string(value)
	return nil
}

func errorResponse(req kmsg.Request, code int16) kmsg.Response {
	switch resp := req.ResponseKind().(type) {
	case *kmsg.HeartbeatResponse:
		resp.ErrorCode = code
		return resp
	case *kmsg.DescribeGroupsResponse:
		resp.Groups = []kmsg.DescribeGroupsResponseGroup{{ErrorCode: code}}
		return resp
	case *kmsg.JoinGroupResponse:
		resp.ErrorCode = code
		return resp
	}
	panic("errorResponse: unserved request")
}

type manualTicker struct{ c chan time.Time }

func (m manualTicker) C() <-chan time.Time { return m.c }
func (m manualTicker) Stop()               {}

type fixture struct {
	t    *testing.T
	log  *memLog
	tick chan time.Time
	rt   *Runtime
}

func newFixture(t *testing.T, log *memLog) *fixture {
	return newFixtureWith(t, log, func(o *Options) {})
}

// newFixtureWith is newFixture with options changed by edit.
func newFixtureWith(t *testing.T, log *memLog, edit func(*Options)) *fixture {
	f := &fixture{t: t, log: log, tick: make(chan time.Time)}
	opts := Options{
		NewShard:      func(int32) (Shard, error) { return &kvShard{kv: map[string]string{}}, nil },
		Open:          func(int32) (Log, Appender, error) { return f.log, f.log, nil },
		ErrorResponse: errorResponse,
		Clock:         clock.NewManual(time.Unix(0, 0)),
		NewTicker:     func() Ticker { return manualTicker{f.tick} },
		MaxQueuedOps:  100,
	}
	edit(&opts)
	rt, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.rt = rt
	t.Cleanup(rt.Close)
	return f
}

// submit returns a channel that gets the response.
func (f *fixture) submit(req kmsg.Request) chan kmsg.Response {
	ch := make(chan kmsg.Response, 1)
	f.rt.Submit(0, req, Client{ID: "c"}, func(r kmsg.Response) { ch <- r })
	return ch
}

func recv(t *testing.T, ch chan kmsg.Response) kmsg.Response {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no response")
		return nil
	}
}

func set(k, v string) *kmsg.HeartbeatRequest {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Group, r.MemberID = k, v
	return r
}

func get(k string) *kmsg.DescribeGroupsRequest {
	r := kmsg.NewPtrDescribeGroupsRequest()
	r.Groups = []string{k}
	return r
}

// read waits for the partition to load and returns k's value.
func (f *fixture) read(k string) string {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		g := recv(f.t, f.submit(get(k))).(*kmsg.DescribeGroupsResponse).Groups[0]
		if g.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
			time.Sleep(time.Millisecond)
			continue
		}
		if g.ErrorCode != 0 {
			f.t.Fatalf("read %s: %v", k, kerr.ErrorForCode(g.ErrorCode))
		}
		return g.Group
	}
	f.t.Fatal("the partition never loaded")
	return ""
}

func TestOpsDuringLoadGetLoadInProgress(t *testing.T) {
	gate := make(chan struct{})
	log := &memLog{recs: []Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("a"), Value: []byte("2")}, {Key: []byte("b"), Value: []byte("3")}}, readGate: gate, readBatch: 2}
	f := newFixture(t, log)
	f.rt.Start(0)
	code := recv(t, f.submit(set("a", "x"))).(*kmsg.HeartbeatResponse).ErrorCode
	if code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("op during load: %v", kerr.ErrorForCode(code))
	}
	log.mu.Lock()
	log.readGate = nil
	log.mu.Unlock()
	close(gate)
	if a, b := f.read("a"), f.read("b"); a != "2" || b != "3" {
		t.Fatalf("loaded a=%q b=%q", a, b)
	}
}

// With LoadHold, an op that arrives during the load waits for it and is
// answered on the loaded state; one held longer than LoadHold is refused
// with COORDINATOR_LOAD_IN_PROGRESS once the load reads on.
func TestOpsDuringLoadAreHeldForLoadHold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waited  time.Duration
		want    int16
		wantVal string
	}{
		{"within the hold", 999 * time.Millisecond, 0, "x"},
		{"past the hold", time.Second, kerr.CoordinatorLoadInProgress.Code, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			log := &memLog{recs: []Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("a"), Value: []byte("2")}}, readGate: gate, readBatch: 1}
			clk := clock.NewManual(time.Unix(0, 0))
			f := newFixtureWith(t, log, func(o *Options) { o.LoadHold, o.Clock = time.Second, clk })
			f.rt.Start(0)
			ch := f.submit(set("a", "x"))
			select {
			case r := <-ch:
				t.Fatalf("answered during the load: %+v", r)
			case <-time.After(30 * time.Millisecond):
			}
			clk.Advance(tc.waited)
			log.mu.Lock()
			log.readGate = nil
			log.mu.Unlock()
			close(gate)
			if code := recv(t, ch).(*kmsg.HeartbeatResponse).ErrorCode; code != tc.want {
				t.Fatalf("held op: %v, want %v", kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
			}
			if got := f.read("a"); got != tc.wantVal {
				t.Fatalf("a = %q after the load, want %q", got, tc.wantVal)
			}
		})
	}
}

func TestUnknownPartitionIsNotCoordinator(t *testing.T) {
	f := newFixture(t, &memLog{readBatch: 10})
	code := recv(t, f.submit(set("a", "x"))).(*kmsg.HeartbeatResponse).ErrorCode
	if code != kerr.NotCoordinator.Code {
		t.Fatalf("op on a partition not led here: %v", kerr.ErrorForCode(code))
	}
}

func TestReplyOnlyAfterAppendIsDurable(t *testing.T) {
	log := &memLog{readBatch: 10}
	f := newFixture(t, log)
	f.rt.Start(0)
	f.read("warm")
	gate := log.holdWaits(nil)
	ch := f.submit(set("a", "x"))
	select {
	case <-ch:
		t.Fatal("the reply came before the append was durable")
	case <-time.After(50 * time.Millisecond):
	}
	log.releaseWaits(gate)
	if code := recv(t, ch).(*kmsg.HeartbeatResponse).ErrorCode; code != 0 {
		t.Fatalf("durable op: %v", kerr.ErrorForCode(code))
	}
	if f.read("a") != "x" {
		t.Fatal("the write is not visible")
	}
}

func TestTickReleasesDeferredReplies(t *testing.T) {
	f := newFixture(t, &memLog{readBatch: 10})
	f.rt.Start(0)
	f.read("warm")
	ch := f.submit(kmsg.NewPtrJoinGroupRequest())
	f.read("again") // the join has been handled and is waiting
	select {
	case <-ch:
		t.Fatal("a deferred reply came without a tick")
	default:
	}
	f.tick <- time.Time{}
	if id := recv(t, ch).(*kmsg.JoinGroupResponse).MemberID; id != "joined" {
		t.Fatalf("deferred reply %q", id)
	}
}

func TestAppendFailureFailsOutstandingAndReloads(t *testing.T) {
	log := &memLog{readBatch: 10}
	f := newFixture(t, log)
	f.rt.Start(0)
	if code := recv(t, f.submit(set("a", "1"))).(*kmsg.HeartbeatResponse).ErrorCode; code != 0 && code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatal(kerr.ErrorForCode(code))
	}
	f.read("a")
	recv(t, f.submit(set("a", "1")))
	join := f.submit(kmsg.NewPtrJoinGroupRequest())
	log.mu.Lock()
	log.failNext = errors.New("disk on fire")
	log.mu.Unlock()
	if code := recv(t, f.submit(set("a", "2"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %v", kerr.ErrorForCode(code))
	}
	if code := recv(t, join).(*kmsg.JoinGroupResponse).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("deferred op after a failed append: %v", kerr.ErrorForCode(code))
	}
	f.tick <- time.Time{} // reloads
	if got := f.read("a"); got != "1" {
		t.Fatalf("after reload a=%q, want the durable 1", got)
	}
	log.mu.Lock()
	log.failNext = ErrNotLeader
	log.mu.Unlock()
	if code := recv(t, f.submit(set("a", "3"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("append as a former leader: %v", kerr.ErrorForCode(code))
	}
}

func TestResignAnswersOutstandingOps(t *testing.T) {
	f := newFixture(t, &memLog{readBatch: 10})
	f.rt.Start(0)
	f.read("warm")
	join := f.submit(kmsg.NewPtrJoinGroupRequest())
	f.read("again")
	f.rt.Resign(0)
	if code := recv(t, join).(*kmsg.JoinGroupResponse).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("deferred op at resign: %v", kerr.ErrorForCode(code))
	}
	if code := recv(t, f.submit(set("a", "1"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("op after resign: %v", kerr.ErrorForCode(code))
	}
	f.rt.Start(0) // leading it again loads what was written
	if f.read("warm") != "" {
		t.Fatal("unexpected state")
	}
}

func TestConcurrentSubmitters(t *testing.T) {
	f := newFixture(t, &memLog{readBatch: 3})
	f.rt.Start(0)
	f.rt.Start(1)
	f.read("warm")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				ch := make(chan kmsg.Response, 1)
				f.rt.Submit(int32(j%2), set("k", string(rune('a'+i))), Client{}, func(r kmsg.Response) { ch <- r })
				recv(t, ch)
			}
		})
	}
	wg.Wait()
	f.rt.Close()
}
