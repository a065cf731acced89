package e2e

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

const oauthLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

func jwtPart(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(data)
}

// unsecuredJWT is an unsecured token (alg none), as Kafka's and
// librdkafka's development logins make.
func unsecuredJWT(t *testing.T, claims map[string]any) string {
	return jwtPart(t, map[string]string{"alg": "none"}) + "." + jwtPart(t, claims) + "."
}

// signedJWT is an RS256 token of key, with kid in its header.
func signedJWT(t *testing.T, kid string, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	input := jwtPart(t, map[string]string{"alg": "RS256", "typ": "JWT", "kid": kid}) + "." + jwtPart(t, claims)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func claimsFor(sub string, extra ...any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"sub": sub, "iat": now - 5, "exp": now + 3600}
	for i := 0; i < len(extra); i += 2 {
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

func bearer(token string) kgo.Opt { return kgo.SASL(oauth.Auth{Token: token}.AsMechanism()) }

// OAUTHBEARER with Kafka's default validator (unsecured tokens, for
// development): franz-go and kcat (librdkafka's unsecured JWT login)
// produce and consume with a token carrying the required scope; a token
// without it, an expired one and a signed one are refused with
// SASL_AUTHENTICATION_FAILED.
func TestOAuthBearerUnsecured(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config="+oauthLoginModule+` required unsecuredValidatorRequiredScope="kafka";`)
	addr := b.Listeners["SASL_PLAINTEXT"]
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "oauth-unsecured", 1, nil)
	roundTrip(t, addr, "oauth-unsecured", 10, bearer(unsecuredJWT(t, claimsFor("alice", "scope", "kafka other"))))

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// The failure carries the error challenge's status, as Kafka's does
	// (franz-go's TestOAuthAuth looks for invalid_token).
	for name, tc := range map[string]struct{ token, status string }{
		"no scope": {unsecuredJWT(t, claimsFor("alice")), "insufficient_scope"},
		"expired":  {unsecuredJWT(t, claimsFor("alice", "scope", "kafka", "exp", time.Now().Unix()-600)), "invalid_token"},
		"signed":   {signedJWT(t, "k", key, claimsFor("alice", "scope", "kafka")), "invalid_token"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := pingErr(t, addr, bearer(tc.token)); !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), tc.status) {
				t.Fatalf("got %v, want SASL_AUTHENTICATION_FAILED naming %s", err, tc.status)
			}
		})
	}

	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat is not on PATH (CI installs it): its part is skipped")
		return
	}
	createTopic(t, adm, "oauth-kcat", 1, nil)
	runKcatScript(t, kcat, addr, "oauth-kcat", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=OAUTHBEARER",
		"enable.sasl.oauthbearer.unsecure.jwt=true", "sasl.oauthbearer.config=principal=alice scope=kafka"})
}

// identityProvider is a minimal OpenID provider on loopback: its JWKS
// endpoint serves the public keys, its token endpoint issues RS256 access
// tokens for the client credentials grant.
type identityProvider struct {
	srv  *httptest.Server
	keys map[string]*rsa.PrivateKey
}

func newIdentityProvider(t *testing.T) *identityProvider {
	t.Helper()
	idp := &identityProvider{keys: map[string]*rsa.PrivateKey{}}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	idp.keys["k1"] = key
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		var list []map[string]string
		for kid, k := range idp.keys {
			list = append(list, map[string]string{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
				"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": list})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || secret != "s3cret" || r.PostForm.Get("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		token := signedJWT(t, "k1", key, claimsFor(id, "aud", "kafka", "iss", "https://idp.test", "scope", r.PostForm.Get("scope")))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "bearer", "expires_in": 3600})
	})
	idp.srv = httptest.NewServer(mux)
	t.Cleanup(idp.srv.Close)
	return idp
}

// OAUTHBEARER with Kafka's OAuthBearerValidatorCallbackHandler (KIP-768):
// the broker verifies signed tokens with the provider's JWKS and checks
// audience and issuer; franz-go presents a token, sarama gets its own from
// the provider's token endpoint; tokens of an unknown key, with a forged
// signature, for another audience or unsigned are refused.
func TestOAuthBearerSigned(t *testing.T) {
	t.Parallel()
	idp := newIdentityProvider(t)
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url="+idp.srv.URL+"/jwks",
		"sasl.oauthbearer.expected.audience=kafka",
		"sasl.oauthbearer.expected.issuer=https://idp.test")
	addr := b.Listeners["SASL_PLAINTEXT"]
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "oauth-signed", 1, nil)
	good := claimsFor("svc-orders", "aud", "kafka", "iss", "https://idp.test")
	roundTrip(t, addr, "oauth-signed", 10, bearer(signedJWT(t, "k1", idp.keys["k1"], good)))

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, token := range map[string]string{
		"unknown key":      signedJWT(t, "k9", other, good),
		"forged signature": signedJWT(t, "k1", other, good),
		"other audience":   signedJWT(t, "k1", idp.keys["k1"], claimsFor("svc-orders", "aud", "web", "iss", "https://idp.test")),
		"unsigned":         unsecuredJWT(t, good),
	} {
		t.Run(name, func(t *testing.T) {
			if err := pingErr(t, addr, bearer(token)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("got %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}

	// sarama with a token its TokenProvider fetches from the provider's
	// token endpoint (client credentials), as a sarama user plugs one in.
	cfg := saramaConfig()
	cfg.Net.SASL.Enable, cfg.Net.SASL.Mechanism = true, sarama.SASLTypeOAuth
	cfg.Net.SASL.TokenProvider = idpTokenProvider{url: idp.srv.URL + "/token"}
	saramaRoundTrip(t, addr, "oauth-sarama", cfg)
}

// idpTokenProvider is a sarama.AccessTokenProvider that asks the
// provider's token endpoint for a token (the client credentials grant).
type idpTokenProvider struct{ url string }

func (p idpTokenProvider) Token() (*sarama.AccessToken, error) {
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "scope": {"kafka"}}.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("svc-sarama", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("token endpoint: %s, %v", resp.Status, err)
	}
	return &sarama.AccessToken{Token: body.AccessToken}, nil
}

// A session authenticated with a token ends when the token expires, even
// when connections.max.reauth.ms is longer (KIP-368, as Kafka bounds it):
// franz-go re-authenticates with a new token in time and keeps producing;
// once the provider hands out only expired tokens, the next session is
// refused.
func TestOAuthBearerSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=OAUTHBEARER", "connections.max.reauth.ms=600000")
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "oauth-reauth", 1, nil)
	const lifetime = 2 * time.Second
	var issued atomic.Int32
	var expired atomic.Bool
	mech := oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		issued.Add(1)
		exp := time.Now().Add(lifetime).Unix()
		if expired.Load() {
			exp = time.Now().Add(-time.Minute).Unix()
		}
		return oauth.Auth{Token: unsecuredJWT(t, map[string]any{"sub": "app", "exp": exp})}, nil
	})
	cl := newClient(t, b.Listeners["SASL_PLAINTEXT"], kgo.SASL(mech), kgo.RetryTimeout(3*time.Second))
	deadline := time.Now().Add(3 * lifetime)
	for n := 0; time.Now().Before(deadline); n++ {
		if err := produceErr(t, cl, "oauth-reauth"); err != nil {
			t.Fatalf("produce %d, across re-authentications: %v", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := issued.Load(); n < 3 {
		t.Fatalf("%d tokens issued over %v of %v sessions, want a re-authentication per token", n, 3*lifetime, lifetime)
	}
	expired.Store(true)
	time.Sleep(lifetime + 500*time.Millisecond)
	if err := produceErr(t, cl, "oauth-reauth"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a produce after the provider handed out an expired token: %v", err)
	}
}

// The principal of a token is User:<its sub claim> (or of the claim
// sasl.oauthbearer.sub.claim.name names), as ACLs see it: a service whose
// token names it may write where an ACL lets it, another may not.
func TestOAuthBearerPrincipalMeetsACLs(t *testing.T) {
	t.Parallel()
	idp := newIdentityProvider(t)
	b := startBrokerListeners(t, t.TempDir(), []string{"SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url="+idp.srv.URL+"/jwks",
		"sasl.oauthbearer.sub.claim.name=client_id",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin")
	token := func(clientID string) kgo.Opt {
		return bearer(signedJWT(t, "k1", idp.keys["k1"], claimsFor("ignored-sub", "client_id", clientID)))
	}
	admin := kadm.NewClient(newClient(t, b.Addr, token("admin")))
	createTopic(t, admin, "oauth-orders", 1, nil)
	createACLs(t, admin, kadm.NewACLs().Allow("User:svc-orders").AllowHosts().Topics("oauth-orders").Operations(kadm.OpWrite))
	if err := produceErr(t, newClient(t, b.Addr, token("svc-orders")), "oauth-orders"); err != nil {
		t.Fatalf("svc-orders, allowed to write: %v", err)
	}
	if err := produceErr(t, newClient(t, b.Addr, token("svc-other")), "oauth-orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("svc-other, without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
}
