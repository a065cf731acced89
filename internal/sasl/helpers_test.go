package sasl

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// memCredentials is an in-memory Credentials. It is read-only after
// construction, so it is safe for concurrent use.
type memCredentials struct {
	plain map[string]string
	scram map[[2]string]ScramCredential // {mechanism, user}
}

func (c *memCredentials) PlainPassword(user string) (string, bool) {
	p, ok := c.plain[user]
	return p, ok
}

func (c *memCredentials) Scram(mechanism, user string) (ScramCredential, bool) {
	cred, ok := c.scram[[2]string{mechanism, user}]
	return cred, ok
}

// countingCredentials counts lookups.
type countingCredentials struct {
	Credentials
	lookups atomic.Int32
}

func (c *countingCredentials) PlainPassword(user string) (string, bool) {
	c.lookups.Add(1)
	return c.Credentials.PlainPassword(user)
}

func (c *countingCredentials) Scram(mechanism, user string) (ScramCredential, bool) {
	c.lookups.Add(1)
	return c.Credentials.Scram(mechanism, user)
}

// rfcSalt is the salt of RFC 7677 §3's example.
var rfcSalt = mustBase64("W22ZaJ0SNY7soEsUEjb6gQ==")

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Fixture users. SCRAM users have these passwords for both mechanisms
// unless noted; PLAIN users are separate.
var scramPasswords = map[string]string{
	"user":       "pencil", // RFC 7677
	"a,b=c":      "pw-escaped",
	"sha256only": "only-256", // no SCRAM-SHA-512 credential
}

var plainPasswords = map[string]string{
	"alice": "alice-secret",
	"Bob":   "bob-secret",
	"é,=":   "pässwörd",
}

// fixtureCredentials builds the shared fixture once: PBKDF2 is the slow part.
var fixtureCredentials = sync.OnceValue(func() *memCredentials {
	c := &memCredentials{plain: plainPasswords, scram: map[[2]string]ScramCredential{}}
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		for user, pass := range scramPasswords {
			if user == "sha256only" && mech != ScramSHA256 {
				continue
			}
			c.scram[[2]string{mech, user}] = mustCredential(mech, pass, rfcSalt, MinIterations)
		}
		// weak is stored below Kafka's minimum (as a buggy store might).
		weak := mustCredential(mech, "weak", rfcSalt, MinIterations)
		weak.Iterations = 100
		c.scram[[2]string{mech, "weak"}] = weak
	}
	return c
})

func mustCredential(mech, pass string, salt []byte, iterations int32) ScramCredential {
	salted := cachedSaltPassword(mech, pass, salt, iterations)
	cred, err := NewScramCredential(mech, salt, salted, iterations)
	if err != nil {
		panic(err)
	}
	return cred
}

var saltedCache sync.Map // key string -> []byte

func cachedSaltPassword(mech, pass string, salt []byte, iterations int32) []byte {
	key := mech + "\x00" + pass + "\x00" + string(salt) + "\x00" + strconv.Itoa(int(iterations))
	if v, ok := saltedCache.Load(key); ok {
		return v.([]byte)
	}
	salted, err := SaltPassword(mech, pass, salt, iterations)
	if err != nil {
		panic(err)
	}
	saltedCache.Store(key, salted)
	return salted
}

func allMechanisms() []string { return []string{Plain, ScramSHA256, ScramSHA512} }

func newTestSession(t testing.TB, mechanisms ...string) *Session {
	t.Helper()
	if len(mechanisms) == 0 {
		mechanisms = allMechanisms()
	}
	return NewSession(&Config{Mechanisms: mechanisms, Credentials: fixtureCredentials()})
}

// fataler is the part of testing.TB that rapid.T has too.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// code returns err's Kafka error code, failing the test on a non-*Error.
func code(t fataler, err error) int16 {
	t.Helper()
	if err == nil {
		return 0
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *sasl.Error", err, err)
	}
	return e.Code
}

func message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// The rest is an independent client side of RFC 5802 §3, written with
// crypto/hmac directly rather than the package's helpers, to craft valid
// and invalid messages.

func testHash(mech string) func() hash.Hash {
	if mech == ScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

func testHMAC(mech string, key []byte, msg string) []byte {
	m := hmac.New(testHash(mech), key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// clientProof is ClientKey XOR HMAC(H(ClientKey), AuthMessage).
func clientProof(mech string, salted []byte, authMessage string) []byte {
	clientKey := testHMAC(mech, salted, "Client Key")
	h := testHash(mech)()
	h.Write(clientKey)
	sig := testHMAC(mech, h.Sum(nil), authMessage)
	for i := range sig {
		sig[i] ^= clientKey[i]
	}
	return sig
}

// serverFinal is "v=" base64(HMAC(HMAC(SaltedPassword, "Server Key"), AuthMessage)).
func serverFinal(mech string, salted []byte, authMessage string) string {
	return "v=" + base64.StdEncoding.EncodeToString(testHMAC(mech, testHMAC(mech, salted, "Server Key"), authMessage))
}

// scramCtx is what a client knows after the server-first-message.
type scramCtx struct {
	mech        string
	bare        string // client-first-message-bare as sent
	serverFirst string
	nonce       string // full nonce from the server
	clientNonce string
	salted      []byte // the client's SaltedPassword for the server's salt and iterations
}

// newScramCtx parses serverFirst as a client would and salts password.
func newScramCtx(t fataler, mech, clientFirst, serverFirst, password string) *scramCtx {
	t.Helper()
	_, rest, _ := strings.Cut(clientFirst[2:], ",")
	x := &scramCtx{mech: mech, bare: rest, serverFirst: serverFirst}
	for f := range strings.SplitSeq(rest, ",") {
		if v, ok := strings.CutPrefix(f, "r="); ok {
			x.clientNonce = v
		}
	}
	var salt []byte
	var iters int
	for f := range strings.SplitSeq(serverFirst, ",") {
		switch {
		case strings.HasPrefix(f, "r="):
			x.nonce = f[2:]
		case strings.HasPrefix(f, "s="):
			salt = mustBase64(f[2:])
		case strings.HasPrefix(f, "i="):
			iters, _ = strconv.Atoi(f[2:])
		}
	}
	if !strings.HasPrefix(x.nonce, x.clientNonce) || len(x.nonce) <= len(x.clientNonce) {
		t.Fatalf("server nonce %q does not extend client nonce %q", x.nonce, x.clientNonce)
	}
	x.salted = cachedSaltPassword(mech, password, salt, int32(iters))
	return x
}

func (x *scramCtx) authMessage(withoutProof string) string {
	return x.bare + "," + x.serverFirst + "," + withoutProof
}

// sign completes a client-final-message-without-proof with its proof.
func (x *scramCtx) sign(withoutProof string) string {
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(clientProof(x.mech, x.salted, x.authMessage(withoutProof)))
}
