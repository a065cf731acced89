package server

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/sasl"
)

// Kafka api keys that an unauthenticated SASL connection may send.
const (
	saslHandshakeKey    int16 = 17
	saslAuthenticateKey int16 = 36
)

// maxUnauthenticatedBytes bounds a frame on a SASL connection that has not
// authenticated yet: Kafka's sasl.server.max.receive.size default (512 KiB),
// so that a stranger cannot make the broker allocate a 100 MiB request.
const maxUnauthenticatedBytes = 512 << 10

// saslAllows reports whether a request with key may be handled on a
// connection whose SASL session is s (nil: the listener has no SASL). Before
// a mechanism is chosen Kafka accepts ApiVersions and SaslHandshake; while
// an exchange is pending, only SaslAuthenticate; anything else is a protocol
// violation that closes the connection (IllegalSaslStateException).
func saslAllows(s *sasl.Session, key int16) bool {
	switch {
	case s == nil || s.Authenticated():
		return true
	case s.Pending():
		return key == saslAuthenticateKey
	default:
		return key == apiVersionsKey || key == saslHandshakeKey
	}
}

// frameLimit is the largest frame the connection accepts now.
func (c *conn) frameLimit() int32 {
	if s := c.info.SASL; s != nil && !s.Authenticated() {
		return min(c.srv.opts.MaxRequestBytes, maxUnauthenticatedBytes)
	}
	return c.srv.opts.MaxRequestBytes
}

// noteHandshake switches the connection to bare SASL tokens after a
// SaslHandshake v0 that chose a mechanism: v0 clients (Kafka before 1.0)
// send the exchange without Kafka request headers.
func (c *conn) noteHandshake(h header) {
	if h.key == saslHandshakeKey && h.version == 0 && c.info.SASL != nil && c.info.SASL.Pending() {
		c.rawSASL = true
	}
}

// rawSASLStep answers one bare SASL token of a SaslHandshake v0 exchange
// with the server's token, framed the same way. A failed step closes the
// connection: v0 has no room for an error, and Kafka closes it too.
func (c *conn) rawSASLStep(frame *[]byte) (pending, bool) {
	s := c.info.SASL
	token, err := s.Authenticate(*frame)
	if err != nil {
		c.log.Info("closing connection: SASL authentication failed", "err", err)
		c.observeAuthentication(false)
		c.sleep(c.srv.opts.FailedAuthenticationDelay)
		return pending{}, false
	}
	if !s.Pending() {
		c.rawSASL = false // authenticated: Kafka requests from here on
		c.observeAuthentication(true)
		c.startSession(nil)
	}
	return pending{frame: frame, rawSASL: true, rawToken: token, reply: Reply{NoResponse: true}}, true
}

// writeRawToken writes a bare SASL token with its size prefix.
func (c *conn) writeRawToken(p *pending, broken bool) error {
	if broken || c.ctx.Err() != nil {
		return nil
	}
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf[:0], uint32(len(p.rawToken)))
	c.wbuf = append(c.wbuf, p.rawToken...)
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return fmt.Errorf("writing a SASL token: %w", err)
	}
	return nil
}

// afterSASLStep follows a SaslHandshake or SaslAuthenticate the handler
// answered: it counts an authentication that just succeeded or failed (a
// failure is a reply that closes the connection), and holds a failure's
// answer for the failed-authentication delay, so that guessing passwords is
// slow (KIP-306).
func (c *conn) afterSASLStep(h header, wasAuthenticated bool, r *Reply) {
	s := c.info.SASL
	if s == nil || (h.key != saslHandshakeKey && h.key != saslAuthenticateKey) {
		return
	}
	switch {
	case !wasAuthenticated && s.Authenticated():
		c.observeAuthentication(true)
		c.startSession(r)
	case r.Close && !s.Authenticated():
		c.observeAuthentication(false)
		*r = c.delayed(*r)
	}
}

func (c *conn) observeAuthentication(ok bool) {
	if o := c.srv.opts.Authentications; o != nil {
		o.Observe(c.info.Listener, c.info.SASL.Mechanism(), ok)
	}
}

// delayed is r answered after the failed-authentication delay (or at once
// if the connection is torn down meanwhile).
func (c *conn) delayed(r Reply) Reply {
	d := c.srv.opts.FailedAuthenticationDelay
	if d <= 0 {
		return r
	}
	resp, wait := r.Resp, r.Wait
	r.Resp, r.Wait = nil, func() kmsg.Response {
		c.sleep(d)
		if wait != nil {
			return wait()
		}
		return resp
	}
	return r
}

// sleep waits d, or until the connection is torn down.
func (c *conn) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
}

// startSession starts the lifetime of an authenticated SASL session
// (Options.MaxReauth, shortened to the credential's own expiry: an
// OAUTHBEARER token's, as in Kafka) and tells a SaslAuthenticate v1+
// client about it, so that it re-authenticates in time.
func (c *conn) startSession(r *Reply) {
	now := time.Now()
	d := sessionLifetime(c.srv.opts.MaxReauth, c.info.SASL.CredentialExpiry(), now)
	if d <= 0 {
		return
	}
	c.sessionExpiry = now.Add(d)
	if r == nil {
		return
	}
	if resp, ok := r.Resp.(*kmsg.SASLAuthenticateResponse); ok && resp.GetVersion() >= 1 {
		resp.SessionLifetimeMillis = d.Milliseconds()
	}
}

// sessionRefusal says why a request must close the connection before it is
// handled, "" if it need not: a request other than a re-authentication
// after the SASL session ended (KIP-368), or a re-authentication through
// SaslHandshake v0, which Kafka does not allow (it has no session lifetime).
func (c *conn) sessionRefusal(h header) string {
	s := c.info.SASL
	if s == nil || !s.Authenticated() {
		return ""
	}
	reauth := h.key == saslHandshakeKey || h.key == saslAuthenticateKey
	switch {
	case reauth && h.key == saslHandshakeKey && h.version == 0:
		return "re-authentication needs SaslHandshake v1"
	case !reauth && !c.sessionExpiry.IsZero() && time.Now().After(c.sessionExpiry):
		return "the SASL session expired without re-authentication (connections.max.reauth.ms)"
	}
	return ""
}

// sessionLifetime is how long a SASL session authenticated at now lasts:
// maxReauth (0: for ever), but no longer than its credential when that
// expires (an OAUTHBEARER or a delegation token), with or without
// maxReauth, as Kafka bounds it. A token past its expiry gets the least
// lifetime, one millisecond: the next request ends the connection.
func sessionLifetime(maxReauth time.Duration, credentialExpiry, now time.Time) time.Duration {
	switch {
	case credentialExpiry.IsZero():
		return max(maxReauth, 0)
	case maxReauth <= 0:
		return max(credentialExpiry.Sub(now), time.Millisecond)
	}
	return max(min(maxReauth, credentialExpiry.Sub(now)), time.Millisecond)
}
