package api

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
)

func TestDelegationTokenAPIsAdvertised(t *testing.T) {
	checkAdvertised(t, 38, 0, 3)
	checkAdvertised(t, 39, 0, 2)
	checkAdvertised(t, 40, 0, 2)
	checkAdvertised(t, 41, 0, 3)
}

func TestTokenVisible(t *testing.T) {
	tok := metadata.DelegationToken{ID: "t", Owner: "User:alice", Requester: "User:ops", Renewers: []string{"User:bob"}}
	yes := func() bool { return true }
	no := func() bool { return false }
	for _, tc := range []struct {
		name       string
		requester  string
		filtered   bool
		owners     []string
		authorized func() bool
		want       bool
	}{
		{"owner", "User:alice", false, nil, no, true},
		{"requester", "User:ops", false, nil, no, true},
		{"renewer", "User:bob", false, nil, no, true},
		{"other, unauthorized", "User:carol", false, nil, no, false},
		{"other, authorized", "User:carol", false, nil, yes, true},
		{"asked for its owner", "User:alice", true, []string{"User:alice"}, no, true},
		{"asked for its renewer", "User:carol", true, []string{"User:bob"}, yes, true},
		{"asked for someone else", "User:alice", true, []string{"User:dave"}, yes, false},
		{"asked for someone else among others", "User:alice", true, []string{"User:dave", "User:ops"}, no, true},
	} {
		if got := tokenVisible(tok, tc.requester, tc.filtered, tc.owners, tc.authorized); got != tc.want {
			t.Errorf("%s: visible %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTokenLifetime(t *testing.T) {
	for _, tc := range []struct {
		requested int64
		broker    time.Duration
		want      int64
	}{
		{0, time.Hour, 3_600_000},
		{-1, time.Hour, 3_600_000},
		{60_000, time.Hour, 60_000},
		{7_200_000, time.Hour, 3_600_000},
	} {
		if got := tokenLifetime(tc.requested, tc.broker); got != tc.want {
			t.Errorf("tokenLifetime(%d, %v) = %d, want %d", tc.requested, tc.broker, got, tc.want)
		}
	}
}

func TestTokenRequestAllowed(t *testing.T) {
	for principal, want := range map[string]bool{"User:ANONYMOUS": false, "": false, "User:CN=client": true} {
		if got := tokenRequestAllowed(&Request{Principal: principal}); got != want {
			t.Errorf("no SASL, principal %q: allowed %v, want %v", principal, got, want)
		}
	}
	s := sasl.NewSession(&sasl.Config{Mechanisms: []string{sasl.Plain}, Credentials: plainOnly{}})
	if tokenRequestAllowed(&Request{SASL: s, Principal: "User:alice"}) {
		t.Error("a SASL session that has not authenticated is allowed")
	}
}

// plainOnly is a Credentials with no user.
type plainOnly struct{}

func (plainOnly) PlainPassword(string) (string, bool) { return "", false }
func (plainOnly) Scram(string, string) (sasl.ScramCredential, bool) {
	return sasl.ScramCredential{}, false
}

const tokenSecret = "api-test-secret"

func createToken(rh *replicaHarness, as string, maxLifetimeMs int64, renewers ...string) *kmsg.CreateDelegationTokenResponse {
	rh.t.Helper()
	r := kmsg.NewPtrCreateDelegationTokenRequest()
	r.MaxLifetimeMillis = maxLifetimeMs
	for _, rn := range renewers {
		w := kmsg.NewCreateDelegationTokenRequestRenewer()
		w.PrincipalType, w.PrincipalName = splitPrincipal(rn)
		r.Renewers = append(r.Renewers, w)
	}
	return rh.handle(38, 3, r, as).(*kmsg.CreateDelegationTokenResponse)
}

func renewToken(rh *replicaHarness, as string, mac []byte, periodMs int64) *kmsg.RenewDelegationTokenResponse {
	rh.t.Helper()
	r := kmsg.NewPtrRenewDelegationTokenRequest()
	r.HMAC, r.RenewTimeMillis = mac, periodMs
	return rh.handle(39, 2, r, as).(*kmsg.RenewDelegationTokenResponse)
}

func expireToken(rh *replicaHarness, as string, mac []byte, periodMs int64) *kmsg.ExpireDelegationTokenResponse {
	rh.t.Helper()
	r := kmsg.NewPtrExpireDelegationTokenRequest()
	r.HMAC, r.ExpiryPeriodMillis = mac, periodMs
	return rh.handle(40, 2, r, as).(*kmsg.ExpireDelegationTokenResponse)
}

func describeTokens(rh *replicaHarness, as string) *kmsg.DescribeDelegationTokenResponse {
	rh.t.Helper()
	return rh.handle(41, 3, kmsg.NewPtrDescribeDelegationTokenRequest(), as).(*kmsg.DescribeDelegationTokenResponse)
}

func TestDelegationTokenLifecycle(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{"delegation.token.secret.key": tokenSecret, "delegation.token.expiry.time.ms": "60000"})
	c := createToken(rh, "User:alice", 0, "User:bob")
	if c.ErrorCode != 0 || c.PrincipalName != "alice" || c.TokenRequesterPrincipalName != "alice" {
		t.Fatalf("create: %+v", c)
	}
	if !bytes.Equal(c.HMAC, sasl.TokenHMAC(tokenSecret, c.TokenID)) {
		t.Fatal("the HMAC is not the secret's HMAC of the token id")
	}
	if c.ExpiryTimestamp-c.IssueTimestamp != 60_000 || c.MaxTimestamp-c.IssueTimestamp != 7*24*3_600_000 {
		t.Fatalf("issued %d, expiry %d, max %d: want a minute and a week", c.IssueTimestamp, c.ExpiryTimestamp, c.MaxTimestamp)
	}

	if r := renewToken(rh, "User:bob", c.HMAC, 30_000); r.ErrorCode != 0 || r.ExpiryTimestamp < c.IssueTimestamp+30_000 || r.ExpiryTimestamp > time.Now().UnixMilli()+30_000 {
		t.Fatalf("bob renewing for 30 s: %+v", r)
	}
	for as, want := range map[string]int16{"User:ops": kerr.DelegationTokenOwnerMismatch.Code, "User:ANONYMOUS": kerr.DelegationTokenRequestNotAllowed.Code} {
		if r := renewToken(rh, as, c.HMAC, 0); r.ErrorCode != want {
			t.Errorf("%s renewing: code %d, want %d", as, r.ErrorCode, want)
		}
	}
	if r := renewToken(rh, "User:alice", []byte("nope"), 0); r.ErrorCode != kerr.DelegationTokenNotFound.Code {
		t.Errorf("renewing an unknown HMAC: code %d", r.ErrorCode)
	}
	if d := describeTokens(rh, "User:alice"); d.ErrorCode != 0 || len(d.TokenDetails) != 1 || d.TokenDetails[0].TokenID != c.TokenID ||
		len(d.TokenDetails[0].Renewers) != 1 || d.TokenDetails[0].Renewers[0].PrincipalName != "bob" {
		t.Fatalf("describe: %+v", d)
	}

	if e := expireToken(rh, "User:alice", c.HMAC, -1); e.ErrorCode != 0 {
		t.Fatalf("expire now: %+v", e)
	}
	if r := renewToken(rh, "User:alice", c.HMAC, 0); r.ErrorCode != kerr.DelegationTokenNotFound.Code {
		t.Errorf("renewing an expired-now token: code %d, want DELEGATION_TOKEN_NOT_FOUND", r.ErrorCode)
	}
	if d := describeTokens(rh, "User:alice"); len(d.TokenDetails) != 0 {
		t.Fatalf("describe after expiring: %+v", d)
	}
}

func TestCreateDelegationTokenRefusals(t *testing.T) {
	on := newReplicaHarness(t, map[string]string{"delegation.token.secret.key": tokenSecret})
	off := newReplicaHarness(t, nil)
	for _, tc := range []struct {
		name     string
		rh       *replicaHarness
		as       string
		renewers []string
		want     int16
	}{
		{"anonymous", on, "User:ANONYMOUS", nil, kerr.DelegationTokenRequestNotAllowed.Code},
		{"anonymous, tokens off", off, "User:ANONYMOUS", nil, kerr.DelegationTokenRequestNotAllowed.Code},
		{"tokens off", off, "User:alice", nil, kerr.DelegationTokenAuthDisabled.Code},
		{"a renewer that is not a user", on, "User:alice", []string{"Group:g"}, kerr.InvalidPrincipalType.Code},
		{"a max lifetime shorter than the expiry", on, "User:alice", nil, 0},
	} {
		r := createToken(tc.rh, tc.as, 5_000, tc.renewers...)
		if r.ErrorCode != tc.want {
			t.Errorf("%s: code %d, want %d", tc.name, r.ErrorCode, tc.want)
		}
		if tc.want == 0 && (r.MaxTimestamp-r.IssueTimestamp != 5_000 || r.ExpiryTimestamp != r.MaxTimestamp) {
			t.Errorf("%s: issued %d, expiry %d, max %d", tc.name, r.IssueTimestamp, r.ExpiryTimestamp, r.MaxTimestamp)
		}
	}
	if d := describeTokens(off, "User:alice"); d.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Errorf("describe with tokens off: code %d", d.ErrorCode)
	}
}
