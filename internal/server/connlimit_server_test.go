package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func withLimits(l *ConnLimits, interBroker bool) func(*Options) {
	return func(o *Options) { o.Limits, o.InterBroker = l, interBroker }
}

// apiVersions checks that c is served.
func (c *client) apiVersions(corr int32) {
	c.t.Helper()
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, corr)
	c.read(apiVersionsKey, 3, corr)
}

// waitUntil polls cond until it holds, failing the test after testTimeout.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func waitOpen(t *testing.T, l *ConnLimits, n int) {
	t.Helper()
	waitUntil(t, "the open count is back to its level", func() bool { return l.Open() == n })
}

// logRecorder keeps the records a server logs (without the logger's
// attributes, which these tests do not need).
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}

// at returns the attributes of the records logged at level.
func (r *logRecorder) at(level slog.Level) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, rec := range r.recs {
		if rec.Level != level {
			continue
		}
		attrs := map[string]any{"msg": rec.Message}
		rec.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.Any()
			return true
		})
		out = append(out, attrs)
	}
	return out
}

func TestPerIPLimitClosesTheExtraConnection(t *testing.T) {
	limits := newLimits(t, ConnLimitsConfig{MaxPerIP: 2})
	logs := &logRecorder{}
	s := startServer(t, newFakeHandler(), func(o *Options) {
		withLimits(limits, false)(o)
		o.Logger = slog.New(logs)
	})
	c1 := dial(t, s)
	c1.apiVersions(1)
	c2 := dial(t, s)
	c2.apiVersions(2)
	c3 := dial(t, s)
	c3.expectClosed()
	c1.apiVersions(3)
	c2.apiVersions(4)
	if limits.Refused() != 1 || limits.Open() != 2 {
		t.Fatalf("refused %d, open %d; want 1, 2", limits.Refused(), limits.Open())
	}
	infos := logs.at(slog.LevelInfo)
	if len(infos) != 1 || infos[0]["remote_ip"] != netip.MustParseAddr("127.0.0.1") || infos[0]["max_connections_per_ip"] != int64(2) {
		t.Fatalf("info logs %v, want one refusal of 127.0.0.1 at limit 2", infos)
	}

	c1.nc.Close()
	waitOpen(t, limits, 1)
	dial(t, s).apiVersions(5)
}

func TestPerIPOverrideOfZeroRefusesEveryConnection(t *testing.T) {
	// Keyed by the mapped form: counting unmaps both sides.
	limits := newLimits(t, ConnLimitsConfig{MaxPerIP: 10, PerIPOverrides: map[netip.Addr]int{
		netip.MustParseAddr("::ffff:127.0.0.1"): 0,
	}})
	s := startServer(t, newFakeHandler(), withLimits(limits, false))
	dial(t, s).expectClosed()
	dial(t, s).expectClosed()
	if limits.Refused() != 2 || limits.Open() != 0 {
		t.Fatalf("refused %d, open %d; want 2, 0", limits.Refused(), limits.Open())
	}
}

// max.connections.per.ip=0 with overrides: only the listed addresses may
// connect, each up to its count.
func TestOnlyOverridesAdmitsTheListedAddresses(t *testing.T) {
	only := func(overrides map[netip.Addr]int) *ConnLimits {
		return newLimits(t, ConnLimitsConfig{OnlyOverrides: true, MaxPerIP: 10, PerIPOverrides: overrides})
	}
	s := startServer(t, newFakeHandler(), withLimits(only(map[netip.Addr]int{netip.MustParseAddr("10.9.9.9"): 5}), false))
	dial(t, s).expectClosed()
	limits := only(map[netip.Addr]int{netip.MustParseAddr("127.0.0.1"): 1})
	s = startServer(t, newFakeHandler(), withLimits(limits, false))
	dial(t, s).apiVersions(1)
	dial(t, s).expectClosed()
	if limits.Refused() != 1 || limits.Open() != 1 {
		t.Fatalf("refused %d, open %d; want 1, 1", limits.Refused(), limits.Open())
	}
}

func TestMaxConnectionsHoldsTheAcceptLoops(t *testing.T) {
	limits := newLimits(t, ConnLimitsConfig{MaxConnections: 2})
	h := newFakeHandler()
	a := startServer(t, h, withLimits(limits, false))
	b, bServed := serveUnmanaged(t, Options{Handler: h, Limits: limits})

	ca := dial(t, a)
	ca.apiVersions(1)
	cb := dial(t, b)
	cb.apiVersions(2)
	held := dial(t, a) // the kernel completes it; the server does not accept it
	held.send(kmsg.NewPtrApiVersionsRequest(), 3, 3)
	held.expectSilence(100 * time.Millisecond)
	cb.nc.Close() // a slot on the other listener frees it
	held.read(apiVersionsKey, 3, 3)
	if limits.Open() != 2 {
		t.Fatalf("open %d, want 2", limits.Open())
	}

	// Both listeners are full again: stopping must not wait for a slot.
	heldB := dial(t, b)
	heldB.send(kmsg.NewPtrApiVersionsRequest(), 3, 4)
	heldB.expectSilence(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case err := <-bServed:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Serve still waiting for a connection slot after Shutdown")
	}
	heldB.expectClosed() // closed while it waited, never served

	// The same through Serve's ctx.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Listener: ln, Handler: h, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- c.Serve(serveCtx) }()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Serve still waiting for a connection slot after its ctx ended")
	}
	if limits.Open() != 2 {
		t.Fatalf("open %d after stopping two listeners that held nothing, want 2", limits.Open())
	}
}

func TestInterBrokerListenerPassesMaxConnections(t *testing.T) {
	limits := newLimits(t, ConnLimitsConfig{MaxConnections: 1, MaxPerIP: 3})
	h := newFakeHandler()
	clients := startServer(t, h, withLimits(limits, false))
	brokers := startServer(t, h, withLimits(limits, true))
	dial(t, clients).apiVersions(1)
	dial(t, brokers).apiVersions(2)
	dial(t, brokers).apiVersions(3)
	if limits.Open() != 3 {
		t.Fatalf("open %d, want 3", limits.Open())
	}
	dial(t, brokers).expectClosed() // the per-address limit holds on every listener
	held := dial(t, clients)
	held.send(kmsg.NewPtrApiVersionsRequest(), 3, 4)
	held.expectSilence(50 * time.Millisecond)
}

// TestConnLimitsNoLeak takes every path that ends a connection and checks
// that each gives its slot back: a leak would lock the broker out.
func TestConnLimitsNoLeak(t *testing.T) {
	limits := newLimits(t, ConnLimitsConfig{MaxConnections: 100, MaxPerIP: 3})
	h := newFakeHandler()
	produced := make(chan struct{}, 1)
	h.handle = func(ctx context.Context, req *Request) Reply {
		resp := h.answer(req)
		switch req.Key {
		case 3: // Metadata: answer, then close
			return Reply{Resp: resp, Close: true}
		case 0: // Produce: answer only when the connection is torn down
			produced <- struct{}{}
			return Reply{Wait: func() kmsg.Response { <-ctx.Done(); return resp }}
		}
		return Reply{Resp: resp}
	}
	quick := func(o *Options) { withLimits(limits, false)(o); o.DrainGrace = 10 * time.Millisecond }
	main := startServer(t, h, quick)
	idle := startServer(t, h, func(o *Options) { quick(o); o.IdleTimeout = 20 * time.Millisecond })

	// serveSome serves n connections on a fresh server and returns it
	// with its Serve result.
	serveSome := func(n int, ctx context.Context) (*Server, <-chan error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Options{Listener: ln, Handler: h, Limits: limits, DrainGrace: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve(ctx) }()
		for i := range n {
			dial(t, s).apiVersions(int32(i))
		}
		return s, served
	}
	shutdown := func(s *Server, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return s.Shutdown(ctx)
	}

	paths := []struct {
		name string
		run  func()
	}{
		{"client close", func() {
			c := dial(t, main)
			c.apiVersions(1)
			c.nc.Close()
		}},
		{"Reply.Close", func() {
			c := dial(t, main)
			c.send(kmsg.NewPtrMetadataRequest(), 12, 1)
			c.read(3, 12, 1)
			c.expectClosed()
		}},
		{"bad frame", func() {
			c := dial(t, main)
			c.write(rawFrame([]byte{0, 99, 0, 0, 0, 0, 0, 1, 0, 0})) // unknown api key 99
			c.expectClosed()
		}},
		{"idle close", func() { dial(t, idle).expectClosed() }},
		{"per-address refusal", func() {
			cs := []*client{dial(t, main), dial(t, main), dial(t, main)}
			for i, c := range cs {
				c.apiVersions(int32(i))
			}
			dial(t, main).expectClosed()
			for _, c := range cs {
				c.nc.Close()
			}
		}},
		{"Shutdown", func() {
			s, served := serveSome(2, context.Background())
			if err := shutdown(s, testTimeout); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			<-served
		}},
		{"Shutdown deadline", func() {
			s, served := serveSome(1, context.Background())
			c := dial(t, s)
			c.send(kmsg.NewPtrProduceRequest(), 9, 1)
			<-produced
			if err := shutdown(s, 50*time.Millisecond); err == nil {
				t.Fatal("Shutdown met its deadline with a Wait that never returns")
			}
			<-served
		}},
		{"Serve ctx", func() {
			ctx, cancel := context.WithCancel(context.Background())
			_, served := serveSome(2, ctx)
			cancel()
			<-served
		}},
	}
	for round := range 3 {
		for _, p := range paths {
			p.run()
			waitUntil(t, fmt.Sprintf("round %d: %s gives its slots back", round, p.name),
				func() bool { return limits.Open() == 0 })
		}
	}
}

// TestStartConnRefusedWhileClosingGivesTheSlotBack covers the race in
// which the listener accepted just before the server started closing.
func TestStartConnRefusedWhileClosingGivesTheSlotBack(t *testing.T) {
	limits := newLimits(t, ConnLimitsConfig{MaxConnections: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Listener: ln, Handler: newFakeHandler(), Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	s.stopAccepting()
	server, peer := net.Pipe()
	defer peer.Close()
	a := limits.acquire(netip.MustParseAddr("127.0.0.1"), true, false, nil)
	s.startConn(server, a.slot)
	if limits.Open() != 0 {
		t.Fatalf("open %d after a refused start, want 0", limits.Open())
	}
	if _, err := peer.Read(make([]byte, 1)); err == nil {
		t.Fatal("refused connection left open")
	}
}
