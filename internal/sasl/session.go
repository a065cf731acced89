package sasl

import (
	"crypto/rand"
	"fmt"
	"slices"
	"time"
)

// maxMessageBytes bounds one client message, and so the memory a session
// spends on it. PLAIN and SCRAM messages of real clients are a few hundred
// bytes.
const maxMessageBytes = 64 << 10

// Session is one connection's SASL state. It is owned by the connection's
// reader goroutine: not safe for concurrent use.
//
// Invariants: state is never zero once NewSession returns; exchange is
// non-nil exactly in stateExchanging; user is non-empty exactly in
// stateAuthenticated.
type Session struct {
	cfg       *Config
	state     sessionState
	exchange  exchange
	user      string
	mechanism string // chosen by Handshake
	// reauthOf is the user a re-authentication (KIP-368) must prove again;
	// "" during a first authentication.
	reauthOf string
	// expires is when the credential of the last authentication expires
	// (an OAUTHBEARER token's, a delegation token's); zero for a password.
	expires time.Time
	// viaToken: the last authentication was with a delegation token.
	viaToken bool
}

// exchange is one mechanism's server side of one authentication.
type exchange interface {
	// step consumes the client's next message and returns the server's
	// reply; done is true when the client is authenticated, and then
	// authenticatedUser says who. After an error or done, step is not
	// called again.
	step(token []byte) (reply []byte, done bool, err error)
	authenticatedUser() string
}

type sessionState uint8

const (
	stateAwaitHandshake sessionState = iota + 1
	stateExchanging
	stateAuthenticated
	stateFailed
)

func (s sessionState) String() string {
	switch s {
	case stateAwaitHandshake:
		return "awaitHandshake"
	case stateExchanging:
		return "exchanging"
	case stateAuthenticated:
		return "authenticated"
	case stateFailed:
		return "failed"
	}
	return fmt.Sprintf("sessionState(%d)", uint8(s))
}

// validTransition is the one table of a session's lifecycle.
func validTransition(from, to sessionState) bool {
	switch from {
	case stateAwaitHandshake:
		return to == stateExchanging || to == stateFailed
	case stateExchanging:
		return to == stateAuthenticated || to == stateFailed
	case stateAuthenticated:
		return to == stateExchanging || to == stateFailed // re-authentication (KIP-368)
	}
	return false // failed is final
}

// NewSession starts a session on cfg, which the caller must not modify
// afterwards. It panics if cfg fails Validate: a listener's Config is
// validated when the listener is configured, so an invalid one here is a
// programmer error.
func NewSession(cfg *Config) *Session {
	if cfg == nil {
		panic("sasl: NewSession with a nil Config")
	}
	if err := cfg.Validate(); err != nil {
		panic("sasl: NewSession: " + err.Error())
	}
	return &Session{cfg: cfg, state: stateAwaitHandshake}
}

// Handshake answers SaslHandshake (v1): it selects mechanism. It answers
// CodeUnsupportedMechanism if mechanism is not enabled (the session is then
// failed) and CodeIllegalState if this is not the first step: a second
// handshake (fails the session), after authentication (the session stays
// authenticated), after a failure.
func (s *Session) Handshake(mechanism string) error {
	switch s.checkState() {
	case stateAwaitHandshake:
	case stateExchanging:
		return s.fail(illegalState("Unexpected Kafka request of type SASL_HANDSHAKE during SASL authentication."))
	case stateAuthenticated:
		// As Kafka: a session re-authenticates when it has a lifetime, set
		// by connections.max.reauth.ms or by an expiring credential.
		if !s.cfg.Reauthenticate && s.expires.IsZero() {
			return illegalState("SaslHandshake request received after successful authentication")
		}
		if mechanism != s.mechanism {
			return s.fail(&Error{Code: CodeUnsupportedMechanism, Message: fmt.Sprintf(
				"SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", clip(mechanism), s.mechanism)})
		}
		s.reauthOf = s.user
	case stateFailed:
		return illegalState(msgAlreadyFailed)
	}
	if !slices.Contains(s.cfg.Mechanisms, mechanism) {
		return s.fail(&Error{Code: CodeUnsupportedMechanism, Message: "Unsupported SASL mechanism " + clip(mechanism)})
	}
	s.exchange = s.newExchange(mechanism)
	s.mechanism = mechanism
	s.transition(stateExchanging)
	return nil
}

// Mechanism is the mechanism Handshake chose, "" before.
func (s *Session) Mechanism() string { return s.mechanism }

func (s *Session) newExchange(mechanism string) exchange {
	switch mechanism {
	case Plain:
		return &plainExchange{creds: s.cfg.Credentials}
	case OAuthBearer:
		return &oauthExchange{validate: s.cfg.Tokens}
	}
	h, ok := scramHashFor(mechanism)
	if !ok {
		panic("sasl: enabled mechanism " + mechanism + " has no exchange") // Validate rules it out
	}
	r := s.cfg.Rand
	if r == nil {
		r = rand.Reader
	}
	return &scramExchange{hash: h, creds: s.cfg.Credentials, tokens: s.cfg.DelegationTokens, rand: r, next: scramAwaitClientFirst}
}

// Mechanisms is the enabled list, in configured order: the SaslHandshake
// response's mechanisms. The caller may keep and modify it.
func (s *Session) Mechanisms() []string {
	s.checkState()
	return slices.Clone(s.cfg.Mechanisms)
}

// Authenticate answers one SaslAuthenticate: token is the client's
// auth_bytes; reply is the server's auth_bytes (empty for PLAIN; the
// server-first-message, then the server-final-message for SCRAM). It
// answers CodeIllegalState with no handshake yet (fails the session), once
// authenticated (the session stays authenticated) and once failed; and
// CodeAuthenticationFailed for any failure of the exchange, which fails the
// session. The one non-*Error error is a failure of Config.Rand (see the
// package documentation); it also fails the session.
func (s *Session) Authenticate(token []byte) (reply []byte, err error) {
	switch s.checkState() {
	case stateAwaitHandshake:
		return nil, s.fail(illegalState("Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake."))
	case stateExchanging:
	case stateAuthenticated:
		return nil, illegalState("SaslAuthenticate request received after successful authentication")
	case stateFailed:
		return nil, illegalState(msgAlreadyFailed)
	}
	if len(token) > maxMessageBytes {
		return nil, s.fail(authFailed(fmt.Sprintf("Authentication failed: SASL message of %d bytes is over the limit of %d bytes", len(token), maxMessageBytes)))
	}
	reply, done, err := s.exchange.step(token)
	if err != nil {
		return nil, s.fail(err)
	}
	if done {
		user := s.exchange.authenticatedUser()
		if s.reauthOf != "" && user != s.reauthOf {
			return nil, s.fail(authFailed(fmt.Sprintf("Cannot change principals during re-authentication from User:%s: User:%s", s.reauthOf, clip(user))))
		}
		s.user, s.reauthOf, s.expires, s.viaToken = user, "", time.Time{}, false
		if e, ok := s.exchange.(interface{ credentialExpiry() time.Time }); ok {
			s.expires = e.credentialExpiry()
		}
		if e, ok := s.exchange.(interface{ tokenAuthenticated() bool }); ok {
			s.viaToken = e.tokenAuthenticated()
		}
		s.transition(stateAuthenticated)
	}
	return reply, nil
}

// CredentialExpiry is when the credential the session authenticated with
// expires (an OAUTHBEARER token's exp); zero for a password, which does
// not, and before authentication. The connection's session must end by
// then (KIP-368), as Kafka's SaslServer reports it.
func (s *Session) CredentialExpiry() time.Time {
	s.checkState()
	return s.expires
}

// TokenAuthenticated reports whether the session authenticated with a
// delegation token (SCRAM with tokenauth=true): Kafka lets such a session
// neither create nor renew, expire or describe tokens.
func (s *Session) TokenAuthenticated() bool {
	return s.checkState() == stateAuthenticated && s.viaToken
}

// Authenticated reports whether the exchange completed successfully.
func (s *Session) Authenticated() bool { return s.checkState() == stateAuthenticated }

// Pending reports whether a mechanism was chosen and the exchange is not
// finished: the connection may then send only SaslAuthenticate.
func (s *Session) Pending() bool { return s.checkState() == stateExchanging }

// User is the authenticated user name, "" unless authenticated (before
// authentication, during a re-authentication, after a failed one).
// Usernames are case-sensitive and not normalized (Kafka does no SASLprep).
func (s *Session) User() string {
	if s.checkState() != stateAuthenticated {
		return ""
	}
	return s.user
}

// Principal is Kafka's principal for the authenticated user, "User:" +
// User, and "" unless authenticated (never a principal that an ACL could
// match by accident).
func (s *Session) Principal() string {
	if u := s.User(); u != "" {
		return "User:" + u
	}
	return ""
}

// fail ends the session; err is what the failing call answers.
func (s *Session) fail(err error) error {
	s.transition(stateFailed)
	return err
}

func (s *Session) transition(to sessionState) {
	if !validTransition(s.state, to) {
		panic(fmt.Sprintf("sasl: session transition %v -> %v", s.state, to))
	}
	s.state = to
	if to != stateExchanging {
		s.exchange = nil // drops the exchange's copy of the credential
	}
	if to == stateAuthenticated && s.user == "" {
		panic("sasl: authenticated with an empty user")
	}
}

// checkState returns the state, panicking on a Session that NewSession did
// not make.
func (s *Session) checkState() sessionState {
	if s.state == 0 {
		panic("sasl: Session used without NewSession")
	}
	return s.state
}
