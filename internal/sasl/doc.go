// Package sasl is the broker side of Kafka's SASL authentication for the
// mechanisms PLAIN (RFC 4616), SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802,
// RFC 7677) and OAUTHBEARER (RFC 7628, KIP-255; the token's validation is
// Config.Tokens'), as Apache Kafka's broker does it. It is a pure state machine:
// no I/O, no goroutines, no clock. A connection's reader goroutine owns one
// Session, feeds it the decoded SaslHandshake (v1) and SaslAuthenticate
// requests, and encodes what it returns; the environment (credentials and
// the nonce source) comes in through Config.
//
// A Session moves through one lifecycle, with one transition table
// (validTransition):
//
//	awaitHandshake --Handshake(enabled)--> exchanging --last step ok--> authenticated
//	awaitHandshake --any error-----------> failed
//	exchanging     --any error-----------> failed
//	authenticated  --Handshake(same)-----> exchanging (re-authentication: Config.Reauthenticate or an expiring credential)
//	authenticated  --Handshake(other)----> failed     (likewise)
//
// Contract (each line is a test):
//   - Handshake selects an enabled mechanism (names are case-sensitive, as in
//     Kafka); any other name answers CodeUnsupportedMechanism and fails the
//     session. Handshake is legal only as the first step.
//   - Authenticate before a handshake, a second Handshake, and any call on a
//     failed session answer CodeIllegalState; the first two also fail the
//     session. On an authenticated session Handshake and Authenticate answer
//     CodeIllegalState (as Kafka's KafkaApis does) and the session stays
//     authenticated: the driver decides whether to close — unless
//     Config.Reauthenticate (KIP-368) or the session's credential expires
//     (an OAUTHBEARER or a delegation token, as Kafka lets any session with
//     a lifetime re-authenticate): then a Handshake with the same
//     mechanism starts a re-authentication (Pending, not Authenticated,
//     until it ends), which must prove the same user; another mechanism
//     answers CodeUnsupportedMechanism and another user
//     CodeAuthenticationFailed, and both fail the session.
//   - Every error of an exchange (wrong credentials, unknown user, malformed
//     message, nonce or channel binding mismatch, a delegation token
//     without Config.DelegationTokens, a message over maxMessageBytes) answers CodeAuthenticationFailed and
//     fails the session; every later call answers CodeIllegalState.
//   - PLAIN completes in one Authenticate with an empty reply. An unknown
//     user and a wrong password give the same message, and passwords are
//     compared in constant time. As in Kafka's PlainSaslServer, the password
//     is checked before the authorization id.
//   - SCRAM completes in two Authenticate calls: client-first-message ->
//     server-first-message, client-final-message -> server-final-message.
//     The AuthMessage is built from the messages exactly as sent. The final
//     message's nonce must end with the server's nonce (Kafka's rule, which
//     librdkafka relies on: it sends its own nonce before the server's). An unknown
//     user fails at the first message, as in Kafka. Credential failures
//     carry Kafka's generic message, which names the mechanism; malformed
//     messages carry a message that says what was malformed but never
//     echoes the client's bytes.
//   - A Session authenticates only with the right password (PLAIN) or a
//     proof whose H(ClientKey) equals the stored key (SCRAM), compared in
//     constant time.
//   - OAUTHBEARER completes in one Authenticate with an empty reply when
//     Config.Tokens accepts the bearer token of the client's initial
//     response (and its authorization id, if any, is the token's
//     principal). A refused token is answered with RFC 7628's error
//     challenge ({"status":...}), not an error; the client's next message
//     (0x01) then fails the session with the reason. CredentialExpiry is
//     the token's expiry.
//   - Only the credential derived from a salted password is stored
//     (ScramCredential); the password never is. A session drops its copy of
//     the credential when the exchange ends.
//
// Errors: every step error is an *Error whose Code is the Kafka error code
// to answer with. The one exception is the nonce source: if Config.Rand
// fails, Authenticate returns that failure wrapped (%w) and fails the
// session; it is operational, not the client's fault, and the driver should
// close the connection. Sessions panic only on programmer errors: an
// invalid Config given to NewSession, a Session not made by NewSession.
//
//   - SCRAM with tokenauth=true authenticates a delegation token (KIP-48)
//     through Config.DelegationTokens: the user name is the token id, the
//     password its HMAC (TokenPassword); the session's user is then the
//     token's owner, TokenAuthenticated is true and CredentialExpiry is the
//     token's expiry.
//
// Not supported, as in a Kafka broker without them configured: channel
// binding (the -PLUS mechanisms) and the session lifetime of re-authentication (the server keeps the clock). A
// session does not frame tokens: the server
// carries them in SaslAuthenticate, or bare after a SaslHandshake v0.
package sasl
