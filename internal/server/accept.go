package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// waitForSlot holds the accept loop while the broker-wide limit (which
// spares the inter-broker listener) or the listener's own is reached, as
// Kafka's acceptor blocks; false means the server stopped accepting.
func (s *Server) waitForSlot() bool {
	if s.opts.Limits == nil {
		return true
	}
	return s.opts.Limits.waitForSlotOn(s.opts.ListenerName, s.opts.InterBroker, s.closed)
}

// admit counts the accepted nc in Options.Limits, or closes it: when its
// address has reached its limit, or when the server stops while it waits
// for a broker-wide slot (another listener took the one waitForSlot saw).
func (s *Server) admit(nc net.Conn) (slot, bool) {
	l := s.opts.Limits
	if l == nil {
		return slot{}, true
	}
	ip, isIP := remoteIP(nc.RemoteAddr())
	a := l.acquireOn(s.opts.ListenerName, ip, isIP, s.opts.InterBroker, s.closed)
	switch a.verdict {
	case verdictAdmit:
		return a.slot, true
	case verdictRefuse:
		s.logRefusal(ip, a.limit)
	case verdictThrottle:
		s.logThrottle(ip, a.hold)
		s.holdThenClose(nc, a.hold)
		return slot{}, false
	}
	_ = nc.Close()
	return slot{}, false
}

// holdThenClose closes nc, a connection over its address's
// connection_creation_rate, after hold (or as the server stops), as
// Kafka's acceptor delays closing a throttled connection: the client sees
// it open, unanswered, then closed, and its reconnect backoff starts
// after that. The accept loop goes on meanwhile.
func (s *Server) holdThenClose(nc net.Conn, hold time.Duration) {
	s.mu.Lock()
	if s.mu.closing {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(hold)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.closed:
		}
		_ = nc.Close()
	}()
}

// logThrottle logs a connection closed for its address's
// connection_creation_rate, rate-limited as logRefusal.
func (s *Server) logThrottle(ip netip.Addr, hold time.Duration) {
	logIt, suppressed := s.opts.Limits.noteRefusal(time.Now())
	if !logIt {
		return
	}
	s.opts.Logger.Info("closing connection: its address is over its connection_creation_rate quota",
		"remote_ip", ip, "closing_after", hold, "refusals_not_logged", suppressed)
}

// logRefusal logs a connection closed for its address's limit, at most
// once per refusalLogInterval across the broker's listeners.
func (s *Server) logRefusal(ip netip.Addr, limit int) {
	logIt, suppressed := s.opts.Limits.noteRefusal(time.Now())
	if !logIt {
		return
	}
	s.opts.Logger.Info("closing connection: its address already has the maximum number of connections",
		"remote_ip", ip, "max_connections_per_ip", limit,
		"refusals_not_logged", suppressed)
}

// setSocketBuffers sizes the kernel buffers of an accepted TCP connection
// (before any TLS wrapping). A failure is logged and the connection served
// with the OS defaults, as a buffer size is a tuning, not a contract.
func (s *Server) setSocketBuffers(nc net.Conn) {
	send, recv := s.opts.SendBufferBytes, s.opts.ReceiveBufferBytes
	if send <= 0 && recv <= 0 {
		return
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return
	}
	var errs []error
	if send > 0 {
		if err := tc.SetWriteBuffer(send); err != nil {
			errs = append(errs, fmt.Errorf("send buffer %d bytes: %w", send, err))
		}
	}
	if recv > 0 {
		if err := tc.SetReadBuffer(recv); err != nil {
			errs = append(errs, fmt.Errorf("receive buffer %d bytes: %w", recv, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.opts.Logger.Warn("cannot size the socket buffers; using the OS defaults",
			"remote", nc.RemoteAddr(), "err", err)
	}
}
