package metadata

import (
	"errors"
	"strings"
	"testing"
)

// The first claim wins: later claims leave the token and are told it; a
// token that is not 1-64 lowercase hex digits is refused.
func TestApplyClaimTierStore(t *testing.T) {
	img := emptyImage()
	next, err := applyClaimTierStore(img, &claimTierStoreCmd{Token: "00ff"}, 5)
	if err != nil || next.TierStore != "00ff" || next.Version != 5 {
		t.Fatalf("first claim: %+v, %v", next, err)
	}
	if img.TierStore != "" {
		t.Fatalf("the claim changed the image it was applied to")
	}
	again, err := applyClaimTierStore(next, &claimTierStoreCmd{Token: "abcd"}, 6)
	if err != nil || again.TierStore != "00ff" {
		t.Fatalf("second claim: %q, %v; want the first token kept", again.TierStore, err)
	}
	for _, bad := range []string{"", "ABCD", "12-4", "zz", strings.Repeat("a", TierStoreTokenMaxBytes+1)} {
		if _, err := applyClaimTierStore(img, &claimTierStoreCmd{Token: bad}, 7); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("token %q: %v, want ErrInvalidCommand", bad, err)
		}
	}
}

// The token survives a snapshot (v7); a v6 snapshot holding one is
// corrupt, and so is a v7 one holding a bad token.
func TestSnapshotKeepsTierStore(t *testing.T) {
	img := emptyImage()
	img.TierStore = "0123456789abcdef"
	data, err := encodeSnapshot(img)
	if err != nil || data[0] != snapshotFormatNewest {
		t.Fatalf("encoded as %d: %v", data[0], err)
	}
	back, err := decodeSnapshot(data)
	if err != nil || back.TierStore != img.TierStore {
		t.Fatalf("round trip: %q, %v", back.TierStore, err)
	}
	if _, err := decodeSnapshot([]byte("\x06" + string(data[1:]))); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v6 snapshot with a tier store token: %v, want ErrInvalidCommand", err)
	}
	bad := strings.Replace(string(data), "0123456789abcdef", "XYZ", 1)
	if _, err := decodeSnapshot([]byte(bad)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("bad token in a snapshot: %v, want ErrInvalidCommand", err)
	}
}

// Through Raft: the first claim is recorded, a second gets it back, and a
// restart (from the log, then from a snapshot) keeps it.
func TestStoreClaimTierStore(t *testing.T) {
	o := testOptions(t, t.TempDir(), "")
	s := openStore(t, o)
	if got, err := s.ClaimTierStore(t.Context(), "aa"); err != nil || got != "aa" {
		t.Fatalf("first claim: %q, %v", got, err)
	}
	if got, err := s.ClaimTierStore(t.Context(), "bb"); err != nil || got != "aa" {
		t.Fatalf("second claim: %q, %v; want aa", got, err)
	}
	closeStore(t, s)
	s = openStore(t, o)
	if got := s.Image().TierStore; got != "aa" {
		t.Fatalf("after a restart from the log: %q", got)
	}
	if err := s.raft.Snapshot().Error(); err != nil {
		t.Fatalf("forced snapshot: %v", err)
	}
	closeStore(t, s)
	s = openStore(t, o)
	defer closeStore(t, s)
	if got := s.Image().TierStore; got != "aa" {
		t.Fatalf("after a restart from a snapshot: %q", got)
	}
}
