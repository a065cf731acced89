package e2e

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// tokenBrokerSettings turn delegation tokens on for SCRAM clients on a
// PLAINTEXT and a SASL_PLAINTEXT listener.
var tokenBrokerSettings = []string{
	"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
	"delegation.token.secret.key=e2e-secret-key",
}

// scramLogin authenticates as user with password over SCRAM-SHA-512.
func scramLogin(user, password string) kgo.Opt {
	return kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism())
}

// tokenLogin authenticates with a delegation token, as a Kafka client
// configured with one does: the token id for user name, the base64 HMAC
// for password, tokenauth=true.
func tokenLogin(tok kadm.DelegationToken, sha512 bool) kgo.Opt {
	a := scram.Auth{User: tok.TokenID, Pass: tokenPassword(tok), IsToken: true}
	if sha512 {
		return kgo.SASL(a.AsSha512Mechanism())
	}
	return kgo.SASL(a.AsSha256Mechanism())
}

func tokenPassword(tok kadm.DelegationToken) string {
	return base64.StdEncoding.EncodeToString(tok.HMAC)
}

// allowCreateTokens lets principal create tokens owned by owner (an ACL
// on a User resource, which kadm's builder does not write).
func allowCreateTokens(t *testing.T, addr, principal, owner string) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeUser, owner, kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host = principal, "*"
	c.Operation, c.PermissionType = kmsg.ACLOperationCreateTokens, kmsg.ACLPermissionTypeAllow
	req.Creations = append(req.Creations, c)
	resp, err := req.RequestWith(testContext(t, 15*time.Second), newClient(t, addr))
	if err == nil && len(resp.Results) == 1 && resp.Results[0].ErrorCode != 0 {
		err = kerr.ErrorForCode(resp.Results[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("allowing %s CREATE_TOKENS on %s: %v", principal, owner, err)
	}
}

// A user creates a token, a client logs in with it as that user (both
// SCRAM mechanisms), its renewer renews it, another user may not, the
// token survives a kill -9, and once expired it no longer logs in. Token
// requests from PLAINTEXT and from a token's own session are refused.
func TestDelegationTokens(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"}, tokenBrokerSettings...)
	adm := newAdmin(t, b.Addr)
	for _, u := range []string{"alice", "bob", "carol"} {
		upsertScramUser(t, adm, u, u+"-secret")
	}
	for _, topic := range []string{"dt-sha256", "dt-sha512", "dt-restart"} {
		createTopic(t, adm, topic, 1, nil)
	}
	sasl := b.Listeners["SASL_PLAINTEXT"]
	as := func(user string) *kadm.Client {
		return kadm.NewClient(newClient(t, sasl, scramLogin(user, user+"-secret")))
	}
	ctx := testContext(t, 60*time.Second)

	if _, err := adm.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("a token over PLAINTEXT: %v, want DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", err)
	}
	alice := as("alice")
	tok, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Type: "User", Name: "bob"}}})
	if err != nil {
		t.Fatalf("CreateDelegationToken as alice: %v", err)
	}
	if tok.Owner.Name != "alice" || tok.TokenRequesterPrincipal.Name != "alice" || tok.TokenID == "" || len(tok.HMAC) != 64 {
		t.Fatalf("token %+v: want alice's, with an id and a 64-byte HMAC", tok)
	}
	if life := tok.ExpiryTimestamp.Sub(tok.IssueTimestamp); life != 24*time.Hour {
		t.Fatalf("a new token lives %v, want delegation.token.expiry.time.ms (24h)", life)
	}

	// Logged in with the token, a client is alice.
	roundTrip(t, sasl, "dt-sha256", 5, tokenLogin(tok, false))
	roundTrip(t, sasl, "dt-sha512", 5, tokenLogin(tok, true))
	viaToken := kadm.NewClient(newClient(t, sasl, tokenLogin(tok, true)))
	if _, err := viaToken.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("a token from a token's session: %v, want DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", err)
	}

	described, err := alice.DescribeDelegationTokens(ctx)
	if err != nil || len(described) != 1 || described[0].TokenID != tok.TokenID || !bytes.Equal(described[0].HMAC, tok.HMAC) ||
		len(described[0].Renewers) != 1 || described[0].Renewers[0].Name != "bob" {
		t.Fatalf("DescribeDelegationTokens: %+v, %v; want the token, its HMAC and bob renewing", described, err)
	}
	if none, err := alice.DescribeDelegationTokens(ctx, kadm.Principal{Type: "User", Name: "dave"}); err != nil || len(none) != 0 {
		t.Fatalf("tokens of dave: %+v, %v; want none", none, err)
	}

	renewed, err := as("bob").RenewDelegationToken(ctx, tok.HMAC, time.Hour)
	if err != nil || time.Until(renewed) > time.Hour+time.Minute || time.Until(renewed) < 50*time.Minute {
		t.Fatalf("bob renewing for an hour: %v, %v; want about an hour from now", renewed, err)
	}
	if _, err := as("carol").RenewDelegationToken(ctx, tok.HMAC, time.Hour); !errors.Is(err, kerr.DelegationTokenOwnerMismatch) {
		t.Fatalf("carol renewing alice's token: %v, want DELEGATION_TOKEN_OWNER_MISMATCH", err)
	}
	if _, err := alice.RenewDelegationToken(ctx, []byte("not a token"), 0); !errors.Is(err, kerr.DelegationTokenNotFound) {
		t.Fatalf("renewing an unknown HMAC: %v, want DELEGATION_TOKEN_NOT_FOUND", err)
	}

	b.Kill()
	b.Restart()
	roundTrip(t, sasl, "dt-restart", 3, tokenLogin(tok, false))

	alice = as("alice")
	if _, err := alice.ExpireDelegationToken(ctx, tok.HMAC, -time.Millisecond); err != nil {
		t.Fatalf("alice expiring her token: %v", err)
	}
	if err := pingErr(t, sasl, tokenLogin(tok, false)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a login with an expired token: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	if left, err := alice.DescribeDelegationTokens(ctx); err != nil || len(left) != 0 {
		t.Fatalf("tokens after expiring the one: %+v, %v", left, err)
	}
}

// Without delegation.token.secret.key, token requests are
// DELEGATION_TOKEN_AUTH_DISABLED and a token login is refused.
func TestDelegationTokensOff(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"}, "sasl.enabled.mechanisms=SCRAM-SHA-512")
	upsertScramUser(t, newAdmin(t, b.Addr), "alice", "alice-secret")
	alice := kadm.NewClient(newClient(t, b.Listeners["SASL_PLAINTEXT"], scramLogin("alice", "alice-secret")))
	ctx := testContext(t, 30*time.Second)
	if _, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenAuthDisabled) {
		t.Fatalf("CreateDelegationToken with tokens off: %v, want DELEGATION_TOKEN_AUTH_DISABLED", err)
	}
	if _, err := alice.DescribeDelegationTokens(ctx); !errors.Is(err, kerr.DelegationTokenAuthDisabled) {
		t.Fatalf("DescribeDelegationTokens with tokens off: %v, want DELEGATION_TOKEN_AUTH_DISABLED", err)
	}
	forged := kadm.DelegationToken{TokenID: "some-token", HMAC: []byte("forged")}
	if err := pingErr(t, b.Listeners["SASL_PLAINTEXT"], tokenLogin(forged, true)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a token login with tokens off: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// A token's principal meets the ACLs of its owner; a token for another
// owner needs CREATE_TOKENS on that user (KIP-373), and a client sees only
// the tokens it owns, renews or may describe.
func TestDelegationTokenACLs(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"}, append(tokenBrokerSettings,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users=User:ANONYMOUS")...)
	adm := newAdmin(t, b.Addr)
	for _, u := range []string{"alice", "bob", "ops"} {
		upsertScramUser(t, adm, u, u+"-secret")
	}
	createTopic(t, adm, "dt-acl", 1, nil)
	createACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("dt-acl").Operations(kadm.OpAll))
	allowCreateTokens(t, b.Addr, "User:ops", "User:bob")
	sasl := b.Listeners["SASL_PLAINTEXT"]
	as := func(user string) *kadm.Client {
		return kadm.NewClient(newClient(t, sasl, scramLogin(user, user+"-secret")))
	}
	ctx := testContext(t, 60*time.Second)

	aliceTok, err := as("alice").CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatalf("alice's own token: %v", err)
	}
	roundTrip(t, sasl, "dt-acl", 3, tokenLogin(aliceTok, true))

	if _, err := as("ops").CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Type: "User", Name: "alice"}}); !errors.Is(err, kerr.DelegationTokenAuthorizationFailed) {
		t.Fatalf("ops creating a token for alice: %v, want DELEGATION_TOKEN_AUTHORIZATION_FAILED", err)
	}
	bobTok, err := as("ops").CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Type: "User", Name: "bob"}})
	if err != nil || bobTok.Owner.Name != "bob" || bobTok.TokenRequesterPrincipal.Name != "ops" {
		t.Fatalf("ops creating a token for bob: %+v, %v", bobTok, err)
	}
	if err := produceErr(t, newClient(t, sasl, tokenLogin(bobTok, false)), "dt-acl"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob's token writing where only alice may: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	for user, want := range map[string][]string{"alice": {aliceTok.TokenID}, "bob": {bobTok.TokenID}, "ops": {bobTok.TokenID}} {
		got, err := as(user).DescribeDelegationTokens(ctx)
		if err != nil || len(got) != len(want) || got[0].TokenID != want[0] {
			t.Fatalf("%s describes %+v, %v; want %v", user, got, err, want)
		}
	}
}

// A session authenticated with a token ends when the token does (KIP-368,
// as Kafka bounds it): a client keeps working while the token lives, and
// once it has expired its next session is refused.
func TestDelegationTokenSessionEndsWithIt(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"}, tokenBrokerSettings...)
	adm := newAdmin(t, b.Addr)
	upsertScramUser(t, adm, "alice", "alice-secret")
	createTopic(t, adm, "dt-short", 1, nil)
	sasl := b.Listeners["SASL_PLAINTEXT"]
	alice := kadm.NewClient(newClient(t, sasl, scramLogin("alice", "alice-secret")))
	const lifetime = 3 * time.Second
	tok, err := alice.CreateDelegationToken(testContext(t, 30*time.Second), kadm.CreateDelegationToken{MaxLifetime: lifetime})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.MaxTimestamp.Sub(tok.IssueTimestamp); got != lifetime || !tok.ExpiryTimestamp.Equal(tok.MaxTimestamp) {
		t.Fatalf("a token asked to live %v: max after %v, expiry %v", lifetime, got, tok.ExpiryTimestamp)
	}
	cl := newClient(t, sasl, tokenLogin(tok, false), kgo.RetryTimeout(2*time.Second))
	if err := produceErr(t, cl, "dt-short"); err != nil {
		t.Fatalf("producing while the token lives: %v", err)
	}
	time.Sleep(time.Until(tok.ExpiryTimestamp) + time.Second)
	if err := produceErr(t, cl, "dt-short"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("producing after the token expired: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}
