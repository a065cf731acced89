package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/sasl"
)

// Request is one decoded request, handed to Handler.Handle.
type Request struct {
	Key           int16
	Version       int16
	CorrelationID int32
	// ClientID is nil when the client sent a null client id. Read-only.
	ClientID *string
	// Body is decoded with its version set. It may alias the frame buffer:
	// see the package documentation.
	Body kmsg.Request
	// Conn describes the connection the request arrived on.
	Conn *ConnInfo
	// Stopping is closed once the connection reads no more (Shutdown's
	// DrainGrace is over, or Serve's ctx ended): a handler's long wait (a
	// fetch's max wait) should end there and answer with what it has, as
	// the connection closes once its requests are answered. (Closing it at
	// the start of the grace would make every consumer spin through it:
	// each fetch answered at once, the next one sent at once.)
	Stopping <-chan struct{}
}

// ConnInfo describes one client connection. It does not change during the
// connection's life.
type ConnInfo struct {
	// ID is unique among the connections of one Server, starting at 1.
	ID         uint64
	RemoteAddr net.Addr
	LocalAddr  net.Addr
	// Listener is Options.ListenerName.
	Listener string
	// SASL is the connection's SASL session on a SASL listener, else nil.
	// The pointer does not change; the session's state does, only on the
	// reader goroutine (in Handle).
	SASL *sasl.Session

	// tlsPrincipal is the TLS client certificate's principal, set once the
	// handshake completes (before any request); principal caches Principal.
	// Both belong to the reader goroutine.
	tlsPrincipal string
	principal    string
}

// Reply is what a Handler returns for one request. Exactly one of these
// shapes: Resp set (done); Wait set (the writer calls it in request order to
// get the response, so that later requests are handled meanwhile); NoResponse
// (nothing is written, e.g. an acks=0 produce). Close may accompany any of
// them: the connection is closed after writing (or without writing if there
// is nothing to write), and nothing more is read from it. Release, if set,
// is called exactly once after the response is written (or dropped), so the
// handler can take back buffers the response points into. Splices, if set,
// is called after the response is obtained and names the bytes fields to be
// filled from files (see Splice).
//
// A response whose throttle_time_ms is positive (a client over a quota) is
// enforced as Kafka does: from versions that apply the throttle after the
// response (KIP-219), the connection reads nothing more for that long once
// it is written; before them, the response itself is held back that long.
// Mute does the same for a request with no response (a throttled acks=0
// produce): nothing more is read for that long after it.
type Reply struct {
	Resp       kmsg.Response
	Wait       func() kmsg.Response
	NoResponse bool
	Close      bool
	Release    func()
	Splices    func() []Splice
	Mute       time.Duration
}

// Handler handles the decoded requests. See the package documentation for
// the ordering and lifetime rules.
type Handler interface {
	// Handle runs serially per connection in request order.
	Handle(ctx context.Context, req *Request) Reply
	// Supported reports whether (key, version) is implemented; the server
	// uses it to answer unsupported versions and unknown keys without
	// calling Handle. It must be safe for concurrent use.
	Supported(key, version int16) bool
}

// Server accepts connections on one listener and serves them until Shutdown
// or until the ctx given to Serve ends.
type Server struct {
	opts Options

	// baseCtx is the parent of every connection's ctx; cancelling it is the
	// hard stop.
	baseCtx    context.Context
	cancelBase context.CancelFunc

	nextConnID atomic.Uint64
	// wg counts connection goroutines (two per connection).
	wg sync.WaitGroup
	// closed is closed when the server stops accepting.
	closed chan struct{}
	// stopping is Request.Stopping, closed by endReading.
	stopping     chan struct{}
	stoppingOnce sync.Once

	mu struct {
		sync.Mutex
		conns    map[*conn]struct{}
		serving  bool // Serve was called
		closing  bool // no more connections are accepted
		shutdown bool // Shutdown was called: it owns the teardown
	}
}

// New validates o and returns a server that is not yet accepting.
func New(o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: o.withDefaults(), closed: make(chan struct{}), stopping: make(chan struct{})}
	s.baseCtx, s.cancelBase = context.WithCancel(context.Background())
	s.mu.conns = make(map[*conn]struct{})
	return s, nil
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.opts.Listener.Addr() }

// Serve accepts connections until ctx ends or Shutdown is called; it may be
// called once. When ctx ends (and Shutdown was not called), it tears every
// connection down and waits for their goroutines before returning. It
// returns nil on either stop, and an error if the listener fails on its own.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.serving {
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	s.mu.serving = true
	closing := s.mu.closing
	s.mu.Unlock()
	if closing {
		return nil
	}

	stop := context.AfterFunc(ctx, s.stopAccepting)
	err := s.acceptLoop()
	stop()

	s.mu.Lock()
	shutdown := s.mu.shutdown
	s.mu.Unlock()
	if !shutdown {
		s.stopAccepting()
		s.hardStop()
		s.wg.Wait()
	}
	return err
}

// Shutdown stops accepting, reads the requests that reach each connection
// within Options.DrainGrace, then closes Request.Stopping, lets every
// request read finish and its response be written, and closes the
// connections. If ctx ends first, it tears the connections down
// (cancelling their contexts) and returns ctx.Err(), still after every
// server goroutine has exited.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.mu.shutdown = true
	s.mu.Unlock()
	s.stopAccepting()
	end := time.Now().Add(s.opts.DrainGrace)
	for _, c := range s.conns() {
		c.drain(end)
	}
	endReading := time.AfterFunc(s.opts.DrainGrace, s.endReading)
	defer endReading.Stop()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancelBase()
		return nil
	case <-ctx.Done():
		s.hardStop()
		<-done
		return ctx.Err()
	}
}

// stopAccepting closes the listener once; later accepted connections (none,
// once Accept fails) are refused.
func (s *Server) stopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closing {
		return
	}
	s.mu.closing = true
	close(s.closed)
	if err := s.opts.Listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		s.opts.Logger.Warn("closing listener", "err", err)
	}
}

// hardStop cancels every connection's ctx and closes every socket.
func (s *Server) hardStop() {
	s.endReading()
	for _, c := range s.conns() {
		c.abort()
	}
	s.cancelBase()
}

// endReading closes Request.Stopping: no connection reads any more, so the
// handlers' long waits may end.
func (s *Server) endReading() {
	s.stoppingOnce.Do(func() { close(s.stopping) })
}

func (s *Server) conns() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.mu.conns))
	for c := range s.mu.conns {
		out = append(out, c)
	}
	return out
}

// Accept backoff after a failure such as EMFILE, as net/http does.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

func (s *Server) acceptLoop() error {
	var backoff time.Duration
	for {
		if !s.waitForSlot() {
			return nil
		}
		nc, err := s.opts.Listener.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return nil
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("server: listener closed underneath: %w", err)
			}
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			s.opts.Logger.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.closed:
				t.Stop()
				return nil
			}
			continue
		}
		backoff = 0
		if sl, ok := s.admit(nc); ok {
			s.setSocketBuffers(nc)
			s.startConn(nc, sl)
		}
	}
}

// startConn serves nc, which holds sl until connDone (or until it is
// refused here because the server is closing).
func (s *Server) startConn(nc net.Conn, sl slot) {
	c := newConn(s, nc, s.nextConnID.Add(1))
	c.slot = sl
	s.mu.Lock()
	if s.mu.closing {
		s.mu.Unlock()
		c.abort()
		c.slot.release()
		return
	}
	s.mu.conns[c] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	go c.readLoop()
	go c.writeLoop()
}

// connDone forgets c and gives its slot back; called once, by its writer,
// as its last act, after the socket is closed. Every started connection
// ends here, whatever closed it, and before Shutdown's wait is over.
func (s *Server) connDone(c *conn) {
	s.mu.Lock()
	delete(s.mu.conns, c)
	s.mu.Unlock()
	c.slot.release()
}
