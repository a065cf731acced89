package sasl

import (
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// scramStep is where a SCRAM exchange is: the message it waits for.
type scramStep uint8

const (
	scramAwaitClientFirst scramStep = iota + 1
	scramAwaitClientFinal
	scramDone
)

// scramExchange is the server side of one SCRAM authentication (RFC 5802
// §5). The owning Session calls step only while the exchange is not done
// and never after an error.
type scramExchange struct {
	hash   scramHash
	creds  Credentials
	tokens DelegationTokens // nil: tokenauth is refused
	rand   io.Reader
	next   scramStep

	// Set by the client-first message and read by the client-final one.
	user            string
	cred            ScramCredential
	gs2Header       string
	clientFirstBare string
	serverFirst     string
	nonce           string    // client nonce + server nonce suffix
	viaToken        bool      // tokenauth=true: user is the token's owner
	tokenExpires    time.Time // with viaToken: when the token expires
}

func (x *scramExchange) step(token []byte) ([]byte, bool, error) {
	switch x.next {
	case scramAwaitClientFirst:
		reply, err := x.clientFirst(token)
		return reply, false, err
	case scramAwaitClientFinal:
		reply, err := x.clientFinal(token)
		return reply, err == nil, err
	}
	panic(fmt.Sprintf("sasl: SCRAM step in state %d", x.next))
}

func (x *scramExchange) authenticatedUser() string { return x.user }

// credentialExpiry is when the delegation token the client authenticated
// with expires; zero for a password.
func (x *scramExchange) credentialExpiry() time.Time { return x.tokenExpires }

// tokenAuthenticated reports whether the client authenticated with a
// delegation token.
func (x *scramExchange) tokenAuthenticated() bool { return x.viaToken }

// lookUp finds the credential the client-first message names: a user's, or
// with tokenauth=true a delegation token's, whose owner is then the user.
func (x *scramExchange) lookUp(m clientFirstMessage) (user string, cred ScramCredential, err error) {
	if !m.tokenAuth {
		cred, ok := x.creds.Scram(x.hash.mechanism, m.user)
		if !ok || !x.hash.validCredential(cred) {
			return "", ScramCredential{}, invalidScramCredentials(x.hash.mechanism)
		}
		return m.user, cred, nil
	}
	if x.tokens == nil {
		return "", ScramCredential{}, authFailed("Authentication failed: delegation tokens are off on this broker (delegation.token.secret.key is not set)")
	}
	cred, owner, expires, ok := x.tokens.DelegationToken(x.hash.mechanism, m.user)
	if !ok || owner == "" || !x.hash.validCredential(cred) {
		return "", ScramCredential{}, invalidScramCredentials(x.hash.mechanism)
	}
	x.viaToken, x.tokenExpires = true, expires
	return owner, cred, nil
}

// clientFirst answers the client-first-message with the
// server-first-message "r=<nonce>,s=<salt>,i=<iterations>".
func (x *scramExchange) clientFirst(token []byte) ([]byte, error) {
	m, err := parseClientFirst(token)
	if err != nil {
		return nil, err
	}
	user, cred, err := x.lookUp(m)
	if err != nil {
		return nil, err
	}
	// As Kafka: only after the user is known, and with Kafka's words. A
	// token's authzid, if any, is its id.
	if m.authzid != "" && m.authzid != m.user {
		return nil, authFailed(msgAuthzidMismatch)
	}
	suffix, err := serverNonce(x.rand)
	if err != nil {
		return nil, err
	}
	x.user = user
	x.cred = cred
	x.gs2Header = m.gs2Header
	x.clientFirstBare = m.bare
	x.nonce = m.nonce + suffix
	x.serverFirst = "r=" + x.nonce +
		",s=" + base64.StdEncoding.EncodeToString(cred.Salt) +
		",i=" + strconv.Itoa(int(cred.Iterations))
	x.next = scramAwaitClientFinal
	return []byte(x.serverFirst), nil
}

// clientFinal verifies the client's proof and answers with the
// server-final-message "v=<server signature>".
func (x *scramExchange) clientFinal(token []byte) ([]byte, error) {
	m, err := parseClientFinal(token, x.hash.sizeBytes)
	if err != nil {
		return nil, err
	}
	if m.channelBinding != base64.StdEncoding.EncodeToString([]byte(x.gs2Header)) {
		return nil, authFailed("Authentication failed: SCRAM channel binding (c=) does not match the GS2 header of the client first message")
	}
	// Kafka checks that the nonce ends with the server's, not that it equals
	// it: librdkafka (kcat, confluent-kafka-*) sends its own nonce before the
	// whole server nonce, which already starts with it. The proof covers
	// the message as sent, so the server's random suffix still binds it.
	if !strings.HasSuffix(m.nonce, x.nonce) {
		return nil, authFailed("Authentication failed: Invalid client nonce in the final client message")
	}
	authMessage := x.clientFirstBare + "," + x.serverFirst + "," + m.withoutProof
	clientSignature := x.hash.hmac(x.cred.StoredKey, authMessage)
	clientKey := make([]byte, x.hash.sizeBytes)
	subtle.XORBytes(clientKey, m.proof, clientSignature)
	if subtle.ConstantTimeCompare(x.hash.sum(clientKey), x.cred.StoredKey) != 1 {
		return nil, invalidScramCredentials(x.hash.mechanism)
	}
	serverSignature := x.hash.hmac(x.cred.ServerKey, authMessage)
	x.next = scramDone
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature)), nil
}
