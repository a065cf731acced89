package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/sasl"
)

const (
	// maxWriteBufferBytes bounds the response buffer a connection keeps.
	maxWriteBufferBytes = 64 << 20
	// frameReadBufferBytes is the size of a connection's read buffer.
	frameReadBufferBytes = 4 << 10
)

// conn is one client connection, served by a reader goroutine (frames →
// Handle → queue) and a writer goroutine (queue → Wait → socket).
//
// Invariant: the writer consumes every pending reply until the reader closes
// the queue, so a send on the queue always completes; the writer is the last
// to touch the conn and closes the socket.
type conn struct {
	srv    *Server
	nc     net.Conn
	info   ConnInfo
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan pending
	// inFlight counts replies read but not yet finished by the writer; a
	// connection with replies in flight is not idle.
	inFlight atomic.Int32
	ids      clientIDCache // reader goroutine only
	// rawSASL (reader goroutine only): a SaslHandshake v0 chose a
	// mechanism, so the next frames are bare SASL tokens.
	rawSASL bool
	// sessionExpiry (reader goroutine only) ends the SASL session when
	// Options.MaxReauth is set; zero otherwise.
	sessionExpiry time.Time
	wbuf          []byte // writer goroutine only: the encoded response
	// slot is the connection's place in Options.Limits, given back by
	// connDone.
	slot slot
	// mutedUntil (Unix nanoseconds; 0: never throttled): a throttled
	// response was written, and the next request is not read before then
	// (throttle.go). The writer sets it, the reader reads it per request.
	mutedUntil atomic.Int64

	mu struct {
		sync.Mutex
		draining bool      // Shutdown: read until drainEnd, flush what is pending
		drainEnd time.Time // when draining, reading stops at this instant
	}
}

// pending is one reply waiting for the writer, in request order.
type pending struct {
	key           int16
	version       int16 // of the response: the request's, or 0 for the fallback
	correlationID int32
	reply         Reply
	// frame backs the request's byte fields; released once the reply is done.
	frame *[]byte
	// apiVersionsFallback: set UNSUPPORTED_VERSION on the response.
	apiVersionsFallback bool
	// rawToken, if rawSASL, is a bare SASL token to send instead of a
	// Kafka response (the SaslHandshake v0 exchange).
	rawToken []byte
	rawSASL  bool
	clock    requestClock
}

func newConn(s *Server, nc net.Conn, id uint64) *conn {
	info := ConnInfo{ID: id, RemoteAddr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr(), Listener: s.opts.ListenerName}
	if s.opts.TLS != nil {
		nc = tls.Server(nc, s.opts.TLS)
	}
	if s.opts.SASL != nil {
		info.SASL = sasl.NewSession(s.opts.SASL)
	}
	c := &conn{
		srv:   s,
		nc:    nc,
		info:  info,
		queue: make(chan pending, s.opts.MaxInFlightPerConn),
	}
	c.log = s.opts.Logger.With("conn", id, "remote", c.info.RemoteAddr)
	c.ctx, c.cancel = context.WithCancel(s.baseCtx)
	return c
}

// abort tears the connection down now: the handler's ctx is cancelled and
// the socket closed, so blocked reads and writes fail.
func (c *conn) abort() {
	// Close before cancel: a Wait that returns on the cancel must find the
	// socket already closed.
	_ = c.nc.Close() // a second Close only reports net.ErrClosed
	c.cancel()
}

// drain stops reading at end; what was read by then is still answered.
// Reading on until end answers the requests a client sent before it could
// see the shutdown (a produce written just after its connection's
// ApiVersions, say) instead of closing on them: a client cannot tell a
// request the broker never read from one it lost, and some (franz-go)
// refuse to retry when a connection's first request meets a close.
func (c *conn) drain(end time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.draining = true
	c.mu.drainEnd = end
	_ = c.nc.SetReadDeadline(end) // a deadline past wakes a blocked read
}

// armReadDeadline sets the idle deadline for the next frame, or reports
// false once a draining connection's reading time is over. Under mu so that
// it cannot undo the deadline set by drain.
func (c *conn) armReadDeadline() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.draining {
		return time.Now().Before(c.mu.drainEnd) // drain's deadline stays
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	return true
}

func (c *conn) draining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.draining
}

func (c *conn) readLoop() {
	defer c.srv.wg.Done()
	defer close(c.queue)
	if !c.handshakeTLS() {
		return
	}
	// Frames are read through a small buffer: a request that fits in it
	// (a fetch, a produce of a few records) costs one read(2) with its size
	// prefix, and pipelined requests share reads; a larger body is read
	// straight into its frame past what the buffer holds.
	rd := bufio.NewReaderSize(c.nc, frameReadBufferBytes)
	var sizeBuf [4]byte
	for {
		if !c.armReadDeadline() {
			return
		}
		n, err := io.ReadFull(rd, sizeBuf[:])
		if err != nil {
			if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && c.inFlight.Load() > 0 {
				continue // waiting on our own replies is not idleness
			}
			c.readFailed("reading frame size", err)
			return
		}
		size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
		if limit := c.frameLimit(); size < 0 || size > limit {
			c.log.Warn("closing connection: frame size out of range",
				"size", size, "max", limit)
			c.abort()
			return
		}
		frame := getBuffer(int(size))
		if _, err := io.ReadFull(rd, *frame); err != nil {
			putBuffer(frame)
			c.readFailed("reading frame body", err)
			return
		}
		// A throttled response was written: this request waits out the
		// throttle, and the client's next ones queue up in the socket (a few in rd).
		if !c.throttleWait(c.muteLeft()) {
			putBuffer(frame)
			return
		}
		read := c.stamp()
		var (
			p  pending
			ok bool
		)
		if c.rawSASL {
			p, ok = c.rawSASLStep(frame)
		} else {
			p, ok = c.handle(frame)
		}
		p.clock.read, p.clock.handled = read, c.stamp()
		if !ok {
			putBuffer(frame)
			c.abort()
			return
		}
		if p.reply.Mute > 0 {
			c.muteUntil(time.Now().Add(p.reply.Mute))
		}
		c.inFlight.Add(1)
		c.queue <- p // never blocks forever: see the conn invariant
		if p.reply.Close {
			return
		}
	}
}

// handshakeTLS completes the TLS handshake of a TLS connection within the
// idle timeout; false means the connection is being torn down.
func (c *conn) handshakeTLS() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	if !c.armReadDeadline() {
		return false
	}
	_ = tc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	if err := tc.HandshakeContext(c.ctx); err != nil {
		c.log.Info("closing connection: TLS handshake failed", "err", err)
		c.abort()
		return false
	}
	principal, ok := certificatePrincipal(tc.ConnectionState().PeerCertificates, c.srv.opts.MapCertificate)
	if !ok {
		c.log.Info("closing connection: no ssl.principal.mapping.rules rule applies to the client certificate",
			"subject", tc.ConnectionState().PeerCertificates[0].Subject.String())
		c.abort()
		return false
	}
	c.info.tlsPrincipal = principal
	return true
}

// readFailed ends reading. While draining a failed read is expected and the
// writer still flushes; otherwise the client is gone or broke the protocol.
func (c *conn) readFailed(what string, err error) {
	if c.draining() {
		return
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		c.log.Debug("connection closed", "while", what)
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.log.Info("closing idle connection", "idle_timeout", c.srv.opts.IdleTimeout)
	default:
		c.log.Info("closing connection", "while", what, "err", err)
	}
	c.abort()
}

// handle decodes frame and calls the Handler. ok is false if the connection
// must be closed.
func (c *conn) handle(frame *[]byte) (pending, bool) {
	h := c.srv.opts.Handler
	d, err := decodeRequest(*frame, h.Supported, &c.ids)
	if err != nil {
		c.log.Info("closing connection: bad request", "key", d.key, "version", d.version, "err", err)
		return pending{}, false
	}
	if why := c.sessionRefusal(d.header); why != "" {
		c.log.Info("closing connection: "+why, "key", d.key)
		return pending{}, false
	}
	if !saslAllows(c.info.SASL, d.key) {
		c.log.Info("closing connection: request not allowed before SASL authentication completes", "key", d.key)
		return pending{}, false
	}
	p := pending{key: d.key, version: d.version, correlationID: d.correlationID, frame: frame}
	req := &Request{Key: d.key, Version: d.version, CorrelationID: d.correlationID, ClientID: d.clientID, Body: d.body, Conn: &c.info, Stopping: c.srv.stopping}
	if d.apiVersionsFallback {
		// Ask the handler for the supported list with a v0 request.
		body := kmsg.NewPtrApiVersionsRequest()
		body.SetVersion(0)
		req.Version, req.Body = 0, body
		p.version, p.apiVersionsFallback = 0, true
	}
	authenticated := c.info.SASL != nil && c.info.SASL.Authenticated()
	p.reply = h.Handle(c.ctx, req)
	c.afterSASLStep(d.header, authenticated, &p.reply)
	c.noteHandshake(d.header)
	return p, true
}

func (c *conn) writeLoop() {
	defer c.srv.wg.Done()
	defer c.srv.connDone(c)
	defer c.abort()
	broken := false // after a write error or a Close, only drain
	for p := range c.queue {
		p.clock.picked = c.stamp()
		err := c.finish(&p, broken)
		c.observeTiming(&p, c.stamp())
		if p.reply.Release != nil {
			p.reply.Release()
		}
		if err != nil {
			c.log.Info("closing connection", "err", err)
			broken = true
			c.abort()
		}
		if p.reply.Close && !broken {
			broken = true
			c.abort()
		}
		putBuffer(p.frame)
		c.inFlight.Add(-1)
	}
}

// errHandler marks replies that break the Handler contract.
var errHandler = errors.New("server: handler bug")

// finish obtains p's response (calling Wait even if broken, to release the
// handler's resources) and writes it unless broken.
func (c *conn) finish(p *pending, broken bool) error {
	if p.rawSASL {
		return c.writeRawToken(p, broken)
	}
	r := p.reply
	resp := r.Resp
	if resp == nil && r.Wait != nil {
		resp = r.Wait()
		p.clock.waited = c.stamp()
		if resp == nil && !r.NoResponse {
			c.log.Error("Wait returned a nil response", "key", p.key)
			return fmt.Errorf("%w: nil response from Wait for key %d", errHandler, p.key)
		}
	}
	if broken || r.NoResponse || c.ctx.Err() != nil { // torn down: write nothing
		return nil
	}
	if resp == nil {
		if r.Close {
			return nil
		}
		c.log.Error("empty Reply", "key", p.key)
		return fmt.Errorf("%w: empty Reply for key %d", errHandler, p.key)
	}
	if resp.Key() != p.key {
		c.log.Error("response for the wrong api key", "key", p.key, "response_key", resp.Key())
		return fmt.Errorf("%w: response key %d for request key %d", errHandler, resp.Key(), p.key)
	}
	resp.SetVersion(p.version)
	if p.apiVersionsFallback {
		av, ok := resp.(*kmsg.ApiVersionsResponse)
		if !ok {
			return fmt.Errorf("%w: ApiVersions response of type %T", errHandler, resp)
		}
		av.ErrorCode = errUnsupportedVersionCode
		// ApiVersions' own range alone, as Kafka's
		// ApiVersionsRequest.getErrorResponse (KIP-511): the client asks
		// again at a version both know, one that carries its software
		// name and version.
		av.ApiKeys = slices.DeleteFunc(av.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey != apiVersionsKey })
	}
	throttle, after := throttleOf(resp)
	if throttle > 0 && !after && !c.throttleWait(throttle) {
		return nil // torn down while holding the response back
	}
	// The mute of a response that carries its throttle (KIP-219) starts
	// before the response is written: a client that reads it and sends
	// its next request at once must find the connection muted already.
	if throttle > 0 && after {
		c.muteUntil(time.Now().Add(throttle))
	}
	// The writer goroutine owns wbuf: one buffer per connection, reused for
	// every response, so steady fetch traffic encodes without allocating.
	c.wbuf = appendResponse(c.wbuf[:0], p.correlationID, resp)
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	var err error
	if splices := spliceList(r); len(splices) > 0 {
		var pieces []piece
		if pieces, err = splicePieces(c.wbuf, splices, resp.IsFlexible()); err != nil {
			c.log.Error("cannot splice a response", "key", p.key, "err", err)
			return fmt.Errorf("%w: %w", errHandler, err)
		}
		err = writePieces(c.nc, pieces)
	} else {
		_, err = c.nc.Write(c.wbuf)
	}
	if cap(c.wbuf) > maxWriteBufferBytes {
		c.wbuf = nil // do not pin the memory of a rare huge response
	}
	if err != nil {
		return fmt.Errorf("writing response: %w", err)
	}
	return nil
}

func spliceList(r Reply) []Splice {
	if r.Splices == nil {
		return nil
	}
	return r.Splices()
}
