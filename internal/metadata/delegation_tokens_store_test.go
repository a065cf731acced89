package metadata

import (
	"errors"
	"reflect"
	"testing"
)

// TestStoreDelegationTokens: create, renew, expire and remove expired
// tokens through a single-node Store; refusals change nothing.
func TestStoreDelegationTokens(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)

	// Renewers out of order and repeated: the Store sorts and dedups a copy.
	callers := []string{pCarol, pBob, pCarol}
	t1 := dtokenWith("t1", func(d *DelegationToken) { d.Renewers = callers })
	if err := s.CreateDelegationToken(ctx, t1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(callers, []string{pCarol, pBob, pCarol}) {
		t.Fatalf("the caller's renewers changed to %q", callers)
	}
	want1 := dtokenWith("t1", func(d *DelegationToken) { d.Renewers = []string{pBob, pCarol} })
	if err := s.CreateDelegationToken(ctx, dtoken("t2")); err != nil {
		t.Fatal(err)
	}
	wantTokens(want1, dtoken("t2"))(t, s.Image())

	for _, tc := range []struct {
		name string
		tok  DelegationToken
		want error
	}{
		{"id in use", dtoken("t1"), ErrDelegationTokenExists},
		{"empty id", dtoken(""), ErrInvalidDelegationToken},
		{"bad owner", dtokenWith("t3", func(d *DelegationToken) { d.Owner = "alice" }), ErrInvalidDelegationToken},
		{"renewer a group", dtokenWith("t3", func(d *DelegationToken) { d.Renewers = []string{pOps} }), ErrInvalidPrincipalType},
		{"expiry past max", dtokenWith("t3", func(d *DelegationToken) { d.ExpiryMs = 6000 }), ErrInvalidDelegationToken},
	} {
		if err := s.CreateDelegationToken(ctx, tc.tok); !errors.Is(err, tc.want) {
			t.Errorf("create, %s: %v, want %v", tc.name, err, tc.want)
		}
	}

	expiry, err := s.RenewDelegationToken(ctx, "t1", pCarol, 1500, 1000) // carol is a renewer of t1
	if err != nil || expiry != 2500 {
		t.Fatalf("renew: %d, %v; want 2500", expiry, err)
	}
	if expiry, err = s.RenewDelegationToken(ctx, "t1", pAlice, 1600, 1<<62); err != nil || expiry != 5000 {
		t.Fatalf("renew past max: %d, %v; want 5000", expiry, err)
	}
	want1.ExpiryMs = 5000
	for _, tc := range []struct {
		name                string
		id, principal       string
		nowMs, renewMs      int64
		want                error
		alsoExpireRefusesIt bool
	}{
		{"not found", "t9", pAlice, 1500, 1000, ErrDelegationTokenNotFound, true},
		{"expired", "t2", pAlice, 2001, 1000, ErrDelegationTokenExpired, true},
		{"requester only", "t2", pCarol, 1500, 1000, ErrDelegationTokenOwnership, true},
		{"zero period", "t2", pAlice, 1500, 0, ErrInvalidDelegationToken, false},
		{"bad principal", "t2", "User:", 1500, 1000, ErrInvalidDelegationToken, true},
		{"negative time", "t2", pAlice, -1, 1000, ErrInvalidDelegationToken, true},
	} {
		if _, err := s.RenewDelegationToken(ctx, tc.id, tc.principal, tc.nowMs, tc.renewMs); !errors.Is(err, tc.want) {
			t.Errorf("renew, %s: %v, want %v", tc.name, err, tc.want)
		}
		if !tc.alsoExpireRefusesIt {
			continue
		}
		if _, err := s.ExpireDelegationToken(ctx, tc.id, tc.principal, tc.nowMs, -1); !errors.Is(err, tc.want) {
			t.Errorf("expire, %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	wantTokens(want1, dtoken("t2"))(t, s.Image())

	if expiry, err = s.ExpireDelegationToken(ctx, "t2", pBob, 1500, 100); err != nil || expiry != 1600 {
		t.Fatalf("expire in 100 ms: %d, %v; want 1600", expiry, err)
	}
	want2 := dtokenWith("t2", func(d *DelegationToken) { d.ExpiryMs = 1600 })
	wantTokens(want1, want2)(t, s.Image())

	// Nothing expired at 1600: no proposal, no new version.
	version := s.Image().Version
	if n, err := s.RemoveExpiredDelegationTokens(ctx, 1600); err != nil || n != 0 || s.Image().Version != version {
		t.Fatalf("remove expired at 1600: %d, %v, version %d → %d", n, err, version, s.Image().Version)
	}
	if n, err := s.RemoveExpiredDelegationTokens(ctx, 1601); err != nil || n != 1 {
		t.Fatalf("remove expired at 1601: %d, %v; want 1", n, err)
	}
	wantTokens(want1)(t, s.Image())
	if _, err := s.RemoveExpiredDelegationTokens(ctx, -1); !errors.Is(err, ErrInvalidDelegationToken) {
		t.Errorf("remove expired at -1: %v", err)
	}

	if expiry, err = s.ExpireDelegationToken(ctx, "t1", pAlice, 1700, -1); err != nil || expiry != 1700 {
		t.Fatalf("expire now: %d, %v; want 1700", expiry, err)
	}
	wantTokens()(t, s.Image())
	if _, err := s.RenewDelegationToken(ctx, "t1", pAlice, 1700, 1000); !errors.Is(err, ErrDelegationTokenNotFound) {
		t.Errorf("renew an expired-at-once token: %v", err)
	}
}

// TestStoreDelegationTokensSurviveRestart: tokens are in the quorum, not
// in memory: they come back after Close/Open, from the log alone or from a
// snapshot plus the log, renewals and removals included.
func TestStoreDelegationTokensSurviveRestart(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			for _, id := range []string{"a", "b", "c", "d"} {
				if err := st.CreateDelegationToken(ctx, dtoken(id)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.ExpireDelegationToken(ctx, "d", pAlice, 1500, -1); err != nil {
				t.Fatal(err)
			}
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			// After the snapshot (if any): replayed from the log.
			if _, err := st.RenewDelegationToken(ctx, "a", pBob, 2000, 2000); err != nil {
				t.Fatal(err)
			}
			if n, err := st.RemoveExpiredDelegationTokens(ctx, 3000); err != nil || n != 2 {
				t.Fatalf("remove expired: %d, %v; want 2 (b and c)", n, err)
			}
			if err := st.CreateDelegationToken(ctx, dtoken("e")); err != nil {
				t.Fatal(err)
			}
			want := []DelegationToken{dtokenWith("a", func(d *DelegationToken) { d.ExpiryMs = 4000 }), dtoken("e")}
			wantTokens(want...)(t, st.Image())
			before := st.Image()
			closeStore(t, st)

			st = openStore(t, o)
			defer closeStore(t, st)
			sameState(t, st.Image(), before)
			wantTokens(want...)(t, st.Image())
			if err := st.CreateDelegationToken(ctx, dtoken("a")); !errors.Is(err, ErrDelegationTokenExists) {
				t.Errorf("create a token stored before the restart: %v", err)
			}
			if _, err := st.RenewDelegationToken(ctx, "b", pAlice, 1500, 1000); !errors.Is(err, ErrDelegationTokenNotFound) {
				t.Errorf("renew a token removed before the restart: %v", err)
			}
			if expiry, err := st.RenewDelegationToken(ctx, "a", pAlice, 3500, 1000); err != nil || expiry != 4500 {
				t.Errorf("renew after the restart: %d, %v; want 4500", expiry, err)
			}
		})
	}
}
