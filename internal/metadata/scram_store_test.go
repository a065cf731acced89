package metadata

import (
	"errors"
	"reflect"
	"testing"
)

func TestStoreAlterScramCredentials(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)

	c256 := scramCred(ScramSHA256, 1)
	caller := map[string]ScramCredential{ScramSHA256: c256, ScramSHA512: scramCred(ScramSHA512, 2)}
	if err := s.AlterScramCredentials(ctx, "alice", caller, nil); err != nil {
		t.Fatal(err)
	}
	want := scramCred(ScramSHA256, 1)
	c256.Salt[0] ^= 0xFF // the caller's bytes stay the caller's
	caller[ScramSHA256] = scramCred(ScramSHA256, 9)
	if got, ok := s.Image().ScramCredential(ScramSHA256, "alice"); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("ScramCredential = %+v %v, want %+v", got, ok, want)
	}
	if got := s.Image().ScramMechanisms("alice"); !reflect.DeepEqual(got, map[string]int32{
		ScramSHA256: MinScramIterations + 1, ScramSHA512: MinScramIterations + 2}) {
		t.Fatalf("ScramMechanisms = %v", got)
	}

	for _, tc := range []struct {
		name      string
		user      string
		upserts   map[string]ScramCredential
		deletions []string
		want      error
	}{
		{"empty user", "", upsert(ScramSHA256, 1), nil, ErrInvalidScramCredential},
		{"nothing to do", "alice", nil, nil, ErrInvalidScramCredential},
		{"unknown mechanism", "alice", upsert("SCRAM-SHA-1", 1), nil, ErrUnsupportedScramMechanism},
		{"upserted and deleted", "alice", upsert(ScramSHA256, 1), []string{ScramSHA256}, ErrDuplicateScramMechanism},
		{"deleted twice", "alice", nil, []string{ScramSHA512, ScramSHA512}, ErrDuplicateScramMechanism},
		{"few iterations", "alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Iterations = 100 }), nil, ErrInvalidScramCredential},
		{"wrong key size", "alice", map[string]ScramCredential{ScramSHA512: scramCred(ScramSHA256, 1)}, nil, ErrInvalidScramCredential},
		{"no salt", "alice", scramWith(ScramSHA512, func(c *ScramCredential) { c.Salt = nil }), nil, ErrInvalidScramCredential},
		{"unknown user", "bob", nil, []string{ScramSHA256}, ErrScramCredentialNotFound},
		// Only the image can refuse this one: it goes through the log.
		{"upsert with a missing deletion", "bob", upsert(ScramSHA256, 1), []string{ScramSHA512}, ErrScramCredentialNotFound},
	} {
		if err := s.AlterScramCredentials(ctx, tc.user, tc.upserts, tc.deletions); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if users := s.Image().ScramUsers(); !reflect.DeepEqual(users, []string{"alice"}) {
		t.Fatalf("refusals changed the users: %q", users)
	}

	if err := s.AlterScramCredentials(ctx, "alice", nil, []string{ScramSHA256, ScramSHA512}); err != nil {
		t.Fatal(err)
	}
	img := s.Image()
	if users := img.ScramUsers(); len(users) != 0 || img.ScramMechanisms("alice") != nil {
		t.Fatalf("after deleting every credential: users %q, mechanisms %v", users, img.ScramMechanisms("alice"))
	}
	if _, ok := img.ScramCredential(ScramSHA256, "alice"); ok {
		t.Fatal("a deleted credential is still there")
	}
}

// TestStoreScramCredentialsSurviveRestart: credentials are in the quorum,
// not in memory: they come back after Close/Open, from the log alone or from
// a snapshot plus the log, deletions included, and can be changed after.
func TestStoreScramCredentialsSurviveRestart(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			alter := func(user string, upserts map[string]ScramCredential, deletions ...string) {
				t.Helper()
				if err := st.AlterScramCredentials(ctx, user, upserts, deletions); err != nil {
					t.Fatalf("alter %q: %v", user, err)
				}
			}
			alter("alice", upsert(ScramSHA256, 1))
			alter("alice", upsert(ScramSHA512, 2))
			alter("bob", upsert(ScramSHA256, 3))
			alter("carol", upsert(ScramSHA512, 4))
			alter("carol", nil, ScramSHA512) // gone before the snapshot
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			// After the snapshot (if any): replayed from the log.
			alter("alice", upsert(ScramSHA256, 5), ScramSHA512)
			alter("dave", upsert(ScramSHA512, 6))
			alter("bob", nil, ScramSHA256)
			want := map[string]map[string]ScramCredential{
				"alice": {ScramSHA256: scramCred(ScramSHA256, 5)},
				"dave":  {ScramSHA512: scramCred(ScramSHA512, 6)},
			}
			wantScram(want)(t, st.Image())
			before := st.Image()
			closeStore(t, st)

			st = openStore(t, o)
			defer closeStore(t, st)
			got := st.Image()
			sameState(t, got, before)
			wantScram(want)(t, got)
			if err := st.AlterScramCredentials(ctx, "bob", nil, []string{ScramSHA256}); !errors.Is(err, ErrScramCredentialNotFound) {
				t.Errorf("delete a credential deleted before the restart: %v", err)
			}
			alter("alice", nil, ScramSHA256)
			wantScram(map[string]map[string]ScramCredential{"dave": want["dave"]})(t, st.Image())
		})
	}
}

// TestLoadOfflineSeesScramCredentials: the offline image holds the
// credentials too, from the log alone or a snapshot plus the log.
func TestLoadOfflineSeesScramCredentials(t *testing.T) {
	for _, mode := range []string{"log only", "snapshot then log"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			o := testOptions(t, t.TempDir(), "")
			st := openStore(t, o)
			if err := st.AlterScramCredentials(ctx, "alice", upsert(ScramSHA256, 1), nil); err != nil {
				t.Fatal(err)
			}
			if mode == "snapshot then log" {
				if err := st.raft.Snapshot().Error(); err != nil {
					t.Fatalf("forced snapshot: %v", err)
				}
			}
			if err := st.AlterScramCredentials(ctx, "bob", upsert(ScramSHA512, 2), nil); err != nil {
				t.Fatal(err)
			}
			closeStore(t, st)

			got, err := LoadOffline(o.Dir)
			if err != nil {
				t.Fatalf("LoadOffline: %v", err)
			}
			wantScram(map[string]map[string]ScramCredential{
				"alice": {ScramSHA256: scramCred(ScramSHA256, 1)},
				"bob":   {ScramSHA512: scramCred(ScramSHA512, 2)},
			})(t, got.Image)
		})
	}
}
