package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every blocking step of a test.
const testTimeout = 10 * time.Second

// fakeHandler supports a few keys; handle, when set, replaces the default
// answer (an empty response of the right kind, and a real ApiVersions list).
type fakeHandler struct {
	versions map[int16][2]int16 // key → [min, max], inclusive as in ApiVersions
	handle   func(ctx context.Context, req *Request) Reply
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{versions: map[int16][2]int16{
		0:  {3, 9},  // Produce
		3:  {1, 12}, // Metadata
		18: {0, 3},  // ApiVersions
	}}
}

func (h *fakeHandler) Supported(key, version int16) bool {
	r, ok := h.versions[key]
	return ok && version >= r[0] && version <= r[1]
}

func (h *fakeHandler) Handle(ctx context.Context, req *Request) Reply {
	if h.handle != nil {
		return h.handle(ctx, req)
	}
	return Reply{Resp: h.answer(req)}
}

// answer is the default response: ApiVersions lists h.versions.
func (h *fakeHandler) answer(req *Request) kmsg.Response {
	resp := req.Body.ResponseKind()
	if av, ok := resp.(*kmsg.ApiVersionsResponse); ok {
		keys := make([]int16, 0, len(h.versions))
		for k := range h.versions {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, h.versions[k][0], h.versions[k][1]
			av.ApiKeys = append(av.ApiKeys, ak)
		}
	}
	return resp
}

// startServer serves h on 127.0.0.1:0 and shuts down at the end of the test.
func startServer(t *testing.T, h Handler, tweak func(*Options)) *Server {
	t.Helper()
	o := Options{Handler: h}
	if tweak != nil {
		tweak(&o)
	}
	s, served := serveUnmanaged(t, o)
	t.Cleanup(func() { shutdownServed(t, s, served, t.Errorf) })
	return s
}

// shutdownServed shuts s down within testTimeout and waits for Serve,
// reporting a failure of either with fail (t.Errorf or t.Fatalf).
func shutdownServed(t *testing.T, s *Server, served <-chan error, fail func(format string, args ...any)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		fail("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		fail("Serve: %v", err)
	}
}

// serveUnmanaged serves o (on 127.0.0.1:0 unless o.Listener is set) and
// returns the server and Serve's result; the test shuts it down.
func serveUnmanaged(t *testing.T, o Options) (*Server, <-chan error) {
	t.Helper()
	if o.Listener == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		o.Listener = ln
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	return s, served
}

// client is a raw Kafka client over one TCP connection.
type client struct {
	t  *testing.T
	nc net.Conn
	f  *kmsg.RequestFormatter
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr().String(), testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))}
}

// frame encodes req at version with correlation id corr, size included.
func (c *client) frame(req kmsg.Request, version int16, corr int32) []byte {
	req.SetVersion(version)
	return c.f.AppendRequest(nil, req, corr)
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) send(req kmsg.Request, version int16, corr int32) {
	c.t.Helper()
	c.write(c.frame(req, version, corr))
}

// rawFrame prefixes body with its size.
func rawFrame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// read reads one response of the given key and version, checks the
// correlation id, and checks that the header is exactly the one Kafka uses:
// the bytes after it must re-encode to themselves.
func (c *client) read(key, version int16, corr int32) kmsg.Response {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(testTimeout))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		c.t.Fatalf("reading response size (want corr %d): %v", corr, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.nc, body); err != nil {
		c.t.Fatalf("reading response body: %v", err)
	}
	r := reader{b: body}
	if got := r.int32(); got != corr {
		c.t.Fatalf("correlation id %d, want %d", got, corr)
	}
	resp := kmsg.ResponseForKey(key)
	resp.SetVersion(version)
	if resp.IsFlexible() && key != apiVersionsKey {
		r.skipTags()
	}
	if r.bad {
		c.t.Fatal("truncated response header")
	}
	if err := resp.ReadFrom(r.b); err != nil {
		c.t.Fatalf("decoding response: %v", err)
	}
	if again := resp.AppendTo(nil); !bytes.Equal(again, r.b) {
		c.t.Fatalf("response body does not round-trip: the header is wrong\n got %x\nwant %x", r.b, again)
	}
	return resp
}

// expectClosed checks that the server closes the connection without writing.
func (c *client) expectClosed() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(testTimeout))
	var b [1]byte
	n, err := c.nc.Read(b[:])
	if n != 0 || err == nil {
		c.t.Fatalf("connection still open: read %d bytes, err %v", n, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection not closed within %v", testTimeout)
	}
}

// expectSilence checks that nothing arrives for a short while.
func (c *client) expectSilence(d time.Duration) {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	n, err := c.nc.Read(b[:])
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		c.t.Fatalf("expected silence, read %d bytes, err %v", n, err)
	}
}

// apiVersionsOK checks that a fresh connection is served normally.
func apiVersionsOK(t *testing.T, s *Server) {
	t.Helper()
	c := dial(t, s)
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 77)
	resp := c.read(apiVersionsKey, 3, 77).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

// gates lets a test release Waits one by one.
type gates struct {
	mu sync.Mutex
	ch map[int32]chan struct{}
}

func (g *gates) get(corr int32) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(map[int32]chan struct{})
	}
	if g.ch[corr] == nil {
		g.ch[corr] = make(chan struct{})
	}
	return g.ch[corr]
}

func (g *gates) open(corr int32) { close(g.get(corr)) }
