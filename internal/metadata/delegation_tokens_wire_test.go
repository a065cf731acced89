package metadata

import (
	"bytes"
	"errors"
	"testing"
)

// TestDelegationTokenCommandWireForms pins the log form of each command:
// logs written today must decode, field for field, forever.
func TestDelegationTokenCommandWireForms(t *testing.T) {
	checkPinnedWire(t, createToken(dtoken("t1")),
		"\x01{\"create_delegation_token\":{\"token\":{\"id\":\"t1\",\"owner\":\"User:alice\",\"requester\":\"User:carol\","+
			"\"renewers\":[\"User:bob\"],\"issue_ms\":1000,\"max_ms\":5000,\"expiry_ms\":2000}}}",
		"\x01{\"create_delegation_token\":{\"token\":{\"id\":\"t1\",\"hmac\":\"AAAA\"}}}",
		"\x01{\"create_delegation_token\":{\"token\":{\"id\":\"t1\",\"renewers\":\"User:bob\"}}}",
		"\x01{\"create_delegation_token\":{\"token\":{\"id\":\"t1\"}},\"renew_delegation_token\":{\"id\":\"t1\"}}",
	)
	checkPinnedWire(t, renewToken("t1", pBob, 1500, 1000),
		"\x01{\"renew_delegation_token\":{\"id\":\"t1\",\"principal\":\"User:bob\",\"now_ms\":1500,\"renew_ms\":1000}}",
		"\x01{\"renew_delegation_token\":{\"id\":\"t1\",\"now_ms\":\"1500\"}}",
		"\x01{\"renew_delegation_token\":{\"id\":\"t1\",\"period_ms\":1}}",
		"\x01{\"renew_delegation_token\":{\"id\":\"t1\"},\"expire_delegation_token\":{\"id\":\"t1\"}}",
	)
	checkPinnedWire(t, expireToken("t1", pAlice, 1500, -1),
		"\x01{\"expire_delegation_token\":{\"id\":\"t1\",\"principal\":\"User:alice\",\"now_ms\":1500,\"period_ms\":-1}}",
		"\x01{\"expire_delegation_token\":{\"id\":\"t1\",\"renew_ms\":1}}",
		"\x01{\"expire_delegation_token\":{\"id\":\"t1\"},\"remove_expired_delegation_tokens\":{\"now_ms\":1}}",
	)
	checkPinnedWire(t, removeExpiredAt(3000),
		"\x01{\"remove_expired_delegation_tokens\":{\"now_ms\":3000}}",
		"\x01{\"remove_expired_delegation_tokens\":{\"now_ms\":1.5}}",
		"\x01{\"remove_expired_delegation_tokens\":{\"now_ms\":1},\"create_delegation_token\":{\"token\":{}}}",
		"\x01{\"remove_expired_delegation_tokens\":{\"now_ms\":1},\"delete_topic\":{\"name\":\"a\"}}",
	)
}

// TestSnapshotCarriesDelegationTokens: tokens survive a snapshot, written
// in the v11 layout, ascending by id, next to the state of older layouts.
func TestSnapshotCarriesDelegationTokens(t *testing.T) {
	b := dtokenWith("b", func(d *DelegationToken) { d.Renewers = nil })
	img := build(t, createCmd("foo", 1, 1), alterScram("alice", upsert(ScramSHA256, 1)),
		alterQuotas(qAlt(qUserAlice, rates(1024, 0))),
		createToken(b), createToken(dtoken("a")), renewToken("a", pBob, 1500, 1000))
	data := encodeNewest(t, img)
	want := `"delegation_tokens":[` +
		`{"id":"a","owner":"User:alice","requester":"User:carol","renewers":["User:bob"],"issue_ms":1000,"max_ms":5000,"expiry_ms":2500},` +
		`{"id":"b","owner":"User:alice","requester":"User:carol","renewers":null,"issue_ms":1000,"max_ms":5000,"expiry_ms":2000}]`
	if !bytes.Contains(data, []byte(want)) {
		t.Errorf("snapshot:\n%s\nwant it to hold\n%s", data, want)
	}
	roundTrip(t, img)
	restored, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	a := dtoken("a")
	a.ExpiryMs = 2500
	wantTokens(a, b)(t, restored)
	wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: scramCred(ScramSHA256, 1)}})(t, restored)
	checkImageInvariants(t, restored)

	// Older layouts cannot hold tokens: the same bytes under v10 are corrupt.
	if _, err := decodeSnapshot(append([]byte{snapshotFormatV10}, data[1:]...)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("the same as v10: %v, want ErrInvalidCommand", err)
	}
}

// TestSnapshotWithoutDelegationTokensIsV10Compatible: an image without
// tokens writes no delegation_tokens field, so the body reads as v10 too.
func TestSnapshotWithoutDelegationTokensIsV10Compatible(t *testing.T) {
	img := build(t, createCmd("foo", 1, 1), createToken(dtoken("a")), expireToken("a", pAlice, 1500, -1))
	data, err := encodeSnapshot(img)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("delegation_tokens")) {
		t.Errorf("snapshot without tokens names them: %s", data)
	}
	if _, err := decodeSnapshot(append([]byte{snapshotFormatV10}, data[1:]...)); err != nil {
		t.Errorf("the same as v10: %v", err)
	}
}

// TestFSMRestoresV10SnapshotThenWritesNewest: a node whose newest
// snapshot is v10 restores it, takes a token, and snapshots it in the
// newest layout.
func TestFSMRestoresV10SnapshotThenWritesNewest(t *testing.T) {
	v10 := "\x0a" + snapshotV8[1:] // what v8 wrote is a valid v10 layout (no quota, no token)
	got := restoreApplyResnapshot(t, v10, createToken(dtoken("t1")), 4)
	if len(got.Topics) != 1 || len(got.ScramUsers()) != 1 || len(got.NodeConfigs) != 1 {
		t.Errorf("v10 state lost: %+v", got)
	}
	wantTokens(dtoken("t1"))(t, got)
}

func TestDecodeSnapshotRejectsBadDelegationTokens(t *testing.T) {
	good := toWireDelegationToken(dtoken("a"))
	edit := func(f func(*wireDelegationToken)) wireDelegationToken {
		w := toWireDelegationToken(dtoken("b"))
		f(&w)
		return w
	}
	for name, tc := range map[string]struct {
		tokens []wireDelegationToken
		want   error
	}{
		"id twice":            {[]wireDelegationToken{good, good}, ErrInvalidCommand},
		"empty id":            {[]wireDelegationToken{good, edit(func(w *wireDelegationToken) { w.ID = "" })}, ErrInvalidDelegationToken},
		"bad owner":           {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.Owner = "alice" })}, ErrInvalidDelegationToken},
		"bad requester":       {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.Requester = "" })}, ErrInvalidDelegationToken},
		"renewer not a user":  {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.Renewers = []string{pOps} })}, ErrInvalidPrincipalType},
		"renewers unsorted":   {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.Renewers = []string{pCarol, pBob} })}, ErrInvalidDelegationToken},
		"renewer twice":       {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.Renewers = []string{pBob, pBob} })}, ErrInvalidDelegationToken},
		"expiry past max":     {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.ExpiryMs = w.MaxMs + 1 })}, ErrInvalidDelegationToken},
		"expiry before issue": {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.ExpiryMs = w.IssueMs - 1 })}, ErrInvalidDelegationToken},
		"negative issue":      {[]wireDelegationToken{edit(func(w *wireDelegationToken) { w.IssueMs = -1 })}, ErrInvalidDelegationToken},
	} {
		s := imageSnapshotV11{DelegationTokens: tc.tokens}
		if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV11, s)); !errors.Is(err, tc.want) {
			t.Errorf("%s: decodeSnapshot: %v, want %v", name, err, tc.want)
		}
	}
	// The same snapshot with valid tokens is accepted: the cases above are
	// refused for what they break, not for their shape. Empty renewers are
	// restored as nil, the image's one spelling of none.
	ok := imageSnapshotV11{DelegationTokens: []wireDelegationToken{good, edit(func(w *wireDelegationToken) { w.Renewers = []string{} })}}
	img, err := decodeSnapshot(mustJSON(t, snapshotFormatV11, ok))
	if err != nil {
		t.Fatalf("valid tokens: %v", err)
	}
	wantTokens(dtoken("a"), dtokenWith("b", func(d *DelegationToken) { d.Renewers = nil }))(t, img)
	checkImageInvariants(t, img)
}
