package server

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metrics"
)

func TestValidate(t *testing.T) {
	ln := fakeListener{}
	h := newFakeHandler()
	for _, tc := range []struct {
		name string
		o    Options
		want string // substring of the error; "" means valid
	}{
		{"minimal", Options{Listener: ln, Handler: h}, ""},
		{"no listener", Options{Handler: h}, "Listener"},
		{"no handler", Options{Listener: ln}, "Handler"},
		{"negative max request", Options{Listener: ln, Handler: h, MaxRequestBytes: -1}, "MaxRequestBytes"},
		{"huge in-flight", Options{Listener: ln, Handler: h, MaxInFlightPerConn: 1 << 20}, "MaxInFlightPerConn"},
		{"negative idle", Options{Listener: ln, Handler: h, IdleTimeout: -time.Second}, "IdleTimeout"},
		{"negative drain grace", Options{Listener: ln, Handler: h, DrainGrace: -time.Second}, "DrainGrace"},
		{"OS default buffers", Options{Listener: ln, Handler: h, SendBufferBytes: -1, ReceiveBufferBytes: -1}, ""},
		{"send buffer below -1", Options{Listener: ln, Handler: h, SendBufferBytes: -2}, "SendBufferBytes"},
		{"receive buffer below -1", Options{Listener: ln, Handler: h, ReceiveBufferBytes: -2}, "ReceiveBufferBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

// fakeListener only has to be non-nil for Validate.
type fakeListener struct{ net.Listener }

func TestApiVersionsAndHeaders(t *testing.T) {
	s := startServer(t, newFakeHandler(), nil)
	c := dial(t, s)
	// Flexible ApiVersions still answers with header v0; Metadata v4 uses
	// header v0 and v12 header v1. read checks each header exactly.
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 1)
	c.send(kmsg.NewPtrMetadataRequest(), 4, 2)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 3)
	c.send(kmsg.NewPtrApiVersionsRequest(), 0, 4)
	av := c.read(apiVersionsKey, 3, 1).(*kmsg.ApiVersionsResponse)
	if av.ErrorCode != 0 || len(av.ApiKeys) != 3 {
		t.Fatalf("ApiVersions v3: error %d, keys %v", av.ErrorCode, av.ApiKeys)
	}
	c.read(3, 4, 2)
	c.read(3, 12, 3)
	c.read(apiVersionsKey, 0, 4)
}

// An ApiVersions at a version the broker does not serve is answered as
// Kafka answers it: v0, UNSUPPORTED_VERSION and ApiVersions' range.
func TestUnsupportedApiVersionsAnsweredAtV0(t *testing.T) {
	s := startServer(t, newFakeHandler(), nil)
	for _, version := range []int16{4, 99, -1} {
		c := dial(t, s)
		// A future version's body is unknown to the server: send junk.
		body := binary.BigEndian.AppendUint16(nil, uint16(apiVersionsKey))
		body = binary.BigEndian.AppendUint16(body, uint16(version))
		body = binary.BigEndian.AppendUint32(body, 42)
		body = append(body, 0xff, 0xff, 0xde, 0xad, 0xbe, 0xef) // null client id, junk
		c.write(rawFrame(body))
		av := c.read(apiVersionsKey, 0, 42).(*kmsg.ApiVersionsResponse)
		if av.ErrorCode != errUnsupportedVersionCode {
			t.Fatalf("version %d: error code %d, want %d", version, av.ErrorCode, errUnsupportedVersionCode)
		}
		// ApiVersions' own range alone (KIP-511, as Kafka).
		if len(av.ApiKeys) != 1 || av.ApiKeys[0].ApiKey != apiVersionsKey || av.ApiKeys[0].MaxVersion != 3 {
			t.Fatalf("version %d: supported list %+v", version, av.ApiKeys)
		}
		// The connection stays usable for the retry.
		c.send(kmsg.NewPtrApiVersionsRequest(), 3, 43)
		c.read(apiVersionsKey, 3, 43)
	}
}

func TestBadFramesCloseOnlyThatConnection(t *testing.T) {
	s := startServer(t, newFakeHandler(), func(o *Options) { o.MaxRequestBytes = 1 << 10 })
	f := kmsg.NewRequestFormatter()
	metadata := func(version int16) []byte {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(version)
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr("orders")
		req.Topics = append(req.Topics, topic)
		return f.AppendRequest(nil, req, 5)[4:]
	}
	size := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	for _, tc := range []struct {
		name     string
		bytes    []byte
		closeOut bool // client half-closes after writing
	}{
		{"frame over the limit", size(1<<10 + 1), false},
		{"negative frame size", size(-1), false},
		{"huge frame size", size(1<<31 - 1), false},
		{"frame cut short by EOF", append(size(100), 1, 2, 3), true},
		{"size prefix cut short by EOF", []byte{0, 0}, true},
		{"header shorter than fixed part", rawFrame([]byte{0, 18, 0}), false},
		{"client id longer than frame", rawFrame([]byte{0, 18, 0, 3, 0, 0, 0, 1, 1, 0, 'a'}), false},
		{"negative client id length", rawFrame([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xf0}), false},
		{"tag count beyond frame", rawFrame([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 5}), false},
		{"tag size beyond frame", rawFrame([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 1, 0, 100}), false},
		{"varint too long", rawFrame([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0}), false},
		{"truncated body", rawFrame(metadata(12)[:len(metadata(12))-4]), false},
		{"unknown api key", rawFrame([]byte{0x27, 0x0f, 0, 0, 0, 0, 0, 1, 0xff, 0xff}), false},
		{"negative api key", rawFrame([]byte{0xff, 0xff, 0, 0, 0, 0, 0, 1, 0xff, 0xff}), false},
		{"version below the supported range", rawFrame(metadata(0)), false},
		{"version above kmsg's range", rawFrame([]byte{0, 3, 0x7f, 0xff, 0, 0, 0, 1, 0xff, 0xff}), false},
		{"known key the handler lacks", rawFrame([]byte{0, 1, 0, 4, 0, 0, 0, 1, 0xff, 0xff}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s)
			c.write(tc.bytes)
			if tc.closeOut {
				if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			c.expectClosed()
			apiVersionsOK(t, s)
		})
	}
}

// TestFrameAtTheLimitIsServed: socket.request.max.bytes is the largest
// frame body taken, as Kafka's NetworkReceive (size > max is refused).
func TestFrameAtTheLimitIsServed(t *testing.T) {
	const limit = 1 << 10
	s := startServer(t, newFakeHandler(), func(o *Options) { o.MaxRequestBytes = limit })
	f := kmsg.NewRequestFormatter()
	body := func(topicLen int) []byte {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(12)
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr(strings.Repeat("t", topicLen))
		req.Topics = append(req.Topics, topic)
		return f.AppendRequest(nil, req, 5)[4:]
	}
	n := 1
	for len(body(n)) < limit {
		n++
	}
	if len(body(n)) != limit {
		t.Fatalf("no topic name length makes a %d-byte request", limit)
	}
	c := dial(t, s)
	c.write(rawFrame(body(n)))
	c.read(3, 12, 5)
}

func TestPipelinedWaitsAnsweredInRequestOrder(t *testing.T) {
	var g gates
	handled := make(chan int32, 16)
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		handled <- req.CorrelationID
		resp := h.answer(req).(*kmsg.MetadataResponse)
		resp.ThrottleMillis = req.CorrelationID // tells the answers apart
		gate := g.get(req.CorrelationID)
		return Reply{Wait: func() kmsg.Response { <-gate; return resp }}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	versions := []int16{12, 7, 9, 8, 12} // flexible and not, mixed
	var batch []byte
	for i, v := range versions {
		batch = append(batch, c.frame(kmsg.NewPtrMetadataRequest(), v, int32(i+1))...)
	}
	c.write(batch)
	// Every request is handled while the first Wait still blocks.
	for want := int32(1); want <= int32(len(versions)); want++ {
		if got := <-handled; got != want {
			t.Fatalf("handled corr %d, want %d", got, want)
		}
	}
	for corr := int32(len(versions)); corr >= 1; corr-- {
		g.open(corr) // last first
	}
	for i, v := range versions {
		corr := int32(i + 1)
		if got := c.read(3, v, corr).(*kmsg.MetadataResponse).ThrottleMillis; got != corr {
			t.Fatalf("response for corr %d carries %d", corr, got)
		}
	}
}

func TestNoResponseKeepsLaterResponsesInOrder(t *testing.T) {
	var g gates
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		switch req.Key {
		case 0: // produce, acks=0
			return Reply{NoResponse: true}
		case 3:
			gate := g.get(req.CorrelationID)
			resp := h.answer(req)
			return Reply{Wait: func() kmsg.Response { <-gate; return resp }}
		}
		return Reply{Resp: h.answer(req)}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks = 0
	c.send(produce, 9, 1)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 2)
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 3)
	c.send(produce, 7, 4)
	c.expectSilence(50 * time.Millisecond) // 3 is ready but must wait for 2
	g.open(2)
	c.read(3, 12, 2)
	c.read(apiVersionsKey, 3, 3)
	c.expectSilence(50 * time.Millisecond)
}

func TestCloseReplyWritesThenCloses(t *testing.T) {
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		return Reply{Resp: h.answer(req), Close: req.CorrelationID == 1}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 1)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 2) // never read
	c.read(3, 12, 1)
	c.expectClosed()
}

func TestInFlightIsBounded(t *testing.T) {
	const maxInFlight = 2
	var g gates
	var handled atomic.Int32
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		handled.Add(1)
		gate, resp := g.get(req.CorrelationID), h.answer(req)
		return Reply{Wait: func() kmsg.Response { <-gate; return resp }}
	}
	s := startServer(t, h, func(o *Options) { o.MaxInFlightPerConn = maxInFlight })
	c := dial(t, s)
	const n = 10
	for corr := int32(1); corr <= n; corr++ {
		c.send(kmsg.NewPtrMetadataRequest(), 12, corr)
	}
	time.Sleep(100 * time.Millisecond)
	// One in the writer's Wait, maxInFlight queued, one blocked on the queue.
	if got := handled.Load(); got > maxInFlight+2 {
		t.Fatalf("%d requests handled with %d allowed in flight", got, maxInFlight)
	}
	for corr := int32(1); corr <= n; corr++ {
		g.open(corr)
		c.read(3, 12, corr)
	}
}

func TestIdleTimeout(t *testing.T) {
	gate := make(chan struct{})
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		resp := h.answer(req)
		return Reply{Wait: func() kmsg.Response { <-gate; return resp }}
	}
	s := startServer(t, h, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })

	idle := dial(t, s)
	idle.expectClosed()

	// A connection waiting on its own reply is not idle.
	busy := dial(t, s)
	busy.send(kmsg.NewPtrMetadataRequest(), 12, 1)
	time.Sleep(300 * time.Millisecond)
	close(gate)
	busy.read(3, 12, 1)
	busy.expectClosed() // idle again afterwards
}

func TestShutdownWaitsForInFlightWait(t *testing.T) {
	gate := make(chan struct{})
	handled := make(chan struct{})
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		resp := h.answer(req)
		close(handled)
		return Reply{Wait: func() kmsg.Response { <-gate; return resp }}
	}
	s, served := serveUnmanaged(t, Options{Handler: h})

	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 1)
	<-handled
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v before the in-flight Wait finished", err)
	case <-time.After(100 * time.Millisecond):
	}
	if nc, err := net.Dial("tcp", s.Addr().String()); err == nil {
		nc.Close()
		t.Fatal("still accepting after Shutdown")
	}
	close(gate)
	c.read(3, 12, 1)
	c.expectClosed()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestShutdownDeadlineCancelsHandlerContext(t *testing.T) {
	handled := make(chan struct{})
	h := newFakeHandler()
	h.handle = func(ctx context.Context, req *Request) Reply {
		close(handled)
		return Reply{Wait: func() kmsg.Response { <-ctx.Done(); return req.Body.ResponseKind() }}
	}
	s, served := serveUnmanaged(t, Options{Handler: h})
	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 1)
	<-handled

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	c.expectClosed()
}

// Request.Stopping closes when Shutdown begins: a handler's long wait that
// ends there lets Shutdown finish without tearing the connection down.
func TestShutdownClosesStopping(t *testing.T) {
	handled := make(chan struct{})
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		resp := h.answer(req)
		close(handled)
		return Reply{Wait: func() kmsg.Response { <-req.Stopping; return resp }}
	}
	s, served := serveUnmanaged(t, Options{Handler: h, DrainGrace: time.Millisecond})
	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 1)
	<-handled
	shutdownServed(t, s, served, t.Fatalf)
	c.read(3, 12, 1)
	c.expectClosed()
}

// A request that reaches a connection just after Shutdown began (its client
// could not know) is read and answered, not met with a close.
func TestShutdownAnswersRequestsSentWithinTheGrace(t *testing.T) {
	h := newFakeHandler()
	stoppingAtHandle := make(chan bool, 2)
	h.handle = func(_ context.Context, req *Request) Reply {
		select {
		case <-req.Stopping:
			stoppingAtHandle <- true
		default:
			stoppingAtHandle <- false
		}
		return Reply{Resp: h.answer(req)}
	}
	s, served := serveUnmanaged(t, Options{Handler: h, DrainGrace: 2 * time.Second})
	c := dial(t, s)
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 1)
	c.read(apiVersionsKey, 3, 1)

	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if err := <-served; err != nil { // no longer accepting: Shutdown drains next
		t.Fatalf("Serve: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 2)
	c.read(3, 12, 2)
	<-stoppingAtHandle // the ApiVersions
	if <-stoppingAtHandle {
		// Long waits would end at once, and consumers spin through the grace.
		t.Error("Request.Stopping was closed within the grace")
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v within the grace", err)
	default:
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	c.expectClosed()
}

func TestServeContextCancelTearsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Listener: ln, Handler: newFakeHandler()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	c := dial(t, s)
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 1)
	c.read(apiVersionsKey, 3, 1)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	c.expectClosed()
	if err := s.Serve(context.Background()); err == nil {
		t.Fatal("second Serve succeeded")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after Serve returned: %v", err)
	}
}

// timings records what the server observes.
type timings struct {
	mu  sync.Mutex
	got []metrics.RequestTiming
}

func (r *timings) Observe(t metrics.RequestTiming) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, t)
}

func (r *timings) all() []metrics.RequestTiming {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestRequestTimingPhases pipelines a request that is slow to handle and
// slow to answer (Wait) with one answered at once: the first's time shows
// as local and remote, the second's as waiting behind the first.
func TestRequestTimingPhases(t *testing.T) {
	const handleFor, waitFor = 30 * time.Millisecond, 60 * time.Millisecond
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		resp := h.answer(req)
		if req.CorrelationID != 1 {
			return Reply{Resp: resp}
		}
		time.Sleep(handleFor)
		return Reply{Wait: func() kmsg.Response { time.Sleep(waitFor); return resp }}
	}
	rec := &timings{}
	s := startServer(t, h, func(o *Options) { o.RequestTimes = rec })
	c := dial(t, s)
	c.write(append(c.frame(kmsg.NewPtrMetadataRequest(), 12, 1), c.frame(kmsg.NewPtrApiVersionsRequest(), 3, 2)...))
	c.read(3, 12, 1)
	c.read(apiVersionsKey, 3, 2)
	deadline := time.Now().Add(testTimeout)
	for len(rec.all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // observed after the write returns
	}
	got := rec.all()
	if len(got) != 2 || got[0].Key != 3 || got[1].Key != apiVersionsKey {
		t.Fatalf("observed %+v, want Metadata then ApiVersions", got)
	}
	slow, quick := got[0], got[1]
	if slow.Local < handleFor || slow.Remote < waitFor || slow.Total() < handleFor+waitFor {
		t.Errorf("slow request %+v: want local >= %v, remote >= %v", slow, handleFor, waitFor)
	}
	if quick.Remote != 0 || quick.ResponseQueue < waitFor/2 {
		t.Errorf("quick request %+v: want no remote time and about %v behind the slow one", quick, waitFor)
	}
	for _, r := range got {
		if r.Local < 0 || r.ResponseQueue < 0 || r.Remote < 0 || r.Send < 0 {
			t.Errorf("negative phase in %+v", r)
		}
	}
}

// TestThrottleMutesTheConnection: a response carrying a throttle from a
// version that applies it after the response (KIP-219) goes out at once,
// and the connection's next request is read no sooner than the throttle
// after it; other connections are served meanwhile.
func TestThrottleMutesTheConnection(t *testing.T) {
	const throttle = time.Second
	type handled struct {
		corr int32
		at   time.Time
	}
	seen := make(chan handled, 16)
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		seen <- handled{req.CorrelationID, time.Now()}
		resp := h.answer(req).(*kmsg.MetadataResponse)
		if req.CorrelationID == 1 {
			resp.ThrottleMillis = int32(throttle / time.Millisecond)
		}
		return Reply{Resp: resp}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 1)
	c.read(3, 12, 1) // the throttled response is not held back
	written := time.Now()
	<-seen
	c.send(kmsg.NewPtrMetadataRequest(), 12, 2)

	other := dial(t, s)
	other.send(kmsg.NewPtrMetadataRequest(), 12, 7)
	if h := <-seen; h.corr != 7 {
		t.Fatalf("handled corr %d while the first connection is muted, want the other connection's 7", h.corr)
	}
	other.read(3, 12, 7)

	second := <-seen
	if second.corr != 2 {
		t.Fatalf("handled corr %d, want 2", second.corr)
	}
	// The mute began before the client read the response: measured from
	// then, the gap is at least the throttle less the read's own time.
	if gap := second.at.Sub(written); gap < throttle-100*time.Millisecond {
		t.Fatalf("the request after a %s throttle was handled %s after its response", throttle, gap)
	}
	c.read(3, 12, 2)
}

// TestThrottleBeforeKIP219HoldsTheResponse: from a version that applies
// the throttle before the response (Metadata v5), the response itself is
// held back that long.
func TestThrottleBeforeKIP219HoldsTheResponse(t *testing.T) {
	const throttle = time.Second
	h := newFakeHandler()
	handled := make(chan time.Time, 2)
	h.handle = func(_ context.Context, req *Request) Reply {
		handled <- time.Now()
		resp := h.answer(req).(*kmsg.MetadataResponse)
		if req.CorrelationID == 1 {
			resp.ThrottleMillis = int32(throttle / time.Millisecond)
		}
		return Reply{Resp: resp}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 5, 1)
	c.read(3, 5, 1)
	if held := time.Since(<-handled); held < throttle {
		t.Fatalf("a v5 response with a %s throttle arrived %s after it was handled", throttle, held)
	}
	// The throttle was served by holding the response: the connection is
	// not muted after it as well.
	sent := time.Now()
	c.send(kmsg.NewPtrMetadataRequest(), 5, 2)
	c.read(3, 5, 2)
	if gap := (<-handled).Sub(sent); gap > throttle/2 {
		t.Fatalf("the request after a held-back response was handled %s after it was sent", gap)
	}
}

// TestMuteWithoutResponse: a request answered with nothing (an acks=0
// produce) but a Mute holds back the connection's next request that long.
func TestMuteWithoutResponse(t *testing.T) {
	const mute = 500 * time.Millisecond
	handled := make(chan time.Time, 4)
	h := newFakeHandler()
	h.handle = func(_ context.Context, req *Request) Reply {
		handled <- time.Now()
		if req.Key == 0 {
			return Reply{NoResponse: true, Mute: mute}
		}
		return Reply{Resp: h.answer(req)}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks = 0
	c.send(produce, 9, 1)
	c.send(kmsg.NewPtrMetadataRequest(), 12, 2)
	first, second := <-handled, <-handled
	if gap := second.Sub(first); gap < mute-50*time.Millisecond {
		t.Fatalf("the request after a %s mute was handled %s after it", mute, gap)
	}
	c.read(3, 12, 2)
}
