package metadata

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// SCRAM mechanism names, as Kafka (KIP-554) and RFC 7677 spell them; the only
// mechanisms the image stores.
const (
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// Limits on a stored SCRAM credential. The iteration bounds are Kafka's
// (KIP-554): fewer iterations make a leaked StoredKey cheap to brute-force,
// more make every authentication a cost the broker pays on each connection.
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
	// maxScramSaltBytes bounds a salt; Kafka's tools draw about 30 bytes.
	maxScramSaltBytes = 1024
	// maxScramUserBytes bounds a user name.
	maxScramUserBytes = 1024
)

// ScramCredential is one user's stored SCRAM credential for one mechanism
// (RFC 5802): never the password.
//
// Invariants (in an Image): 1 ≤ len(Salt) ≤ maxScramSaltBytes; StoredKey and
// ServerKey are the mechanism's hash size (32 bytes for SHA-256, 64 for
// SHA-512); MinScramIterations ≤ Iterations ≤ MaxScramIterations.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

func (c ScramCredential) clone() ScramCredential {
	return ScramCredential{
		Salt: bytes.Clone(c.Salt), StoredKey: bytes.Clone(c.StoredKey), ServerKey: bytes.Clone(c.ServerKey),
		Iterations: c.Iterations,
	}
}

// scramUser is one user's credentials by mechanism. Immutable once part of a
// published Image; never empty there.
type scramUser map[string]ScramCredential

// ScramCredential returns user's credential for mechanism. The byte slices
// are the caller's: the image keeps its own.
func (img *Image) ScramCredential(mechanism, user string) (ScramCredential, bool) {
	c, ok := img.scram[user][mechanism]
	if !ok {
		return ScramCredential{}, false
	}
	return c.clone(), true
}

// ScramUsers returns the users that have at least one SCRAM credential,
// ascending; nil when there is none.
func (img *Image) ScramUsers() []string {
	return slices.Sorted(maps.Keys(img.scram))
}

// ScramMechanisms returns user's mechanisms and the iterations of each (what
// DescribeUserScramCredentials reports); nil when user has no credential.
// The map is the caller's.
func (img *Image) ScramMechanisms(user string) map[string]int32 {
	creds := img.scram[user]
	if len(creds) == 0 {
		return nil
	}
	out := make(map[string]int32, len(creds))
	for m, c := range creds {
		out[m] = c.Iterations
	}
	return out
}

// scramKeyBytes is the size of mechanism's StoredKey and ServerKey, that of
// its hash; false for a mechanism the image does not store.
func scramKeyBytes(mechanism string) (int, bool) {
	switch mechanism {
	case ScramSHA256:
		return sha256.Size, true
	case ScramSHA512:
		return sha512.Size, true
	}
	return 0, false
}

func validateScramUser(user string) error {
	switch {
	case user == "":
		return fmt.Errorf("%w: empty user name", ErrInvalidScramCredential)
	case len(user) > maxScramUserBytes:
		return fmt.Errorf("%w: user name of %d bytes, at most %d", ErrInvalidScramCredential, len(user), maxScramUserBytes)
	case !utf8.ValidString(user):
		// JSON would replace the bad bytes: the log would name another user.
		return fmt.Errorf("%w: user name %q is not UTF-8", ErrInvalidScramCredential, user)
	}
	return nil
}

// validateScramCredential checks c against the invariants of ScramCredential
// for mechanism, which is supported.
func validateScramCredential(user, mechanism string, c ScramCredential) error {
	keyBytes, _ := scramKeyBytes(mechanism)
	switch {
	case c.Iterations < MinScramIterations || c.Iterations > MaxScramIterations:
		return fmt.Errorf("%w: user %q %s: %d iterations, want %d..%d",
			ErrInvalidScramCredential, user, mechanism, c.Iterations, MinScramIterations, MaxScramIterations)
	case len(c.Salt) == 0 || len(c.Salt) > maxScramSaltBytes:
		return fmt.Errorf("%w: user %q %s: salt of %d bytes, want 1..%d",
			ErrInvalidScramCredential, user, mechanism, len(c.Salt), maxScramSaltBytes)
	case len(c.StoredKey) != keyBytes || len(c.ServerKey) != keyBytes:
		return fmt.Errorf("%w: user %q %s: stored key of %d bytes and server key of %d, want %d",
			ErrInvalidScramCredential, user, mechanism, len(c.StoredKey), len(c.ServerKey), keyBytes)
	}
	return nil
}

// validateScramEntries checks the mechanisms of one user's upserts and
// deletions (each supported, none twice) and then each upserted credential.
func validateScramEntries(user string, upserts []wireScramCredential, deletions []string) error {
	seen := make(map[string]bool, len(upserts)+len(deletions))
	for _, m := range slices.Concat(scramMechanismsOf(upserts), deletions) {
		if _, ok := scramKeyBytes(m); !ok {
			return fmt.Errorf("%w: %q for user %q, want %s or %s", ErrUnsupportedScramMechanism, m, user, ScramSHA256, ScramSHA512)
		}
		if seen[m] {
			return fmt.Errorf("%w: %s twice for user %q", ErrDuplicateScramMechanism, m, user)
		}
		seen[m] = true
	}
	for _, u := range upserts {
		if err := validateScramCredential(user, u.Mechanism, u.credential()); err != nil {
			return err
		}
	}
	return nil
}

func scramMechanismsOf(creds []wireScramCredential) []string {
	out := make([]string, len(creds))
	for i, c := range creds {
		out[i] = c.Mechanism
	}
	return out
}

// validateAlterScram is every check of an alterScramCredentialsCmd that does
// not depend on the image; the Store runs it before proposing too.
func validateAlterScram(c *alterScramCredentialsCmd) error {
	if err := validateScramUser(c.User); err != nil {
		return err
	}
	if len(c.Upserts) == 0 && len(c.Deletions) == 0 {
		return fmt.Errorf("%w: nothing to alter for user %q", ErrInvalidScramCredential, c.User)
	}
	return validateScramEntries(c.User, c.Upserts, c.Deletions)
}

// newAlterScramCmd is the command of one AlterScramCredentials request;
// upserts go in mechanism order, so that the same request makes the same
// log entry.
func newAlterScramCmd(user string, upserts map[string]ScramCredential, deletions []string) *alterScramCredentialsCmd {
	c := &alterScramCredentialsCmd{User: user, Deletions: slices.Clone(deletions)}
	for _, m := range slices.Sorted(maps.Keys(upserts)) {
		c.Upserts = append(c.Upserts, toWireScram(m, upserts[m]))
	}
	return c
}

// applyAlterScramCredentials changes one user's credentials, all or
// nothing. A user left without credentials leaves the image.
func applyAlterScramCredentials(img *Image, c *alterScramCredentialsCmd, index uint64) (*Image, error) {
	if err := validateAlterScram(c); err != nil {
		return nil, err
	}
	old := img.scram[c.User]
	for _, m := range c.Deletions {
		if _, ok := old[m]; !ok {
			return nil, fmt.Errorf("%w: user %q has no %s credential", ErrScramCredentialNotFound, c.User, m)
		}
	}
	creds := copyMap(old, len(c.Upserts))
	for _, m := range c.Deletions {
		delete(creds, m)
	}
	for _, u := range c.Upserts {
		creds[u.Mechanism] = u.credential() // a copy: the command's slices are not the image's
	}
	next := img.with(index)
	next.scram = copyMap(img.scram, 1)
	if len(creds) == 0 {
		delete(next.scram, c.User)
	} else {
		next.scram[c.User] = creds
	}
	return next, nil
}

// wireScramCredential is one mechanism's ScramCredential as commands and
// snapshots store it, with its own tags so that renaming a field of
// ScramCredential never changes what is in a log or a snapshot.
type wireScramCredential struct {
	Mechanism  string `json:"mechanism"`
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
	Iterations int32  `json:"iterations"`
}

// wireScramUser is one user's credentials in a snapshot, by mechanism.
type wireScramUser struct {
	User        string                `json:"user"`
	Credentials []wireScramCredential `json:"credentials"`
}

func toWireScram(mechanism string, c ScramCredential) wireScramCredential {
	return wireScramCredential{
		Mechanism: mechanism, Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations,
	}
}

// credential converts w back, copying its slices.
func (w wireScramCredential) credential() ScramCredential {
	return ScramCredential{Salt: w.Salt, StoredKey: w.StoredKey, ServerKey: w.ServerKey, Iterations: w.Iterations}.clone()
}

// encodeScram returns img's credentials in snapshot order: by user, then
// mechanism.
func encodeScram(img *Image) []wireScramUser {
	var out []wireScramUser
	for _, user := range img.ScramUsers() {
		creds := img.scram[user]
		w := wireScramUser{User: user, Credentials: make([]wireScramCredential, 0, len(creds))}
		for _, m := range slices.Sorted(maps.Keys(creds)) {
			w.Credentials = append(w.Credentials, toWireScram(m, creds[m]))
		}
		out = append(out, w)
	}
	return out
}

// restoreScram adds a snapshot's credentials to img, checking every
// invariant of Image that concerns them: a snapshot is a gateway.
func restoreScram(img *Image, users []wireScramUser) error {
	for _, u := range users {
		if err := validateScramUser(u.User); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, dup := img.scram[u.User]; dup {
			return fmt.Errorf("snapshot: %w: SCRAM user %q twice", ErrInvalidCommand, u.User)
		}
		if len(u.Credentials) == 0 {
			return fmt.Errorf("snapshot: %w: SCRAM user %q has no credential", ErrInvalidCommand, u.User)
		}
		if err := validateScramEntries(u.User, u.Credentials, nil); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		creds := make(scramUser, len(u.Credentials))
		for _, c := range u.Credentials {
			creds[c.Mechanism] = c.credential()
		}
		img.scram[u.User] = creds
	}
	return nil
}
