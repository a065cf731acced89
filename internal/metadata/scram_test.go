package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/raft"
	"pgregory.net/rapid"
)

func readCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

func logEntry(index uint64, data []byte) *raft.Log {
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: data}
}

// scramCred is a valid credential for mechanism whose bytes are drawn from
// seed, so that two seeds make two different credentials.
func scramCred(mechanism string, seed byte) ScramCredential {
	n, ok := scramKeyBytes(mechanism)
	if !ok {
		n = 32 // for tests of unsupported mechanisms: only the name is wrong
	}
	return ScramCredential{
		Salt:       bytes.Repeat([]byte{seed}, 16),
		StoredKey:  bytes.Repeat([]byte{seed + 1}, n),
		ServerKey:  bytes.Repeat([]byte{seed + 2}, n),
		Iterations: MinScramIterations + int32(seed),
	}
}

// alterScram is the command of AlterScramCredentials(user, upserts, deletions).
func alterScram(user string, upserts map[string]ScramCredential, deletions ...string) *alterScramCredentialsCmd {
	return newAlterScramCmd(user, upserts, deletions)
}

func upsert(mechanism string, seed byte) map[string]ScramCredential {
	return map[string]ScramCredential{mechanism: scramCred(mechanism, seed)}
}

// scramWith is scramCred(mechanism, 0) changed by edit, as one upsert.
func scramWith(mechanism string, edit func(*ScramCredential)) map[string]ScramCredential {
	c := scramCred(mechanism, 0)
	edit(&c)
	return map[string]ScramCredential{mechanism: c}
}

// scramInvariantErr checks the SCRAM invariants of Image.
func scramInvariantErr(img *Image) error {
	if img.scram == nil {
		return errors.New("nil SCRAM map")
	}
	for user, creds := range img.scram {
		if err := validateScramUser(user); err != nil {
			return err
		}
		if len(creds) == 0 {
			return fmt.Errorf("SCRAM user %q kept without credentials", user)
		}
		for m, c := range creds {
			if _, ok := scramKeyBytes(m); !ok {
				return fmt.Errorf("user %q: unsupported mechanism %q", user, m)
			}
			if err := validateScramCredential(user, m, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// wantScram checks that img holds exactly want: user → mechanism → credential.
func wantScram(want map[string]map[string]ScramCredential) func(*testing.T, *Image) {
	return func(t *testing.T, img *Image) {
		t.Helper()
		if err := sameScramAs(img, want); err != nil {
			t.Error(err)
		}
	}
}

// sameScramAs compares img's credentials with a plain map, through the
// exported accessors only.
func sameScramAs(img *Image, want map[string]map[string]ScramCredential) error {
	if got, w := img.ScramUsers(), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
		return fmt.Errorf("ScramUsers() = %q, want %q", got, w)
	}
	for _, user := range append(slices.Collect(maps.Keys(want)), "nobody") {
		var iterations map[string]int32
		for m, c := range want[user] {
			if iterations == nil {
				iterations = map[string]int32{}
			}
			iterations[m] = c.Iterations
		}
		if got := img.ScramMechanisms(user); !maps.Equal(got, iterations) || (got == nil) != (iterations == nil) {
			return fmt.Errorf("ScramMechanisms(%q) = %v, want %v", user, got, iterations)
		}
		for _, m := range []string{ScramSHA256, ScramSHA512, "SCRAM-SHA-1"} {
			got, ok := img.ScramCredential(m, user)
			w, wok := want[user][m]
			if ok != wok || !reflect.DeepEqual(got, w) {
				return fmt.Errorf("ScramCredential(%s, %q) = %+v %v, want %+v %v", m, user, got, ok, w, wok)
			}
		}
	}
	return nil
}

func TestApplyScramCredentials(t *testing.T) {
	a256, a512 := scramCred(ScramSHA256, 1), scramCred(ScramSHA512, 2)
	b256 := scramCred(ScramSHA256, 3)
	alice256 := func(t *testing.T) *Image { return build(t, alterScram("alice", upsert(ScramSHA256, 1))) }
	aliceBoth := func(t *testing.T) *Image {
		return build(t, alterScram("alice", map[string]ScramCredential{ScramSHA256: a256, ScramSHA512: a512}),
			alterScram("bob", upsert(ScramSHA256, 3)))
	}
	long := strings.Repeat("u", maxScramUserBytes+1)
	tests := []applyCase{
		{name: "new user", cmd: alterScram("alice", upsert(ScramSHA256, 1)),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256}})},
		{name: "both mechanisms at once", cmd: alterScram("alice", map[string]ScramCredential{ScramSHA256: a256, ScramSHA512: a512}),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256, ScramSHA512: a512}})},
		{name: "second mechanism keeps the first", setup: alice256, cmd: alterScram("alice", upsert(ScramSHA512, 2)),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256, ScramSHA512: a512}})},
		{name: "upsert replaces", setup: alice256, cmd: alterScram("alice", upsert(ScramSHA256, 3)),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: b256}})},
		{name: "other user", setup: alice256, cmd: alterScram("bob", upsert(ScramSHA256, 3)),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256}, "bob": {ScramSHA256: b256}})},
		{name: "user names are not folded", setup: alice256, cmd: alterScram("Alice", upsert(ScramSHA256, 3)),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256}, "Alice": {ScramSHA256: b256}})},
		{name: "upsert and delete at once", setup: alice256,
			cmd:   alterScram("alice", upsert(ScramSHA512, 2), ScramSHA256),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA512: a512}})},
		{name: "delete one of two", setup: aliceBoth, cmd: alterScram("alice", nil, ScramSHA512),
			check: wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256}, "bob": {ScramSHA256: b256}})},
		{name: "delete the last credential forgets the user", setup: alice256, cmd: alterScram("alice", nil, ScramSHA256),
			check: func(t *testing.T, img *Image) {
				wantScram(nil)(t, img)
				if len(img.scram) != 0 {
					t.Errorf("scram = %v, want empty", img.scram)
				}
			}},
		{name: "delete both", setup: aliceBoth, cmd: alterScram("alice", nil, ScramSHA256, ScramSHA512),
			check: wantScram(map[string]map[string]ScramCredential{"bob": {ScramSHA256: b256}})},
		{name: "fewest iterations", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Iterations = 4096 }))},
		{name: "most iterations", cmd: alterScram("alice", scramWith(ScramSHA512, func(c *ScramCredential) { c.Iterations = 16384 }))},
		{name: "one-byte salt", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Salt = []byte{0} }))},
		{name: "non-ASCII user", cmd: alterScram("ünïcode", upsert(ScramSHA256, 1))},
		{name: "longest user", cmd: alterScram(long[1:], upsert(ScramSHA256, 1))},

		{name: "empty user", cmd: alterScram("", upsert(ScramSHA256, 1)), wantErr: ErrInvalidScramCredential},
		{name: "empty user deleting", cmd: alterScram("", nil, ScramSHA256), wantErr: ErrInvalidScramCredential},
		{name: "user too long", cmd: alterScram(long, upsert(ScramSHA256, 1)), wantErr: ErrInvalidScramCredential},
		{name: "user not UTF-8", cmd: alterScram("a\xffb", upsert(ScramSHA256, 1)), wantErr: ErrInvalidScramCredential},
		{name: "nothing to do", setup: alice256, cmd: alterScram("alice", nil), wantErr: ErrInvalidScramCredential},
		{name: "nothing to do, empty lists", setup: alice256,
			cmd: &alterScramCredentialsCmd{User: "alice", Upserts: []wireScramCredential{}, Deletions: []string{}}, wantErr: ErrInvalidScramCredential},
		{name: "unknown mechanism upserted", cmd: alterScram("alice", upsert("SCRAM-SHA-1", 1)), wantErr: ErrUnsupportedScramMechanism},
		{name: "mechanism in lower case", cmd: alterScram("alice", upsert("scram-sha-256", 1)), wantErr: ErrUnsupportedScramMechanism},
		{name: "empty mechanism", cmd: alterScram("alice", upsert("", 1)), wantErr: ErrUnsupportedScramMechanism},
		{name: "unknown mechanism deleted", setup: alice256, cmd: alterScram("alice", nil, "PLAIN"), wantErr: ErrUnsupportedScramMechanism},
		{name: "upserted and deleted", setup: alice256, cmd: alterScram("alice", upsert(ScramSHA256, 3), ScramSHA256),
			wantErr: ErrDuplicateScramMechanism},
		{name: "deleted twice", setup: aliceBoth, cmd: alterScram("alice", nil, ScramSHA512, ScramSHA512),
			wantErr: ErrDuplicateScramMechanism},
		{name: "upserted twice", cmd: &alterScramCredentialsCmd{User: "alice", Upserts: []wireScramCredential{
			toWireScram(ScramSHA256, a256), toWireScram(ScramSHA256, b256)}}, wantErr: ErrDuplicateScramMechanism},
		{name: "too few iterations", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Iterations = 4095 })),
			wantErr: ErrInvalidScramCredential},
		{name: "too many iterations", cmd: alterScram("alice", scramWith(ScramSHA512, func(c *ScramCredential) { c.Iterations = 16385 })),
			wantErr: ErrInvalidScramCredential},
		{name: "negative iterations", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Iterations = -4096 })),
			wantErr: ErrInvalidScramCredential},
		{name: "empty salt", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Salt = []byte{} })),
			wantErr: ErrInvalidScramCredential},
		{name: "no salt", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Salt = nil })),
			wantErr: ErrInvalidScramCredential},
		{name: "salt too long", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.Salt = make([]byte, maxScramSaltBytes+1) })),
			wantErr: ErrInvalidScramCredential},
		{name: "SHA-256 stored key short", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.StoredKey = c.StoredKey[:31] })),
			wantErr: ErrInvalidScramCredential},
		{name: "SHA-256 server key of SHA-512 size", cmd: alterScram("alice", scramWith(ScramSHA256, func(c *ScramCredential) { c.ServerKey = make([]byte, 64) })),
			wantErr: ErrInvalidScramCredential},
		{name: "SHA-512 keys of SHA-256 size", cmd: alterScram("alice", map[string]ScramCredential{ScramSHA512: a256}),
			wantErr: ErrInvalidScramCredential},
		{name: "SHA-512 no server key", cmd: alterScram("alice", scramWith(ScramSHA512, func(c *ScramCredential) { c.ServerKey = nil })),
			wantErr: ErrInvalidScramCredential},
		{name: "delete for an unknown user", setup: alice256, cmd: alterScram("bob", nil, ScramSHA256), wantErr: ErrScramCredentialNotFound},
		{name: "delete a mechanism the user lacks", setup: alice256, cmd: alterScram("alice", nil, ScramSHA512),
			wantErr: ErrScramCredentialNotFound},
		// All or nothing: the valid upsert is not applied either (applyChecked
		// checks that the image is unchanged).
		{name: "valid upsert with a missing deletion", setup: alice256,
			cmd: alterScram("alice", upsert(ScramSHA256, 3), ScramSHA512), wantErr: ErrScramCredentialNotFound},
		{name: "valid upsert with an invalid one", cmd: alterScram("alice", map[string]ScramCredential{
			ScramSHA256: a256, ScramSHA512: scramCred(ScramSHA256, 2)}), wantErr: ErrInvalidScramCredential},
	}
	runApplyCases(t, tests)
}

// TestScramImagesAreCopyOnWrite: an image holds the credentials it was
// built with, whatever is applied to it later or to a sibling.
func TestScramImagesAreCopyOnWrite(t *testing.T) {
	a256, a512, b256 := scramCred(ScramSHA256, 1), scramCred(ScramSHA512, 2), scramCred(ScramSHA256, 3)
	v1 := build(t, alterScram("alice", upsert(ScramSHA256, 1)))
	v2 := then(t, v1, alterScram("alice", upsert(ScramSHA512, 2)))
	v3 := then(t, v2, alterScram("alice", upsert(ScramSHA256, 3), ScramSHA512))
	v4 := then(t, v3, alterScram("alice", nil, ScramSHA256))
	sibling := then(t, v1, alterScram("bob", upsert(ScramSHA256, 3)))
	for name, tc := range map[string]struct {
		img  *Image
		want map[string]map[string]ScramCredential
	}{
		"v1":      {v1, map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256}}},
		"v2":      {v2, map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256, ScramSHA512: a512}}},
		"v3":      {v3, map[string]map[string]ScramCredential{"alice": {ScramSHA256: b256}}},
		"v4":      {v4, nil},
		"sibling": {sibling, map[string]map[string]ScramCredential{"alice": {ScramSHA256: a256}, "bob": {ScramSHA256: b256}}},
	} {
		if err := sameScramAs(tc.img, tc.want); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestScramCredentialBytesAreCopied: the image shares no byte with the
// command it was built from nor with what its accessor returns.
func TestScramCredentialBytesAreCopied(t *testing.T) {
	c := scramCred(ScramSHA256, 1)
	want := c.clone()
	cmd := alterScram("alice", map[string]ScramCredential{ScramSHA256: c})
	img := build(t, cmd)
	scribble := func(c ScramCredential) {
		for _, b := range [][]byte{c.Salt, c.StoredKey, c.ServerKey} {
			for i := range b {
				b[i] ^= 0xFF
			}
		}
	}
	scribble(c) // the caller's slices, which the command shares
	if bytes.Equal(cmd.Upserts[0].Salt, want.Salt) {
		t.Fatal("the command does not share the caller's slices: this test tests nothing")
	}
	got, ok := img.ScramCredential(ScramSHA256, "alice")
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("after the caller's writes: %+v, want %+v", got, want)
	}
	scribble(got) // the accessor's copy
	if again, _ := img.ScramCredential(ScramSHA256, "alice"); !reflect.DeepEqual(again, want) {
		t.Fatalf("after writing to the accessor's result: %+v, want %+v", again, want)
	}
}

// TestScramCommandWireForm pins the log form of the command: logs written
// today must decode, field for field, forever.
func TestScramCommandWireForm(t *testing.T) {
	const wire = "\x01{\"alter_scram_credentials\":{\"user\":\"alice\",\"upserts\":[{\"mechanism\":\"SCRAM-SHA-256\"," +
		"\"salt\":\"c2FsdA==\",\"stored_key\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"," +
		"\"server_key\":\"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\",\"iterations\":4096}],\"deletions\":[\"SCRAM-SHA-512\"]}}"
	cmd := &alterScramCredentialsCmd{User: "alice", Upserts: []wireScramCredential{{
		Mechanism: ScramSHA256, Salt: []byte("salt"), StoredKey: make([]byte, 32),
		ServerKey: bytes.Repeat([]byte{1}, 32), Iterations: 4096,
	}}, Deletions: []string{ScramSHA512}}
	checkPinnedWire(t, cmd, wire,
		"\x01{\"alter_scram_credentials\":{\"user\":\"a\",\"password\":\"x\"}}",
		"\x01{\"alter_scram_credentials\":{\"user\":\"a\",\"upserts\":[{\"mechanism\":\"SCRAM-SHA-256\",\"salt\":\"not base64!\"}]}}",
		"\x01{\"alter_scram_credentials\":{\"user\":\"a\"},\"set_broker_configs\":{}}",
	)
}

// scramModel is the naive model of the image's credentials.
type scramModel map[string]map[string]ScramCredential

// broken returns every rule c breaks against m, each as its error; none
// means c must be applied. The order of checks is not specified, so the
// implementation may report any one of them.
func (m scramModel) broken(c *alterScramCredentialsCmd) []error {
	var out []error
	if c.User == "" || len(c.User) > maxScramUserBytes || !utf8.ValidString(c.User) {
		out = append(out, ErrInvalidScramCredential)
	}
	if len(c.Upserts)+len(c.Deletions) == 0 {
		out = append(out, ErrInvalidScramCredential)
	}
	count := map[string]int{}
	for _, u := range c.Upserts {
		count[u.Mechanism]++
		keyBytes := map[string]int{ScramSHA256: 32, ScramSHA512: 64}[u.Mechanism]
		if u.Iterations < 4096 || u.Iterations > 16384 || len(u.Salt) == 0 || len(u.Salt) > maxScramSaltBytes ||
			(keyBytes > 0 && (len(u.StoredKey) != keyBytes || len(u.ServerKey) != keyBytes)) {
			out = append(out, ErrInvalidScramCredential)
		}
	}
	for _, d := range c.Deletions {
		count[d]++
		if _, ok := m[c.User][d]; !ok {
			out = append(out, ErrScramCredentialNotFound)
		}
	}
	for mech, n := range count {
		if mech != ScramSHA256 && mech != ScramSHA512 {
			out = append(out, ErrUnsupportedScramMechanism)
		}
		if n > 1 {
			out = append(out, ErrDuplicateScramMechanism)
		}
	}
	return out
}

func (m scramModel) apply(c *alterScramCredentialsCmd) scramModel {
	next := scramModel{}
	for user, creds := range m {
		next[user] = maps.Clone(creds)
	}
	if next[c.User] == nil {
		next[c.User] = map[string]ScramCredential{}
	}
	for _, d := range c.Deletions {
		delete(next[c.User], d)
	}
	for _, u := range c.Upserts {
		next[c.User][u.Mechanism] = ScramCredential{Salt: u.Salt, StoredKey: u.StoredKey, ServerKey: u.ServerKey, Iterations: u.Iterations}
	}
	if len(next[c.User]) == 0 {
		delete(next, c.User)
	}
	return next
}

var scramMechanismNames = []string{ScramSHA256, ScramSHA512, ScramSHA256, ScramSHA512, "SCRAM-SHA-1", "scram-sha-512"}

// genScramCredential draws a credential for one of scramMechanismNames,
// mostly a valid one.
func genScramCredential() *rapid.Generator[wireScramCredential] {
	return rapid.Custom(func(t *rapid.T) wireScramCredential {
		m := rapid.SampledFrom(scramMechanismNames).Draw(t, "mechanism")
		keyBytes, ok := scramKeyBytes(m)
		if !ok {
			keyBytes = 32
		}
		keys := rapid.SampledFrom([]int{keyBytes, keyBytes, keyBytes, keyBytes, 0, 31, 32, 64})
		return wireScramCredential{
			Mechanism: m,
			// A few byte values, so that replacements are drawn often.
			Salt:       bytes.Repeat([]byte{rapid.ByteRange(0, 2).Draw(t, "salt")}, rapid.SampledFrom([]int{1, 1, 2, 0}).Draw(t, "salt_len")),
			StoredKey:  bytes.Repeat([]byte{rapid.ByteRange(0, 2).Draw(t, "stored")}, keys.Draw(t, "stored_len")),
			ServerKey:  bytes.Repeat([]byte{rapid.ByteRange(0, 2).Draw(t, "server")}, keys.Draw(t, "server_len")),
			Iterations: rapid.SampledFrom([]int32{4096, 4096, 8192, 16384, 4095, 16385, 0}).Draw(t, "iterations"),
		}
	})
}

// genScramCommand draws alter commands over a few users and mechanisms, so
// that replacements, deletions of what exists and every refusal happen.
func genScramCommand() *rapid.Generator[*alterScramCredentialsCmd] {
	users := []string{"alice", "alice", "bob", "bob", "", "a\xff", strings.Repeat("u", maxScramUserBytes+1)}
	return rapid.Custom(func(t *rapid.T) *alterScramCredentialsCmd {
		return &alterScramCredentialsCmd{
			User:      rapid.SampledFrom(users).Draw(t, "user"),
			Upserts:   rapid.SliceOfN(genScramCredential(), 0, 2).Draw(t, "upserts"),
			Deletions: rapid.SliceOfN(rapid.SampledFrom(scramMechanismNames), 0, 2).Draw(t, "deletions"),
		}
	})
}

// TestScramAgainstModel applies random alter sequences to an image and to a
// plain map: an alter is applied iff it breaks no rule, refused with one of
// the rules it breaks otherwise, and the two always hold the same
// credentials, also after a snapshot round trip.
func TestScramAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img, model := emptyImage(), scramModel{}
		outcomes := map[string]int{}
		for i := range rapid.IntRange(1, 40).Draw(t, "n") {
			cmd := genScramCommand().Draw(t, fmt.Sprintf("cmd%d", i))
			broken := model.broken(cmd)
			next, err := applyCommand(img, cmd, uint64(i+1))
			switch {
			case len(broken) == 0 && err != nil:
				t.Fatalf("%#v refused: %v", cmd, err)
			case len(broken) > 0 && err == nil:
				t.Fatalf("%#v applied, but it breaks %v", cmd, broken)
			case err != nil:
				if !slices.ContainsFunc(broken, func(e error) bool { return errors.Is(err, e) }) {
					t.Fatalf("%#v refused with %v, want one of %v", cmd, err, broken)
				}
				if next != nil {
					t.Fatal("a refused command returned an image")
				}
				outcomes[errors.Unwrap(err).Error()]++
				continue
			}
			outcomes["applied"]++
			model = model.apply(cmd)
			img = next
			if err := scramInvariantErr(img); err != nil {
				t.Fatal(err)
			}
			if err := sameScramAs(img, model); err != nil {
				t.Fatal(err)
			}
			restored, err := snapshotRoundTrip(img)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameScramAs(restored, model); err != nil {
				t.Fatalf("after a snapshot round trip: %v", err)
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})
}

func TestSnapshotCarriesScramCredentials(t *testing.T) {
	img := build(t, createCmd("foo", 1, 1),
		alterScram("bob", upsert(ScramSHA512, 1)),
		alterScram("alice", map[string]ScramCredential{ScramSHA512: scramCred(ScramSHA512, 2), ScramSHA256: scramCred(ScramSHA256, 3)}))
	data := encodeNewest(t, img)
	// Users, then mechanisms, ascending: the bytes are a function of the image.
	if !bytes.Contains(data, []byte(`"scram_credentials":[{"user":"alice","credentials":[{"mechanism":"SCRAM-SHA-256"`)) ||
		!bytes.Contains(data, []byte(`"mechanism":"SCRAM-SHA-512"`)) {
		t.Errorf("snapshot without ordered credentials: %s", data)
	}
	roundTrip(t, img)
	restored, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	wantScram(map[string]map[string]ScramCredential{
		"alice": {ScramSHA256: scramCred(ScramSHA256, 3), ScramSHA512: scramCred(ScramSHA512, 2)},
		"bob":   {ScramSHA512: scramCred(ScramSHA512, 1)},
	})(t, restored)
}

// snapshotV2 was written by the v2 encoder (before SCRAM credentials): a
// topic and one of its remote segments.
const snapshotV2 = "\x02{\"cluster_id\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"controller_id\":3,\"version\":9,\"broker_configs\":{\"x\":\"y\"}," +
	"\"topics\":[{\"Name\":\"foo\",\"ID\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],\"Partitions\":[{\"Index\":0,\"Leader\":1,\"LeaderEpoch\":0,\"Replicas\":[1],\"ISR\":[1]}]," +
	"\"Configs\":{\"cleanup.policy\":\"delete\"}}],\"remote_segments\":[{\"id\":[170,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1]," +
	"\"topic_id\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],\"topic\":\"foo\",\"partition\":0,\"start\":0,\"end\":10," +
	"\"leader_epochs\":[{\"epoch\":0,\"start\":0}],\"size_bytes\":10,\"max_timestamp_ms\":10,\"state\":\"COPY_STARTED\"}],\"pending_remote_deletes\":null}"

func TestDecodeSnapshotV2StillDecodes(t *testing.T) {
	img, err := decodeSnapshot([]byte(snapshotV2))
	if err != nil {
		t.Fatal(err)
	}
	if img.Version != 9 || len(img.Topics) != 1 || len(img.RemoteSegments(tid(1), 0)) != 1 || img.BrokerConfigs["x"] != "y" {
		t.Fatalf("decoded %+v", img)
	}
	if img.scram == nil || len(img.ScramUsers()) != 0 {
		t.Fatalf("scram = %v, want empty and not nil", img.scram)
	}
	if err := invariantErr(img); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSnapshot([]byte("\x02{\"scram_credentials\":[]}")); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v2 with v3 fields: %v, want ErrInvalidCommand", err)
	}
}

// TestFSMRestoresV2SnapshotThenWritesNewest: a node whose newest snapshot
// is v2 restores it, takes credentials, and snapshots them in the newest
// layout.
func TestFSMRestoresV2SnapshotThenWritesNewest(t *testing.T) {
	got := restoreApplyResnapshot(t, snapshotV2, alterScram("alice", upsert(ScramSHA256, 1)), 10)
	if len(got.Topics) != 1 || len(got.RemoteSegments(tid(1), 0)) != 1 {
		t.Errorf("v2 state lost: %+v", got)
	}
	wantScram(map[string]map[string]ScramCredential{"alice": {ScramSHA256: scramCred(ScramSHA256, 1)}})(t, got)
}

func TestDecodeSnapshotRejectsBadScramData(t *testing.T) {
	good := toWireScram(ScramSHA256, scramCred(ScramSHA256, 1))
	other := toWireScram(ScramSHA512, scramCred(ScramSHA512, 1))
	shortKey := good
	shortKey.StoredKey = shortKey.StoredKey[:31]
	fewIterations := good
	fewIterations.Iterations = 1
	unknown := good
	unknown.Mechanism = "SCRAM-SHA-1"
	for name, tc := range map[string]struct {
		users []wireScramUser
		want  error
	}{
		"empty user":        {[]wireScramUser{{User: "", Credentials: []wireScramCredential{good}}}, ErrInvalidScramCredential},
		"user twice":        {[]wireScramUser{{User: "a", Credentials: []wireScramCredential{good}}, {User: "a", Credentials: []wireScramCredential{other}}}, ErrInvalidCommand},
		"no credentials":    {[]wireScramUser{{User: "a"}}, ErrInvalidCommand},
		"mechanism twice":   {[]wireScramUser{{User: "a", Credentials: []wireScramCredential{good, good}}}, ErrDuplicateScramMechanism},
		"unknown mechanism": {[]wireScramUser{{User: "a", Credentials: []wireScramCredential{unknown}}}, ErrUnsupportedScramMechanism},
		"short key":         {[]wireScramUser{{User: "a", Credentials: []wireScramCredential{other, shortKey}}}, ErrInvalidScramCredential},
		"few iterations":    {[]wireScramUser{{User: "a", Credentials: []wireScramCredential{fewIterations}}}, ErrInvalidScramCredential},
	} {
		s := imageSnapshotV3{ScramCredentials: tc.users}
		if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV3, s)); !errors.Is(err, tc.want) {
			t.Errorf("%s: decodeSnapshot: %v, want %v", name, err, tc.want)
		}
	}
	// The same snapshot with valid credentials is accepted: the cases above
	// are refused for what they break, not for their shape.
	ok := imageSnapshotV3{ScramCredentials: []wireScramUser{{User: "a", Credentials: []wireScramCredential{good, other}}}}
	if _, err := decodeSnapshot(mustJSON(t, snapshotFormatV3, ok)); err != nil {
		t.Errorf("valid credentials: %v", err)
	}
}

// restoreApplyResnapshot restores an FSM from an old snapshot, applies c at
// index, takes a snapshot (which must be in the newest layout) and returns
// the image a fresh FSM restores from it, checked equal to the first's.
func restoreApplyResnapshot(t *testing.T, old string, c command, index uint64) *Image {
	t.Helper()
	f := newFSM()
	if err := f.Restore(readCloser(old)); err != nil {
		t.Fatal(err)
	}
	data, err := encodeCommand(c)
	if err != nil {
		t.Fatal(err)
	}
	if res := f.Apply(logEntry(index, data)).(applyResult); res.err != nil {
		t.Fatal(res.err)
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	if sink.Bytes()[0] != snapshotFormatNewest {
		t.Fatalf("snapshot format %d, want %d", sink.Bytes()[0], snapshotFormatNewest)
	}
	g := newFSM()
	if err := g.Restore(readCloser(sink.String())); err != nil {
		t.Fatal(err)
	}
	got := g.image.Load()
	if !reflect.DeepEqual(got, f.image.Load()) {
		t.Fatalf("restored %+v\nwant %+v", got, f.image.Load())
	}
	return got
}

// snapshotRoundTrip encodes img as a snapshot and decodes it again.
func snapshotRoundTrip(img *Image) (*Image, error) {
	data, err := encodeSnapshot(img)
	if err != nil {
		return nil, err
	}
	restored, err := decodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return restored, nil
}

// checkPinnedWire checks that cmd encodes to wire and wire decodes to cmd,
// field for field, and that each of bad, a near miss of the form, is
// refused as ErrInvalidCommand: a command's log form is pinned forever.
func checkPinnedWire(t *testing.T, cmd command, wire string, bad ...string) {
	t.Helper()
	data, err := encodeCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != wire {
		t.Errorf("encoded\n%q\nwant\n%q", data, wire)
	}
	got, err := decodeCommand([]byte(wire))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmd) {
		t.Errorf("decoded %#v\nwant %#v", got, cmd)
	}
	for _, b := range bad {
		if _, err := decodeCommand([]byte(b)); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("decodeCommand(%q) = %v, want ErrInvalidCommand", b, err)
		}
	}
}
