package runtime

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
)

// Tests of the partition lifecycle (start, open, load, resign, close) and
// of what apply does around a durable append.

func TestOptionsValidate(t *testing.T) {
	valid := func() Options {
		return Options{
			NewShard:      func(int32) (Shard, error) { return nil, nil },
			Open:          func(int32) (Log, Appender, error) { return nil, nil, nil },
			ErrorResponse: errorResponse,
			Clock:         clock.NewManual(time.Unix(0, 0)),
			NewTicker:     func() Ticker { return manualTicker{} },
			MaxQueuedOps:  1,
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		ok   bool
	}{
		{"valid", func(*Options) {}, true},
		{"LoadHold zero is valid", func(o *Options) { o.LoadHold = 0 }, true},
		{"no NewShard", func(o *Options) { o.NewShard = nil }, false},
		{"no Open", func(o *Options) { o.Open = nil }, false},
		{"no ErrorResponse", func(o *Options) { o.ErrorResponse = nil }, false},
		{"no Clock", func(o *Options) { o.Clock = nil }, false},
		{"no NewTicker", func(o *Options) { o.NewTicker = nil }, false},
		{"MaxQueuedOps zero", func(o *Options) { o.MaxQueuedOps = 0 }, false},
		{"LoadHold negative", func(o *Options) { o.LoadHold = -time.Nanosecond }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.edit(&o)
			if err := o.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tc.ok)
			}
			if _, err := New(o); (err == nil) != tc.ok {
				t.Fatalf("New() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// countOpens makes a fixture whose Open counts its calls.
func countOpens(t *testing.T, log *memLog) (*fixture, *atomic.Int32) {
	var opens atomic.Int32
	f := newFixtureWith(t, log, func(o *Options) {
		o.Open = func(int32) (Log, Appender, error) {
			opens.Add(1)
			return log, log, nil
		}
	})
	return f, &opens
}

// A second Start of a partition keeps the one goroutine that serves it; a
// Start after Close is ignored (and starts no goroutine: goleak).
func TestStartTwiceAndStartAfterClose(t *testing.T) {
	f, opens := countOpens(t, &memLog{readBatch: 10})
	f.rt.Start(0)
	f.read("x") // loaded
	recv(t, f.submit(set("warm", "1")))
	f.rt.Start(0)
	if got := f.read("warm"); got != "1" || opens.Load() != 1 {
		t.Fatalf("after a second Start: warm=%q, %d opens; want 1, 1", got, opens.Load())
	}
	f.rt.Close()
	f.rt.Start(0)
	if h := f.rt.Hosted(); len(h) != 0 {
		t.Fatalf("Hosted() after Close and Start = %v", h)
	}
	if code := recv(t, f.submit(set("a", "x"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("op after Close and Start: %v", kerr.ErrorForCode(code))
	}
	if opens.Load() != 1 {
		t.Fatalf("Start after Close opened the partition (%d opens)", opens.Load())
	}
}

// A partition whose log cannot be opened answers NOT_COORDINATOR: the ops
// held while it opened, and every later one, whether or not ops are held.
func TestOpenFailureAnswersNotCoordinator(t *testing.T) {
	for _, hold := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprintf("LoadHold %v", hold), func(t *testing.T) {
			gate := make(chan struct{})
			f := newFixtureWith(t, &memLog{readBatch: 10}, func(o *Options) {
				o.LoadHold = hold
				o.Open = func(int32) (Log, Appender, error) {
					<-gate
					return nil, nil, errors.New("no such directory")
				}
			})
			f.rt.Start(0)
			held := f.submit(set("a", "x"))
			close(gate)
			want := kerr.NotCoordinator.Code
			if hold == 0 {
				want = kerr.CoordinatorLoadInProgress.Code // refused at once, while opening
			}
			if code := recv(t, held).(*kmsg.HeartbeatResponse).ErrorCode; code != want {
				t.Fatalf("op during the open: %v, want %v", kerr.ErrorForCode(code), kerr.ErrorForCode(want))
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				code := recv(t, f.submit(set("a", "x"))).(*kmsg.HeartbeatResponse).ErrorCode
				if code == kerr.NotCoordinator.Code {
					return
				}
				if code != kerr.CoordinatorLoadInProgress.Code || time.Now().After(deadline) {
					t.Fatalf("op after the failed open: %v, want NOT_COORDINATOR", kerr.ErrorForCode(code))
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// MaxQueuedOps bounds the ops waiting for the partition's goroutine (here
// held through a load): one more is refused at once, retriably.
func TestFullQueueIsCoordinatorNotAvailable(t *testing.T) {
	gate := make(chan struct{})
	log := &memLog{recs: []Record{{Key: []byte("a"), Value: []byte("1")}}, readGate: gate, readBatch: 1}
	f := newFixtureWith(t, log, func(o *Options) { o.MaxQueuedOps, o.LoadHold = 2, time.Minute })
	var release sync.Once
	open := func() {
		release.Do(func() {
			log.mu.Lock()
			log.readGate = nil
			log.mu.Unlock()
			close(gate)
		})
	}
	t.Cleanup(open) // before the fixture's Close, which waits for the load
	f.rt.Start(0)
	first, second := f.submit(set("a", "x")), f.submit(set("b", "y"))
	if code := recv(t, f.submit(set("c", "z"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("op over MaxQueuedOps: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(code))
	}
	open()
	for _, ch := range []chan kmsg.Response{first, second} {
		if code := recv(t, ch).(*kmsg.HeartbeatResponse).ErrorCode; code != 0 {
			t.Fatalf("queued op: %v", kerr.ErrorForCode(code))
		}
	}
}

// failingReads is a memLog whose ReadFrom fails on the calls listed.
type failingReads struct {
	*memLog
	mu    sync.Mutex
	calls int
	fail  map[int]bool // call number (from 1) -> fail it
}

func (l *failingReads) ReadFrom(from base.Offset) ([]Record, base.Offset, error) {
	l.mu.Lock()
	l.calls++
	fail := l.fail[l.calls]
	l.mu.Unlock()
	if fail {
		return nil, from, errors.New("read error")
	}
	return l.memLog.ReadFrom(from)
}

func (l *failingReads) callCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// A read that fails half-way through a load leaves the partition loading:
// it never serves the state read so far, and the next tick loads it all.
func TestLoadReadErrorServesNothingUntilReloaded(t *testing.T) {
	mem := &memLog{recs: []Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("a"), Value: []byte("2")}}, readBatch: 1}
	log := &failingReads{memLog: mem, fail: map[int]bool{2: true}}
	f := newFixtureWith(t, mem, func(o *Options) {
		o.Open = func(int32) (Log, Appender, error) { return log, mem, nil }
	})
	f.rt.Start(0)
	deadline := time.Now().Add(5 * time.Second)
	for log.callCount() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the load never read twice")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let a wrong load install its shard
	g := recv(t, f.submit(get("a"))).(*kmsg.DescribeGroupsResponse).Groups[0]
	if g.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("after a failed read: %v, value %q; want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(g.ErrorCode), g.Group)
	}
	f.tick <- time.Time{} // reloads
	if got := f.read("a"); got != "2" {
		t.Fatalf("after the reload a=%q, want 2", got)
	}
}

// endlessLog never ends: every read returns one more record.
type endlessLog struct{ memLog }

func (*endlessLog) ReadFrom(from base.Offset) ([]Record, base.Offset, error) {
	return []Record{{Key: []byte("k"), Value: []byte("v")}}, from + 1, nil
}

func TestResignStopsALoad(t *testing.T) {
	log := &endlessLog{}
	f := newFixtureWith(t, &log.memLog, func(o *Options) {
		o.Open = func(int32) (Log, Appender, error) { return log, &log.memLog, nil }
	})
	f.rt.Start(0)
	resigned := make(chan struct{})
	go func() {
		f.rt.Resign(0)
		close(resigned)
	}()
	select {
	case <-resigned:
	case <-time.After(5 * time.Second):
		t.Fatal("Resign did not stop a load")
	}
}

// clientShard is kvShard that keeps the last op it handled.
type clientShard struct {
	kvShard
	mu   sync.Mutex
	last Op
}

func (s *clientShard) Handle(op Op, now time.Time) Result {
	s.mu.Lock()
	s.last = op
	s.mu.Unlock()
	return s.kvShard.Handle(op, now)
}

func TestOpCarriesTheClient(t *testing.T) {
	shard := &clientShard{kvShard: kvShard{kv: map[string]string{}}}
	f := newFixtureWith(t, &memLog{readBatch: 10}, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) { return shard, nil }
	})
	f.rt.Start(0)
	f.read("warm")
	ch := make(chan kmsg.Response, 1)
	visible := func(topic string) bool { return topic == "mine" }
	f.rt.Submit(0, set("a", "x"), Client{ID: "client-7", Host: "10.0.0.1:5555", TopicVisible: visible}, func(r kmsg.Response) { ch <- r })
	recv(t, ch)
	shard.mu.Lock()
	op := shard.last
	shard.mu.Unlock()
	if op.ClientID != "client-7" || op.ClientHost != "10.0.0.1:5555" || op.TopicVisible == nil ||
		!op.TopicVisible("mine") || op.TopicVisible("other") {
		t.Fatalf("op ClientID %q ClientHost %q TopicVisible set %v; want the client's", op.ClientID, op.ClientHost, op.TopicVisible != nil)
	}
}

// A commit's effects are handed over only once its marker is durable, and
// never if the append fails.
func TestEffectsOnlyOnceDurable(t *testing.T) {
	log := &memLog{readBatch: 10}
	effects := make(chan any, 10)
	f := newFixtureWith(t, log, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) { return &txnShard{kvShard: kvShard{kv: map[string]string{}}}, nil }
		o.OnEffects = func(_ int32, effs []any) {
			for _, e := range effs {
				effects <- e
			}
		}
	})
	f.rt.Start(0)
	f.read("warm")
	gate := log.holdWaits(nil)
	var release sync.Once
	durable := func() {
		release.Do(func() { log.releaseWaits(gate) })
	}
	t.Cleanup(durable) // before the fixture's Close, which waits for the append
	done := f.submitEvent(0, txnEvent{pid: 7, commit: true})
	select {
	case e := <-effects:
		t.Fatalf("effect %v before the marker was durable", e)
	case <-time.After(50 * time.Millisecond):
	}
	durable()
	if err := recvErr(t, done); err != nil {
		t.Fatal(err)
	}
	if len(effects) != 1 {
		t.Fatalf("%d effects after the commit, want 1", len(effects))
	}
	<-effects

	log.mu.Lock()
	log.failNext = errors.New("disk on fire")
	log.mu.Unlock()
	if err := recvErr(t, f.submitEvent(0, txnEvent{pid: 8, commit: true})); err == nil {
		t.Fatal("a commit whose marker failed succeeded")
	}
	if len(effects) != 0 {
		t.Fatalf("effect %v of a commit whose marker failed", <-effects)
	}
}

// An op is answered exactly once: one already answered is not failed again
// when a later append fails.
func TestAnsweredOpIsNotFailedAgain(t *testing.T) {
	log := &memLog{readBatch: 10}
	f := newFixture(t, log)
	f.rt.Start(0)
	f.read("warm")
	var calls atomic.Int32
	answered := make(chan struct{}, 2)
	f.rt.Submit(0, set("a", "1"), Client{}, func(kmsg.Response) { calls.Add(1); answered <- struct{}{} })
	<-answered
	log.mu.Lock()
	log.failNext = errors.New("disk on fire")
	log.mu.Unlock()
	recv(t, f.submit(set("a", "2")))
	f.tick <- time.Time{} // reloads: the goroutine is past the failure
	f.read("a")
	if n := calls.Load(); n != 1 {
		t.Fatalf("done called %d times, want 1", n)
	}
}

// faultyAppender is memLog with errors from Append or AppendMarker
// themselves, or from the wait of a marker's append.
type faultyAppender struct {
	*memLog
	appendErr, markerErr, markerWaitErr error
}

func (a *faultyAppender) Append(recs []Record) (func() error, error) {
	if a.appendErr != nil {
		return nil, a.appendErr
	}
	return a.memLog.Append(recs)
}

func (a *faultyAppender) AppendMarker(m Marker) (func() error, error) {
	if a.markerErr != nil {
		return nil, a.markerErr
	}
	wait, err := a.memLog.AppendMarker(m)
	if a.markerWaitErr != nil {
		return func() error { return a.markerWaitErr }, err
	}
	return wait, err
}

// recordsAndMarker is an event whose Result has both records and a marker.
type recordsAndMarker struct{}

// bothShard is txnShard that answers recordsAndMarker with a record, a
// commit marker and an effect in one Result.
type bothShard struct{ txnShard }

func (s *bothShard) Handle(op Op, now time.Time) Result {
	if _, ok := op.Event.(recordsAndMarker); !ok {
		return s.txnShard.Handle(op, now)
	}
	return Result{
		Records: []Record{{Key: []byte("k"), Value: []byte("v")}},
		Markers: []Marker{{Producer: Producer{ID: 1, Epoch: 3}, Commit: true, CoordinatorEpoch: 9}},
		Effects: []any{"committed"},
		Replies: []Reply{{Token: op.Token}},
	}
}

// Every failure of an append, from the append call or from any of the
// waits, fails the op COORDINATOR_NOT_AVAILABLE and hands over no effect.
func TestAppendErrorsFailTheOp(t *testing.T) {
	for _, tc := range []struct {
		name string
		app  func(*faultyAppender)
		ev   any // nil: a request that appends one record
	}{
		{"Append fails", func(a *faultyAppender) { a.appendErr = errors.New("full") }, nil},
		{"AppendMarker fails", func(a *faultyAppender) { a.markerErr = errors.New("full") }, txnEvent{pid: 1, commit: true}},
		{"the marker's wait fails after the records'", func(a *faultyAppender) { a.markerWaitErr = errors.New("fsync") }, recordsAndMarker{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &memLog{readBatch: 10}
			app := &faultyAppender{memLog: mem}
			var effects atomic.Int32
			f := newFixtureWith(t, mem, func(o *Options) {
				o.Open = func(int32) (Log, Appender, error) { return mem, app, nil }
				o.NewShard = func(int32) (Shard, error) {
					return &bothShard{txnShard{kvShard: kvShard{kv: map[string]string{}}}}, nil
				}
				o.OnEffects = func(int32, []any) { effects.Add(1) }
			})
			f.rt.Start(0)
			f.read("warm")
			tc.app(app)
			if tc.ev == nil {
				if code := recv(t, f.submit(set("a", "x"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
					t.Fatalf("op whose append failed: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(code))
				}
				return
			}
			var ce *CodeError
			if err := recvErr(t, f.submitEvent(0, tc.ev)); !errors.As(err, &ce) || ce.Code != kerr.CoordinatorNotAvailable.Code {
				t.Fatalf("event whose append failed: %v, want COORDINATOR_NOT_AVAILABLE", err)
			}
			if n := effects.Load(); n != 0 {
				t.Fatalf("%d effects handed over from a failed append", n)
			}
		})
	}
}

// An op queued before an append failed, and handled after the failure
// dropped the shard, is told to retry: COORDINATOR_LOAD_IN_PROGRESS.
func TestOpQueuedBehindAFailedAppendIsLoadInProgress(t *testing.T) {
	log := &memLog{readBatch: 10}
	f := newFixture(t, log)
	f.rt.Start(0)
	f.read("warm")
	gate := log.holdWaits(errors.New("disk on fire"))
	failing := f.submit(set("a", "1"))
	behind := f.submit(set("b", "2"))
	log.releaseWaits(gate)
	if code := recv(t, failing).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %v", kerr.ErrorForCode(code))
	}
	if code := recv(t, behind).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("op behind the failed append: %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(code))
	}
}

func TestCodeErrorNamesTheCode(t *testing.T) {
	err := &CodeError{Code: kerr.NotCoordinator.Code}
	if got := err.Error(); got != "runtime: event not run: "+kerr.NotCoordinator.Error() {
		t.Fatalf("Error() = %q", got)
	}
}
