package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"io"
	"slices"
)

// Mechanism names, as Kafka spells them (case-sensitive).
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// MinIterations and MaxIterations are Kafka's bounds on a SCRAM credential's
// iteration count (ScramMechanism.minIterations, and the maximum that
// AlterUserScramCredentials accepts).
const MinIterations, MaxIterations = 4096, 16384

// ScramCredential is what a broker stores for one user and mechanism
// (RFC 5802 §3); never the password. A valid credential has a non-empty
// Salt, StoredKey and ServerKey of the mechanism's digest size, and
// Iterations in [MinIterations, MaxIterations]; sessions check this when
// they look one up and treat an invalid one as no credential.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte // H(HMAC(SaltedPassword, "Client Key"))
	ServerKey  []byte // HMAC(SaltedPassword, "Server Key")
	Iterations int32
}

// scramHash is the hash function H of one SCRAM mechanism.
type scramHash struct {
	mechanism string
	newHash   func() hash.Hash
	sizeBytes int
}

func scramHashFor(mechanism string) (scramHash, bool) {
	switch mechanism {
	case ScramSHA256:
		return scramHash{mechanism: ScramSHA256, newHash: sha256.New, sizeBytes: sha256.Size}, true
	case ScramSHA512:
		return scramHash{mechanism: ScramSHA512, newHash: sha512.New, sizeBytes: sha512.Size}, true
	}
	return scramHash{}, false
}

// hmac is HMAC(key, message) of RFC 5802 §2.2.
func (h scramHash) hmac(key []byte, message string) []byte {
	mac := hmac.New(h.newHash, key)
	io.WriteString(mac, message) // a hash.Hash never fails to write
	return mac.Sum(nil)
}

// sum is H(b) of RFC 5802 §2.2.
func (h scramHash) sum(b []byte) []byte {
	d := h.newHash()
	d.Write(b)
	return d.Sum(nil)
}

func (h scramHash) validCredential(c ScramCredential) bool {
	return len(c.Salt) > 0 &&
		len(c.StoredKey) == h.sizeBytes &&
		len(c.ServerKey) == h.sizeBytes &&
		c.Iterations >= MinIterations && c.Iterations <= MaxIterations
}

// IsScram reports whether mechanism is SCRAM-SHA-256 or SCRAM-SHA-512.
func IsScram(mechanism string) bool {
	_, ok := scramHashFor(mechanism)
	return ok
}

// NewScramCredential derives the stored credential from a salted password,
// as Kafka's AlterUserScramCredentials request carries it (the client salts
// and hashes; the password never reaches the broker). It errors on an
// unknown mechanism, an empty salt, an empty salted password and
// iterations outside [MinIterations, MaxIterations]. A salted password of
// another length than the hash's digest (32 or 64 bytes) is taken, as
// Kafka's controller takes it (the keys are HMACs of it, of any length;
// kafka-go's tests store such a one): no client's proof will match it.
// The credential does not alias salt.
func NewScramCredential(mechanism string, salt, saltedPassword []byte, iterations int32) (ScramCredential, error) {
	h, err := checkScramInputs(mechanism, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	if len(saltedPassword) == 0 {
		return ScramCredential{}, fmt.Errorf("sasl: %s salted password is empty", mechanism)
	}
	clientKey := h.hmac(saltedPassword, "Client Key")
	return ScramCredential{
		Salt:       slices.Clone(salt),
		StoredKey:  h.sum(clientKey),
		ServerKey:  h.hmac(saltedPassword, "Server Key"),
		Iterations: iterations,
	}, nil
}

// SaltPassword is Hi(password, salt, iterations) of RFC 5802 §2.2: PBKDF2
// with the HMAC of the mechanism's hash and a key of its digest size. It is
// for tests and tools that start from a password, and checks its inputs as
// NewScramCredential does. As Kafka, it does no SASLprep: the password is
// used as its UTF-8 bytes.
func SaltPassword(mechanism, password string, salt []byte, iterations int32) ([]byte, error) {
	h, err := checkScramInputs(mechanism, salt, iterations)
	if err != nil {
		return nil, err
	}
	salted, err := pbkdf2.Key(h.newHash, password, salt, int(iterations), h.sizeBytes)
	if err != nil {
		return nil, fmt.Errorf("sasl: salting a %s password: %w", mechanism, err)
	}
	return salted, nil
}

func checkScramInputs(mechanism string, salt []byte, iterations int32) (scramHash, error) {
	h, ok := scramHashFor(mechanism)
	if !ok {
		return scramHash{}, fmt.Errorf("sasl: %q is not a SCRAM mechanism", mechanism)
	}
	if len(salt) == 0 {
		return scramHash{}, fmt.Errorf("sasl: %s salt is empty", mechanism)
	}
	if iterations < MinIterations || iterations > MaxIterations {
		return scramHash{}, fmt.Errorf("sasl: %s iterations %d outside [%d, %d]", mechanism, iterations, MinIterations, MaxIterations)
	}
	return h, nil
}
