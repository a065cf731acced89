package e2e

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRandomRequestsOverSASL sends the random requests on connections that
// authenticated with PLAIN on a SASL_PLAINTEXT listener, to a broker with
// delegation tokens and the ACL authorizer on: the delegation token APIs
// answer an authenticated principal, and a SaslHandshake or
// SaslAuthenticate on a connection that is authenticated already meets the
// session's state checks.
func TestRandomRequestsOverSASL(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
		`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";`,
		"delegation.token.secret.key=e2e-secret-key",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS;User:alice",
	)
	f, sweep := prepareRandomRequests(t, b.Addr)
	f.names = append(f.names, "User:alice", "PLAIN", "SCRAM-SHA-256")
	sendRandomRequests(t, f, sweep, []*Broker{b}, func(b *Broker) (net.Conn, error) {
		return dialPlain(b.Listeners["SASL_PLAINTEXT"], "alice", "alice-secret")
	})
	requireHealthy(t, b.Addr, randomHealthTopic, "random requests over SASL")
}

// dialPlain opens a connection to addr and authenticates on it with PLAIN
// as user, as a client does: SaslHandshake v1, then SaslAuthenticate v1.
func dialPlain(addr, user, password string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, clientDialTimeout)
	if err != nil {
		return nil, err
	}
	handshake := kmsg.NewPtrSASLHandshakeRequest()
	handshake.Version, handshake.Mechanism = 1, "PLAIN"
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00"+user+"\x00"+password)
	for i, req := range []kmsg.Request{handshake, auth} {
		resp, err := exchangeRaw(c, req, int32(i+1))
		if err == nil {
			if ec := firstErrorCode(resp); ec != 0 {
				err = fmt.Errorf("%s: error code %d", kmsg.NameForKey(req.Key()), ec)
			}
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("authenticating as %s: %w", user, err)
		}
	}
	return c, nil
}

// exchangeRaw sends req on c with correlationID and decodes its answer.
func exchangeRaw(c net.Conn, req kmsg.Request, correlationID int32) (kmsg.Response, error) {
	if err := c.SetWriteDeadline(time.Now().Add(rawIOTimeout)); err != nil {
		return nil, err
	}
	if _, err := c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("strata-e2e-random")).AppendRequest(nil, req, correlationID)); err != nil {
		return nil, err
	}
	frame, err := readFrameOrClose(c, rawIOTimeout)
	if err != nil {
		return nil, err
	}
	return decodeResponseFrame(req, frame, correlationID)
}

// firstErrorCode is the first non-zero error code in resp, or 0.
func firstErrorCode(resp kmsg.Response) int16 {
	for _, ec := range errorCodes(resp) {
		if ec.code != 0 {
			return ec.code
		}
	}
	return 0
}
