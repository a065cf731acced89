package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/sasl"
)

var rawURL = base64.RawURLEncoding

func jwksDoc(t *testing.T, keys map[string]*rsa.PublicKey) []byte {
	t.Helper()
	var list []map[string]string
	for kid, k := range keys {
		list = append(list, map[string]string{"kty": "RSA", "kid": kid, "n": rawURL.EncodeToString(k.N.Bytes()),
			"e": rawURL.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
	}
	data, err := json.Marshal(map[string]any{"keys": list})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func rs256(t *testing.T, kid string, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return rawURL.EncodeToString(data)
	}
	input := enc(map[string]string{"alg": "RS256", "kid": kid}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + rawURL.EncodeToString(sig)
}

func newRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A key set behind a URL: tokens of its keys are accepted; a token of a key
// it lacks is refused and fetches the set again, so that a rotated key is
// taken as soon as the provider serves it.
func TestTokenValidatorFetchesAndRefreshesTheKeySet(t *testing.T) {
	k1, k2 := newRSAKey(t), newRSAKey(t)
	var doc atomic.Value
	doc.Store(jwksDoc(t, map[string]*rsa.PublicKey{"k1": &k1.PublicKey}))
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_, _ = w.Write(doc.Load().([]byte))
	}))
	defer srv.Close()
	cfg := &config.Broker{OAuth: map[string]config.OAuthValidation{"SASL_PLAINTEXT": {Secured: true, JWKSURL: srv.URL,
		JWKSRefresh: time.Hour, RetryBackoff: 10 * time.Millisecond, RetryBackoffMax: 50 * time.Millisecond,
		PrincipalClaim: "sub", ScopeClaim: "scope", ExpectedAudience: []string{"kafka"}}}}
	tv, err := startTokenValidators(cfg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer tv.close()
	v := tv.forListener("SASL_PLAINTEXT")
	if tv.forListener("PLAINTEXT") != nil {
		t.Fatal("a listener without OAUTHBEARER has a validator")
	}
	now := time.Now().Unix()
	claims := map[string]any{"sub": "svc", "aud": "kafka", "iat": now - 10, "exp": now + 3600}
	principal, expires, err := v.ValidateToken(rs256(t, "k1", k1, claims))
	if err != nil || principal != "svc" || expires.Unix() != now+3600 {
		t.Fatalf("a token of k1: %q until %v, %v", principal, expires, err)
	}
	var rej *sasl.TokenRejection
	if _, _, err := v.ValidateToken(rs256(t, "k1", k1, map[string]any{"sub": "svc", "aud": "web", "iat": now - 10, "exp": now + 3600})); !errors.As(err, &rej) || rej.Status != "invalid_token" {
		t.Fatalf("a token for another audience: %v", err)
	}

	doc.Store(jwksDoc(t, map[string]*rsa.PublicKey{"k1": &k1.PublicKey, "k2": &k2.PublicKey}))
	rotated := rs256(t, "k2", k2, claims)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, err := v.ValidateToken(rotated); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a token of the rotated key k2 still refused after 10 s (%d fetches): %v", fetches.Load(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A key set in a file must load at start: a missing file is the
// operator's to fix, in one line naming the config.
func TestTokenValidatorKeySetFile(t *testing.T) {
	k := newRSAKey(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	v := config.OAuthValidation{Secured: true, JWKSURL: "file://" + path, JWKSRefresh: time.Hour, RetryBackoff: time.Millisecond, RetryBackoffMax: time.Millisecond, PrincipalClaim: "sub"}
	cfg := &config.Broker{OAuth: map[string]config.OAuthValidation{"SASL_SSL": v}}
	if _, err := startTokenValidators(cfg, quietLogger()); err == nil || !strings.Contains(err.Error(), "sasl.oauthbearer.jwks.endpoint.url") {
		t.Fatalf("a missing key set file: %v, want an error naming the config", err)
	}
	if err := os.WriteFile(path, jwksDoc(t, map[string]*rsa.PublicKey{"k": &k.PublicKey}), 0o600); err != nil {
		t.Fatal(err)
	}
	tv, err := startTokenValidators(cfg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer tv.close()
	now := time.Now().Unix()
	if p, _, err := tv.forListener("SASL_SSL").ValidateToken(rs256(t, "k", k, map[string]any{"sub": "app", "iat": now, "exp": now + 60})); err != nil || p != "app" {
		t.Fatalf("a token of the file's key: %q, %v", p, err)
	}
}

// Unsecured validation needs no key set; a key set that does not answer
// yet refuses tokens instead of failing the start.
func TestTokenValidatorUnsecuredAndUnreachable(t *testing.T) {
	cfg := &config.Broker{OAuth: map[string]config.OAuthValidation{
		"A": {PrincipalClaim: "sub", ScopeClaim: "scope"},
		"B": {Secured: true, JWKSURL: "http://127.0.0.1:1/jwks", JWKSRefresh: time.Hour, RetryBackoff: time.Second, RetryBackoffMax: time.Second, PrincipalClaim: "sub"},
	}}
	tv, err := startTokenValidators(cfg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer tv.close()
	enc := func(v any) string { data, _ := json.Marshal(v); return rawURL.EncodeToString(data) }
	now := time.Now().Unix()
	token := enc(map[string]string{"alg": "none"}) + "." + enc(map[string]any{"sub": "dev", "exp": now + 60}) + "."
	if p, _, err := tv.forListener("A").ValidateToken(token); err != nil || p != "dev" {
		t.Fatalf("an unsecured token: %q, %v", p, err)
	}
	var rej *sasl.TokenRejection
	if _, _, err := tv.forListener("B").ValidateToken(token); !errors.As(err, &rej) || !strings.Contains(rej.Message, "not been fetched") {
		t.Fatalf("a token before the key set is fetched: %v", err)
	}
}

// Listeners with their own key sets get their own sources; listeners with
// the same settings share one.
func TestTokenValidatorsShareASourcePerKeySet(t *testing.T) {
	k1, k2 := newRSAKey(t), newRSAKey(t)
	dir := t.TempDir()
	write := func(name string, k *rsa.PrivateKey) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, jwksDoc(t, map[string]*rsa.PublicKey{"k": &k.PublicKey}), 0o600); err != nil {
			t.Fatal(err)
		}
		return "file://" + path
	}
	base := config.OAuthValidation{Secured: true, JWKSRefresh: time.Hour, RetryBackoff: time.Millisecond, RetryBackoffMax: time.Millisecond, PrincipalClaim: "sub"}
	external, internal := base, base
	external.JWKSURL, internal.JWKSURL = write("external.json", k1), write("internal.json", k2)
	cfg := &config.Broker{OAuth: map[string]config.OAuthValidation{"EXTERNAL": external, "EXTERNAL2": external, "INTERNAL": internal}}
	tv, err := startTokenValidators(cfg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer tv.close()
	if len(tv.sources) != 2 || tv.byListener["EXTERNAL"].keys != tv.byListener["EXTERNAL2"].keys {
		t.Fatalf("%d key set sources for two key sets, EXTERNAL and EXTERNAL2 sharing one: %v", len(tv.sources),
			tv.byListener["EXTERNAL"].keys == tv.byListener["EXTERNAL2"].keys)
	}
	now := time.Now().Unix()
	claims := map[string]any{"sub": "app", "iat": now, "exp": now + 60}
	for listener, want := range map[string]*rsa.PrivateKey{"EXTERNAL": k1, "EXTERNAL2": k1, "INTERNAL": k2} {
		other := k2
		if want == k2 {
			other = k1
		}
		v := tv.forListener(listener)
		if _, _, err := v.ValidateToken(rs256(t, "k", want, claims)); err != nil {
			t.Errorf("%s: a token of its key set: %v", listener, err)
		}
		if _, _, err := v.ValidateToken(rs256(t, "k", other, claims)); err == nil {
			t.Errorf("%s: a token of the other listener's key set was accepted", listener)
		}
	}
}

// An https key set endpoint is trusted through the listener's truststore
// (Kafka builds its key set client from the same ssl.* configs); without
// it, a private CA's endpoint is not trusted and tokens are refused.
func TestTokenValidatorTrustsTheTruststore(t *testing.T) {
	k := newRSAKey(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(jwksDoc(t, map[string]*rsa.PublicKey{"k": &k.PublicKey}))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	v := config.OAuthValidation{Secured: true, JWKSURL: srv.URL + "/jwks", JWKSRefresh: time.Hour, RetryBackoff: time.Hour, RetryBackoffMax: time.Hour,
		PrincipalClaim: "sub", TLS: config.TLSConfig{Protocols: []string{"TLSv1.2", "TLSv1.3"}, VerifyHostname: true}}
	now := time.Now().Unix()
	token := rs256(t, "k", k, map[string]any{"sub": "app", "iat": now, "exp": now + 60})

	untrusted, err := startTokenValidators(&config.Broker{OAuth: map[string]config.OAuthValidation{"L": v}}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer untrusted.close()
	if _, _, err := untrusted.forListener("L").ValidateToken(token); err == nil {
		t.Fatal("a key set from an endpoint of an untrusted CA was used")
	}

	v.TLS.TruststoreLocation = ca
	trusted, err := startTokenValidators(&config.Broker{OAuth: map[string]config.OAuthValidation{"L": v}}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer trusted.close()
	if p, _, err := trusted.forListener("L").ValidateToken(token); err != nil || p != "app" {
		t.Fatalf("with the endpoint's CA in the truststore: %q, %v", p, err)
	}
}

// A key set endpoint that answers with an error status is not read, even
// when its body is a key set (a cached or stale page): the key set stays
// unfetched and the error names the status.
func TestKeySetErrorStatusIsNotAKeySet(t *testing.T) {
	k := newRSAKey(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(jwksDoc(t, map[string]*rsa.PublicKey{"k": &k.PublicKey}))
	}))
	defer srv.Close()
	s, err := startJWKS(config.OAuthValidation{Secured: true, JWKSURL: srv.URL, JWKSRefresh: time.Hour,
		RetryBackoff: time.Hour, RetryBackoffMax: time.Hour, PrincipalClaim: "sub"}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if _, ok := s.current(); ok {
		t.Fatal("the key set of a 503 answer was taken")
	}
	if err := s.fetch(t.Context()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("fetch from an endpoint answering 503: %v, want an error naming the status", err)
	}
}
