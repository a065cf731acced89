package metadata

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// One TCP listener per node (the controller listener) carries Raft's RPCs,
// forwarded proposals and Kafka requests from admin clients bootstrapped
// from the controllers (KIP-919). Every connection Raft's NetworkTransport
// opens starts with an RPC type byte (rpcAppendEntries..rpcRequestPreVote,
// 0..4 in raft v1.8), so a forwarding connection announces itself with
// forwardMagic, a byte Raft never sends first. A Kafka request frame starts
// with its int32 size, big-endian: under 8 MiB, a 0x00 and then a byte
// under 0x80. Raft's AppendEntries opens with 0x00 too, but then comes its
// request as a msgpack map, whose first byte is 0x80 or more (fixmap
// 0x80-0x8f, map16 0xde, map32 0xdf). Any other opening is pushed back and
// the connection handed to Raft, which rejects what it cannot decode (a
// Kafka request of 8 MiB or more among them: no admin request is that big).
const (
	forwardMagic byte = 0xF5
	// kafkaSizeHigh is the first byte of a Kafka frame under 16 MiB, and
	// kafkaSizeNextLimit bounds its second byte under 8 MiB.
	kafkaSizeHigh      byte = 0x00
	kafkaSizeNextLimit byte = 0x80
	// sniffTimeout bounds the wait for a new connection's first bytes.
	sniffTimeout = tcpTimeout
)

// connKind is whom a new connection on the controller listener is for.
type connKind int

const (
	connRaft connKind = iota
	connForward
	connKafka
)

// kindOf tells a new connection's kind from its opening bytes: first is
// its first byte, and next, needed only when first is kafkaSizeHigh, its
// second (needsNext says so; call again with it).
func kindOf(first byte, next []byte) (kind connKind, needsNext bool) {
	switch {
	case first == forwardMagic:
		return connForward, false
	case first != kafkaSizeHigh:
		return connRaft, false
	case len(next) == 0:
		return connRaft, true
	case next[0] < kafkaSizeNextLimit:
		return connKafka, false
	}
	return connRaft, false
}

// muxListener is the raft.StreamLayer of a TCP quorum member. It owns one
// accept goroutine and one goroutine per connection until that connection's
// first byte is read; forwarding connections are served on that goroutine.
// Close closes the listener and every connection it accepted or dialed (Raft's
// NetworkTransport closes neither its pooled nor its inbound connections),
// then waits for its goroutines.
type muxListener struct {
	ln        net.Listener
	advertise net.Addr
	log       *slog.Logger
	// serveForward handles a forwarding connection whose magic byte has been
	// read; it returns when it is done with conn (mux closes conn afterwards).
	serveForward func(conn net.Conn)
	// kafkaConns takes the Kafka clients' connections, their opening
	// bytes pushed back; its receiver owns them from then on. nil closes
	// such connections, as does Close those still waiting to be taken.
	kafkaConns chan<- net.Conn

	raftConns chan net.Conn // to Accept; unbuffered
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // the accept loop and the per-connection goroutines

	mu struct {
		sync.Mutex
		closed bool
		conns  map[*trackedConn]struct{}
	}
}

var _ raft.StreamLayer = (*muxListener)(nil)

// addrString is a net.Addr for an advertised host:port, which may name a host
// rather than an IP.
type addrString string

func (a addrString) Network() string { return "tcp" }
func (a addrString) String() string  { return string(a) }

// newMuxListener listens on bindAddr. advertise is the address others dial;
// "" advertises the listener's address, which must then be a specific IP.
// kafkaConns may be nil.
func newMuxListener(bindAddr, advertise string, log *slog.Logger, serveForward func(net.Conn), kafkaConns chan<- net.Conn) (*muxListener, error) {
	ln, err := net.Listen("tcp", bindAddr)
	if err != nil {
		return nil, fmt.Errorf("metadata: listen on %s: %w", bindAddr, err)
	}
	m := &muxListener{
		ln:           ln,
		log:          log,
		serveForward: serveForward,
		kafkaConns:   kafkaConns,
		raftConns:    make(chan net.Conn),
		closed:       make(chan struct{}),
	}
	m.mu.conns = map[*trackedConn]struct{}{}
	if advertise != "" {
		m.advertise = addrString(advertise)
	} else {
		tcp, ok := ln.Addr().(*net.TCPAddr)
		if !ok || tcp.IP == nil || tcp.IP.IsUnspecified() {
			_ = ln.Close()
			return nil, fmt.Errorf("metadata: %s is not an address other nodes can dial; set Options.AdvertiseAddr", ln.Addr())
		}
		m.advertise = tcp
	}
	m.wg.Add(1)
	go m.acceptLoop()
	return m, nil
}

func (m *muxListener) acceptLoop() {
	defer m.wg.Done()
	var delay time.Duration
	for {
		c, err := m.ln.Accept()
		if err != nil {
			if m.isClosed() {
				return
			}
			// Out of file descriptors and the like: back off, as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			m.log.Warn("metadata listener: accept failed", "err", err, "retry_in", delay)
			select {
			case <-m.closed:
				return
			case <-time.After(delay):
			}
			continue
		}
		delay = 0
		tc, ok := m.track(c)
		if !ok {
			continue // closing; track closed it
		}
		m.wg.Add(1)
		go m.route(tc)
	}
}

// route reads the opening bytes of a new connection and hands the
// connection to the forward server, the Kafka server or Raft. A connection
// that sends nothing within sniffTimeout is closed.
func (m *muxListener) route(c *trackedConn) {
	defer m.wg.Done()
	opening := make([]byte, 1, 2)
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	if _, err := io.ReadFull(c, opening); err != nil {
		_ = c.Close()
		return
	}
	kind, needsNext := kindOf(opening[0], nil)
	if needsNext {
		opening = opening[:2]
		if _, err := io.ReadFull(c, opening[1:]); err != nil {
			_ = c.Close()
			return
		}
		kind, _ = kindOf(opening[0], opening[1:])
	}
	_ = c.SetReadDeadline(time.Time{})
	switch kind {
	case connForward:
		defer c.Close()
		m.serveForward(c)
	case connKafka:
		m.handOver(m.kafkaConns, &peekedConn{trackedConn: c, opening: opening})
	default:
		m.handOver(m.raftConns, &peekedConn{trackedConn: c, opening: opening})
	}
}

// handOver gives c to whoever receives from to, or closes it when to is
// nil or once the mux is closed.
func (m *muxListener) handOver(to chan<- net.Conn, c *peekedConn) {
	if to == nil {
		_ = c.Close()
		return
	}
	select {
	case to <- c:
	case <-m.closed:
		_ = c.Close()
	}
}

// Accept hands Raft its connections (net.Listener).
func (m *muxListener) Accept() (net.Conn, error) {
	select {
	case c := <-m.raftConns:
		return c, nil
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

// Dial opens a Raft connection to address (raft.StreamLayer).
func (m *muxListener) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	tc, ok := m.track(c)
	if !ok {
		return nil, net.ErrClosed
	}
	return tc, nil
}

// Addr is the advertised address (net.Listener); Raft records it in the
// configuration as this node's address.
func (m *muxListener) Addr() net.Addr { return m.advertise }

// Close stops accepting, closes every tracked connection and waits for the
// mux's goroutines (net.Listener). Idempotent.
func (m *muxListener) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.mu.closed = true
		conns := make([]*trackedConn, 0, len(m.mu.conns))
		for c := range m.mu.conns {
			conns = append(conns, c)
		}
		m.mu.Unlock()
		close(m.closed)
		err = m.ln.Close()
		for _, c := range conns {
			_ = c.Close()
		}
		m.wg.Wait()
	})
	return err
}

func (m *muxListener) isClosed() bool {
	select {
	case <-m.closed:
		return true
	default:
		return false
	}
}

// track registers c so that Close closes it; after Close it closes c and
// reports false.
func (m *muxListener) track(c net.Conn) (*trackedConn, bool) {
	tc := &trackedConn{Conn: c, mux: m}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		_ = c.Close()
		return nil, false
	}
	m.mu.conns[tc] = struct{}{}
	return tc, true
}

func (m *muxListener) untrack(c *trackedConn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.conns, c)
}

// trackedConn leaves the mux's set when closed. Once the mux is closed its
// reads fail with io.EOF: Raft logs any other read error of an inbound
// connection as a failure, and a shutdown is not one.
type trackedConn struct {
	net.Conn
	mux       *muxListener
	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && c.closed.Load() && c.mux.isClosed() {
		err = io.EOF
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeErr = c.Conn.Close()
		c.mux.untrack(c)
	})
	return c.closeErr
}

// peekedConn returns the bytes the mux read to route it before anything
// else.
type peekedConn struct {
	*trackedConn
	mu      sync.Mutex
	opening []byte // what is left of them
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	if len(c.opening) > 0 {
		n := copy(p, c.opening)
		c.opening = c.opening[n:]
		c.mu.Unlock()
		return n, nil
	}
	c.mu.Unlock()
	return c.trackedConn.Read(p)
}
