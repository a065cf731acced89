package metadata

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Principals of the delegation token tests.
const (
	pAlice = "User:alice"
	pBob   = "User:bob"
	pCarol = "User:carol"
	pOps   = "Group:ops"
)

// dtoken is a valid token id owned by alice, requested by carol, renewable
// by bob: issued at 1000, expiring at 2000, at most 5000.
func dtoken(id string) DelegationToken {
	return DelegationToken{ID: id, Owner: pAlice, Requester: pCarol, Renewers: []string{pBob},
		IssueMs: 1000, MaxMs: 5000, ExpiryMs: 2000}
}

// dtokenWith is dtoken(id) changed by edit.
func dtokenWith(id string, edit func(*DelegationToken)) DelegationToken {
	t := dtoken(id)
	edit(&t)
	return t
}

func createToken(t DelegationToken) *createDelegationTokenCmd {
	return &createDelegationTokenCmd{Token: toWireDelegationToken(t)}
}

func renewToken(id, principal string, nowMs, renewMs int64) *renewDelegationTokenCmd {
	return &renewDelegationTokenCmd{ID: id, Principal: principal, NowMs: nowMs, RenewMs: renewMs}
}

func expireToken(id, principal string, nowMs, periodMs int64) *expireDelegationTokenCmd {
	return &expireDelegationTokenCmd{ID: id, Principal: principal, NowMs: nowMs, PeriodMs: periodMs}
}

// delegationTokenInvariantErr checks the delegation token invariants of
// Image.
func delegationTokenInvariantErr(img *Image) error {
	if img.delegationTokens == nil {
		return errors.New("nil delegation token map")
	}
	for id, t := range img.delegationTokens {
		if t.ID != id {
			return fmt.Errorf("token %q filed under %q", t.ID, id)
		}
		if t.Renewers != nil && len(t.Renewers) == 0 {
			return fmt.Errorf("token %q: empty renewers that are not nil", id)
		}
		if err := validateDelegationToken(t); err != nil {
			return err
		}
	}
	return nil
}

// wantTokens checks that img holds exactly want, through the exported
// accessors only.
func wantTokens(want ...DelegationToken) func(*testing.T, *Image) {
	return func(t *testing.T, img *Image) {
		t.Helper()
		want = slices.SortedFunc(slices.Values(want), func(a, b DelegationToken) int { return strings.Compare(a.ID, b.ID) })
		if len(want) == 0 {
			want = nil
		}
		if got := img.DelegationTokens(); !reflect.DeepEqual(got, want) {
			t.Errorf("DelegationTokens() =\n%+v\nwant\n%+v", got, want)
		}
		for _, w := range want {
			if got, ok := img.DelegationToken(w.ID); !ok || !reflect.DeepEqual(got, w) {
				t.Errorf("DelegationToken(%q) = %+v %v, want %+v", w.ID, got, ok, w)
			}
		}
		if _, ok := img.DelegationToken("nope"); ok {
			t.Error(`DelegationToken("nope") found`)
		}
	}
}

func TestDelegationTokenPredicates(t *testing.T) {
	tok := dtoken("t") // owner alice, requester carol, renewer bob; expiry 2000, max 5000
	for _, tc := range []struct {
		principal              string
		ownerOrRenewer, renews bool
	}{
		{pAlice, true, true},
		{pBob, true, true},
		{pCarol, true, false}, // the requester describes, never renews
		{"User:dave", false, false},
		{"Group:alice", false, false},
		{"alice", false, false},
		{"", false, false},
	} {
		if got := tok.OwnerOrRenewer(tc.principal); got != tc.ownerOrRenewer {
			t.Errorf("OwnerOrRenewer(%q) = %v, want %v", tc.principal, got, tc.ownerOrRenewer)
		}
		if got := tok.MayRenew(tc.principal); got != tc.renews {
			t.Errorf("MayRenew(%q) = %v, want %v", tc.principal, got, tc.renews)
		}
	}
	for _, tc := range []struct {
		tok     DelegationToken
		nowMs   int64
		expired bool
	}{
		{tok, 1000, false},
		{tok, 2000, false}, // at its expiry: not yet
		{tok, 2001, true},
		{dtokenWith("t", func(d *DelegationToken) { d.ExpiryMs, d.MaxMs = 5000, 5000 }), 5001, true},
		// Past the max alone (not a state an image holds, but Kafka checks both).
		{dtokenWith("t", func(d *DelegationToken) { d.ExpiryMs, d.MaxMs = 6000, 5000 }), 5001, true},
		{dtokenWith("t", func(d *DelegationToken) { d.ExpiryMs, d.MaxMs = 6000, 5000 }), 5000, false},
	} {
		if got := tc.tok.ExpiredAt(tc.nowMs); got != tc.expired {
			t.Errorf("%+v ExpiredAt(%d) = %v, want %v", tc.tok, tc.nowMs, got, tc.expired)
		}
	}
}

func TestValidateDelegationToken(t *testing.T) {
	long := strings.Repeat("x", maxPrincipalBytes)
	many := make([]string, maxDelegationTokenRenewers+1)
	for i := range many {
		many[i] = fmt.Sprintf("User:u%05d", i)
	}
	for _, tc := range []struct {
		name string
		edit func(*DelegationToken)
		want error
	}{
		{"valid", func(*DelegationToken) {}, nil},
		{"no renewer", func(d *DelegationToken) { d.Renewers = nil }, nil},
		{"several renewers", func(d *DelegationToken) { d.Renewers = []string{pAlice, pBob, pCarol} }, nil},
		{"most renewers", func(d *DelegationToken) { d.Renewers = many[1:] }, nil},
		{"all times equal", func(d *DelegationToken) { d.IssueMs, d.ExpiryMs, d.MaxMs = 7, 7, 7 }, nil},
		{"all times zero", func(d *DelegationToken) { d.IssueMs, d.ExpiryMs, d.MaxMs = 0, 0, 0 }, nil},
		{"longest id", func(d *DelegationToken) { d.ID = strings.Repeat("i", maxDelegationTokenIDBytes) }, nil},
		{"longest principal", func(d *DelegationToken) { d.Owner = "User:" + long[5:] }, nil},
		{"colon in the name", func(d *DelegationToken) { d.Owner = "User:a:b" }, nil},
		{"owner of another type", func(d *DelegationToken) { d.Owner = pOps }, nil},
		{"requester of another type", func(d *DelegationToken) { d.Requester = pOps }, nil},

		{"empty id", func(d *DelegationToken) { d.ID = "" }, ErrInvalidDelegationToken},
		{"id too long", func(d *DelegationToken) { d.ID = strings.Repeat("i", maxDelegationTokenIDBytes+1) }, ErrInvalidDelegationToken},
		{"id not UTF-8", func(d *DelegationToken) { d.ID = "t\xff" }, ErrInvalidDelegationToken},
		{"empty owner", func(d *DelegationToken) { d.Owner = "" }, ErrInvalidDelegationToken},
		{"owner without a type", func(d *DelegationToken) { d.Owner = ":alice" }, ErrInvalidDelegationToken},
		{"owner without a name", func(d *DelegationToken) { d.Owner = "User:" }, ErrInvalidDelegationToken},
		{"owner without a colon", func(d *DelegationToken) { d.Owner = "alice" }, ErrInvalidDelegationToken},
		{"owner too long", func(d *DelegationToken) { d.Owner = "User:" + long }, ErrInvalidDelegationToken},
		{"owner not UTF-8", func(d *DelegationToken) { d.Owner = "User:\xff" }, ErrInvalidDelegationToken},
		{"empty requester", func(d *DelegationToken) { d.Requester = "" }, ErrInvalidDelegationToken},
		{"requester without a name", func(d *DelegationToken) { d.Requester = "User:" }, ErrInvalidDelegationToken},
		{"renewer without a colon", func(d *DelegationToken) { d.Renewers = []string{"bob"} }, ErrInvalidDelegationToken},
		{"renewer without a name", func(d *DelegationToken) { d.Renewers = []string{"User:"} }, ErrInvalidDelegationToken},
		{"renewer empty", func(d *DelegationToken) { d.Renewers = []string{""} }, ErrInvalidDelegationToken},
		{"renewers unsorted", func(d *DelegationToken) { d.Renewers = []string{pBob, pAlice} }, ErrInvalidDelegationToken},
		{"renewer twice", func(d *DelegationToken) { d.Renewers = []string{pBob, pBob} }, ErrInvalidDelegationToken},
		{"too many renewers", func(d *DelegationToken) { d.Renewers = many }, ErrInvalidDelegationToken},
		{"renewer a group", func(d *DelegationToken) { d.Renewers = []string{pOps} }, ErrInvalidPrincipalType},
		{"renewer type in lower case", func(d *DelegationToken) { d.Renewers = []string{"user:bob"} }, ErrInvalidPrincipalType},
		{"negative issue", func(d *DelegationToken) { d.IssueMs = -1 }, ErrInvalidDelegationToken},
		{"expiry before issue", func(d *DelegationToken) { d.ExpiryMs = 999 }, ErrInvalidDelegationToken},
		{"expiry after max", func(d *DelegationToken) { d.ExpiryMs = 5001 }, ErrInvalidDelegationToken},
		{"max before issue", func(d *DelegationToken) { d.MaxMs, d.ExpiryMs = 999, 999 }, ErrInvalidDelegationToken},
	} {
		err := validateDelegationToken(dtokenWith("t", tc.edit))
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestCanonicalRenewers(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{}, nil},
		{[]string{pBob}, []string{pBob}},
		{[]string{pCarol, pAlice, pCarol, pBob, pAlice}, []string{pAlice, pBob, pCarol}},
	} {
		in := slices.Clone(tc.in)
		if got := canonicalRenewers(in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("canonicalRenewers(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("canonicalRenewers changed its argument to %q", in)
		}
	}
}

// tokenCase is one row of the apply tables: a command on the image setup
// builds (empty without it), and its error or the tokens after it.
type tokenCase struct {
	name    string
	setup   func(t *testing.T) *Image
	cmd     command
	wantErr error
	want    []DelegationToken
}

func runTokenCases(t *testing.T, cases []tokenCase) {
	t.Helper()
	rows := make([]applyCase, len(cases))
	for i, tc := range cases {
		rows[i] = applyCase{name: tc.name, setup: tc.setup, cmd: tc.cmd, wantErr: tc.wantErr, check: wantTokens(tc.want...)}
	}
	runApplyCases(t, rows)
}

func TestApplyCreateDelegationToken(t *testing.T) {
	withT1 := func(t *testing.T) *Image { return build(t, createToken(dtoken("t1"))) }
	runTokenCases(t, []tokenCase{
		{name: "first token", cmd: createToken(dtoken("t1")), want: []DelegationToken{dtoken("t1")}},
		{name: "second token", setup: withT1, cmd: createToken(dtoken("t2")), want: []DelegationToken{dtoken("t1"), dtoken("t2")}},
		{name: "no renewer", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Renewers = nil })),
			want: []DelegationToken{dtokenWith("t1", func(d *DelegationToken) { d.Renewers = nil })}},
		{name: "empty renewers are kept as nil", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{} })),
			want: []DelegationToken{dtokenWith("t1", func(d *DelegationToken) { d.Renewers = nil })}},
		{name: "already expired is stored", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.IssueMs, d.ExpiryMs, d.MaxMs = 0, 0, 0 })),
			want: []DelegationToken{dtokenWith("t1", func(d *DelegationToken) { d.IssueMs, d.ExpiryMs, d.MaxMs = 0, 0, 0 })}},

		{name: "id in use", setup: withT1, cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Owner = pBob })),
			wantErr: ErrDelegationTokenExists},
		{name: "empty id", cmd: createToken(dtoken("")), wantErr: ErrInvalidDelegationToken},
		{name: "bad owner", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Owner = "alice" })), wantErr: ErrInvalidDelegationToken},
		{name: "bad requester", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Requester = ":x" })), wantErr: ErrInvalidDelegationToken},
		{name: "bad renewer", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{"User:"} })), wantErr: ErrInvalidDelegationToken},
		{name: "renewers unsorted", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{pCarol, pBob} })),
			wantErr: ErrInvalidDelegationToken},
		{name: "renewer twice", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{pBob, pBob} })),
			wantErr: ErrInvalidDelegationToken},
		{name: "renewer not a user", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{pOps, pBob} })),
			wantErr: ErrInvalidPrincipalType},
		{name: "negative issue", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.IssueMs = -1 })), wantErr: ErrInvalidDelegationToken},
		{name: "expiry before issue", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.ExpiryMs = 1 })), wantErr: ErrInvalidDelegationToken},
		{name: "expiry past max", cmd: createToken(dtokenWith("t1", func(d *DelegationToken) { d.MaxMs = 1999 })), wantErr: ErrInvalidDelegationToken},
	})
}

func TestApplyRenewDelegationToken(t *testing.T) {
	// t1: owner alice, requester carol, renewer bob; issued 1000, expiry 2000, max 5000.
	withT1 := func(t *testing.T) *Image { return build(t, createToken(dtoken("t1"))) }
	expiring := func(expiryMs int64) []DelegationToken {
		return []DelegationToken{dtokenWith("t1", func(d *DelegationToken) { d.ExpiryMs = expiryMs })}
	}
	huge := dtokenWith("t1", func(d *DelegationToken) { d.MaxMs = math.MaxInt64 })
	runTokenCases(t, []tokenCase{
		{name: "by the owner", setup: withT1, cmd: renewToken("t1", pAlice, 1500, 1000), want: expiring(2500)},
		{name: "by a renewer", setup: withT1, cmd: renewToken("t1", pBob, 1500, 1000), want: expiring(2500)},
		{name: "at the expiry", setup: withT1, cmd: renewToken("t1", pAlice, 2000, 1), want: expiring(2001)},
		{name: "shortens the expiry", setup: withT1, cmd: renewToken("t1", pAlice, 1100, 100), want: expiring(1200)},
		{name: "capped at max", setup: withT1, cmd: renewToken("t1", pAlice, 1500, 10_000), want: expiring(5000)},
		{name: "overflow saturates then caps at max", setup: withT1, cmd: renewToken("t1", pAlice, 1500, math.MaxInt64), want: expiring(5000)},
		{name: "overflow saturates at MaxInt64", setup: func(t *testing.T) *Image { return build(t, createToken(huge)) },
			cmd:  renewToken("t1", pAlice, 1500, math.MaxInt64),
			want: []DelegationToken{dtokenWith("t1", func(d *DelegationToken) { d.MaxMs, d.ExpiryMs = math.MaxInt64, math.MaxInt64 })}},
		{name: "a clock behind the issuer's never moves the expiry before the issue", setup: withT1,
			cmd: renewToken("t1", pAlice, 100, 10), want: expiring(1000)},

		{name: "not found", setup: withT1, cmd: renewToken("t2", pAlice, 1500, 1000), wantErr: ErrDelegationTokenNotFound},
		{name: "not found on an empty image", cmd: renewToken("t1", pAlice, 1500, 1000), wantErr: ErrDelegationTokenNotFound},
		{name: "expired by expiry", setup: withT1, cmd: renewToken("t1", pAlice, 2001, 1000), wantErr: ErrDelegationTokenExpired},
		{name: "expired by max", setup: func(t *testing.T) *Image {
			return build(t, createToken(dtokenWith("t1", func(d *DelegationToken) { d.ExpiryMs = 5000 })))
		}, cmd: renewToken("t1", pAlice, 5001, 1000), wantErr: ErrDelegationTokenExpired},
		{name: "the requester alone may not renew", setup: withT1, cmd: renewToken("t1", pCarol, 1500, 1000), wantErr: ErrDelegationTokenOwnership},
		{name: "a stranger may not renew", setup: withT1, cmd: renewToken("t1", "User:dave", 1500, 1000), wantErr: ErrDelegationTokenOwnership},
		{name: "expired is checked before ownership", setup: withT1, cmd: renewToken("t1", pCarol, 3000, 1000), wantErr: ErrDelegationTokenExpired},
		{name: "zero period", setup: withT1, cmd: renewToken("t1", pAlice, 1500, 0), wantErr: ErrInvalidDelegationToken},
		{name: "negative period", setup: withT1, cmd: renewToken("t1", pAlice, 1500, -1), wantErr: ErrInvalidDelegationToken},
		{name: "negative time", setup: withT1, cmd: renewToken("t1", pAlice, -1, 1000), wantErr: ErrInvalidDelegationToken},
		{name: "bad principal", setup: withT1, cmd: renewToken("t1", "alice", 1500, 1000), wantErr: ErrInvalidDelegationToken},
		{name: "empty id", setup: withT1, cmd: renewToken("", pAlice, 1500, 1000), wantErr: ErrInvalidDelegationToken},
	})
}

func TestApplyExpireDelegationToken(t *testing.T) {
	// t1: owner alice, requester carol, renewer bob; issued 1000, expiry 2000, max 5000.
	withT1T2 := func(t *testing.T) *Image { return build(t, createToken(dtoken("t1")), createToken(dtoken("t2"))) }
	expiring := func(expiryMs int64) []DelegationToken {
		return []DelegationToken{dtokenWith("t1", func(d *DelegationToken) { d.ExpiryMs = expiryMs }), dtoken("t2")}
	}
	runTokenCases(t, []tokenCase{
		{name: "negative period removes", setup: withT1T2, cmd: expireToken("t1", pAlice, 1500, -1), want: []DelegationToken{dtoken("t2")}},
		{name: "a renewer removes", setup: withT1T2, cmd: expireToken("t1", pBob, 1500, math.MinInt64), want: []DelegationToken{dtoken("t2")}},
		{name: "zero period expires now", setup: withT1T2, cmd: expireToken("t1", pAlice, 1500, 0), want: expiring(1500)},
		{name: "positive period moves the expiry", setup: withT1T2, cmd: expireToken("t1", pAlice, 1500, 2000), want: expiring(3500)},
		{name: "positive period capped at max", setup: withT1T2, cmd: expireToken("t1", pAlice, 1500, 4000), want: expiring(5000)},
		{name: "overflow saturates then caps at max", setup: withT1T2, cmd: expireToken("t1", pAlice, 1500, math.MaxInt64), want: expiring(5000)},
		{name: "a clock behind the issuer's never moves the expiry before the issue", setup: withT1T2,
			cmd: expireToken("t1", pAlice, 10, 0), want: expiring(1000)},

		{name: "not found", setup: withT1T2, cmd: expireToken("t3", pAlice, 1500, -1), wantErr: ErrDelegationTokenNotFound},
		{name: "expired", setup: withT1T2, cmd: expireToken("t1", pAlice, 2001, -1), wantErr: ErrDelegationTokenExpired},
		{name: "the requester alone may not expire", setup: withT1T2, cmd: expireToken("t1", pCarol, 1500, -1), wantErr: ErrDelegationTokenOwnership},
		{name: "a stranger may not expire", setup: withT1T2, cmd: expireToken("t1", "User:dave", 1500, 0), wantErr: ErrDelegationTokenOwnership},
		{name: "negative time", setup: withT1T2, cmd: expireToken("t1", pAlice, -5, -1), wantErr: ErrInvalidDelegationToken},
		{name: "bad principal", setup: withT1T2, cmd: expireToken("t1", "User:", 1500, -1), wantErr: ErrInvalidDelegationToken},
	})
}

func TestApplyRemoveExpiredDelegationTokens(t *testing.T) {
	at := func(id string, expiryMs, maxMs int64) DelegationToken {
		return dtokenWith(id, func(d *DelegationToken) { d.IssueMs, d.ExpiryMs, d.MaxMs = 0, expiryMs, maxMs })
	}
	a, b, c, d := at("a", 100, 100), at("b", 200, 300), at("c", 300, 300), at("d", 250, 1000)
	four := func(t *testing.T) *Image {
		return build(t, createToken(a), createToken(b), createToken(c), createToken(d))
	}
	runTokenCases(t, []tokenCase{
		{name: "empty image", cmd: removeExpiredAt(1000)},
		{name: "none expired", setup: four, cmd: removeExpiredAt(100), want: []DelegationToken{a, b, c, d}},
		{name: "one expired", setup: four, cmd: removeExpiredAt(101), want: []DelegationToken{b, c, d}},
		{name: "at an expiry it is kept", setup: four, cmd: removeExpiredAt(200), want: []DelegationToken{b, c, d}},
		{name: "two expired", setup: four, cmd: removeExpiredAt(201), want: []DelegationToken{c, d}},
		{name: "three expired", setup: four, cmd: removeExpiredAt(251), want: []DelegationToken{c}},
		{name: "all expired", setup: four, cmd: removeExpiredAt(301)},
		{name: "negative time", setup: four, cmd: removeExpiredAt(-1), wantErr: ErrInvalidDelegationToken},
	})
}

// TestDelegationTokenImagesAreCopyOnWrite: an image holds the tokens it
// was built with, whatever is applied to it later or to a sibling, and
// shares no renewer slice with a command or a caller.
func TestDelegationTokenImagesAreCopyOnWrite(t *testing.T) {
	t1 := dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{pBob, pCarol} })
	cmd := createToken(t1)
	v1 := build(t, cmd)
	cmd.Token.Renewers[0] = "User:mallory" // the command's slice is not the image's
	v2 := then(t, v1, renewToken("t1", pAlice, 1500, 1000))
	v3 := then(t, v2, createToken(dtoken("t2")))
	v4 := then(t, v3, expireToken("t1", pAlice, 1500, -1))
	sibling := then(t, v1, removeExpiredAt(3000))
	renewed := t1
	renewed.ExpiryMs = 2500
	wantTokens(t1)(t, v1)
	wantTokens(renewed)(t, v2)
	wantTokens(renewed, dtoken("t2"))(t, v3)
	wantTokens(dtoken("t2"))(t, v4)
	wantTokens()(t, sibling)

	got, _ := v1.DelegationToken("t1")
	got.Renewers[0] = "User:mallory"
	all := v1.DelegationTokens()
	all[0].Renewers[1] = "User:mallory"
	wantTokens(t1)(t, v1)
}

func removeExpiredAt(nowMs int64) *removeExpiredDelegationTokensCmd {
	return &removeExpiredDelegationTokensCmd{NowMs: nowMs}
}
