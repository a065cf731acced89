package sasl

import (
	"bytes"
	"strings"
	"testing"
)

func TestIsScram(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		want      bool
	}{
		{ScramSHA256, true},
		{ScramSHA512, true},
		{Plain, false},
		{"scram-sha-256", false},
		{"SCRAM-SHA-1", false},
		{"", false},
	} {
		if got := IsScram(tc.mechanism); got != tc.want {
			t.Errorf("IsScram(%q) = %v, want %v", tc.mechanism, got, tc.want)
		}
	}
}

func TestNewScramCredentialErrors(t *testing.T) {
	salted32, salted64 := make([]byte, 32), make([]byte, 64)
	for _, tc := range []struct {
		name       string
		mechanism  string
		salt       []byte
		salted     []byte
		iterations int32
		want       string // substring of the error; "" is valid
	}{
		{name: "SHA-256", mechanism: ScramSHA256, salt: rfcSalt, salted: salted32, iterations: 4096},
		{name: "SHA-512 at the maximum", mechanism: ScramSHA512, salt: []byte{1}, salted: salted64, iterations: 16384},
		{name: "PLAIN", mechanism: Plain, salt: rfcSalt, salted: salted32, iterations: 4096, want: `"PLAIN" is not a SCRAM mechanism`},
		{name: "unknown mechanism", mechanism: "SCRAM-SHA-1", salt: rfcSalt, salted: make([]byte, 20), iterations: 4096, want: "not a SCRAM mechanism"},
		{name: "empty salt", mechanism: ScramSHA256, salted: salted32, iterations: 4096, want: "salt is empty"},
		{name: "SHA-512 sized for SHA-256 (taken, as Kafka)", mechanism: ScramSHA256, salt: rfcSalt, salted: salted64, iterations: 4096},
		{name: "SHA-256 sized for SHA-512 (taken, as Kafka)", mechanism: ScramSHA512, salt: rfcSalt, salted: salted32, iterations: 4096},
		{name: "18 bytes, as kafka-go's test (taken)", mechanism: ScramSHA512, salt: []byte("my-salt"), salted: []byte("my-salted-password"), iterations: 15000},
		{name: "empty salted password", mechanism: ScramSHA256, salt: rfcSalt, iterations: 4096, want: "salted password is empty"},
		{name: "iterations below minimum", mechanism: ScramSHA256, salt: rfcSalt, salted: salted32, iterations: 4095, want: "iterations 4095 outside [4096, 16384]"},
		{name: "iterations above maximum", mechanism: ScramSHA512, salt: rfcSalt, salted: salted64, iterations: 16385, want: "iterations 16385 outside"},
		{name: "negative iterations", mechanism: ScramSHA256, salt: rfcSalt, salted: salted32, iterations: -1, want: "iterations -1 outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred, err := NewScramCredential(tc.mechanism, tc.salt, tc.salted, tc.iterations)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("NewScramCredential = %v, want an error containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h, _ := scramHashFor(tc.mechanism)
			if !h.validCredential(cred) || cred.Iterations != tc.iterations || !bytes.Equal(cred.Salt, tc.salt) {
				t.Errorf("credential %+v is not valid for its inputs", cred)
			}
		})
	}
}

func TestSaltPasswordErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mechanism  string
		salt       []byte
		iterations int32
		want       string
	}{
		{name: "PLAIN", mechanism: Plain, salt: rfcSalt, iterations: 4096, want: "not a SCRAM mechanism"},
		{name: "empty salt", mechanism: ScramSHA512, iterations: 4096, want: "salt is empty"},
		{name: "iterations below minimum", mechanism: ScramSHA256, salt: rfcSalt, iterations: 1, want: "iterations 1 outside"},
		{name: "iterations above maximum", mechanism: ScramSHA256, salt: rfcSalt, iterations: 1 << 30, want: "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := SaltPassword(tc.mechanism, "pencil", tc.salt, tc.iterations); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SaltPassword = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSaltPasswordSizes(t *testing.T) {
	for mech, size := range map[string]int{ScramSHA256: 32, ScramSHA512: 64} {
		salted, err := SaltPassword(mech, "pencil", rfcSalt, MinIterations)
		if err != nil || len(salted) != size {
			t.Errorf("%s: %d bytes, %v; want %d", mech, len(salted), err, size)
		}
	}
}

func TestNewScramCredentialDoesNotAliasSalt(t *testing.T) {
	salt := []byte("salt")
	cred, err := NewScramCredential(ScramSHA256, salt, make([]byte, 32), MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	salt[0] = 'X'
	if string(cred.Salt) != "salt" {
		t.Errorf("credential salt changed to %q with the caller's slice", cred.Salt)
	}
}

func TestValidCredential(t *testing.T) {
	h, _ := scramHashFor(ScramSHA256)
	good := fixtureCredentials().scram[[2]string{ScramSHA256, "user"}]
	for _, tc := range []struct {
		name   string
		modify func(*ScramCredential)
		want   bool
	}{
		{"as made", func(*ScramCredential) {}, true},
		{"no salt", func(c *ScramCredential) { c.Salt = nil }, false},
		{"short stored key", func(c *ScramCredential) { c.StoredKey = c.StoredKey[:31] }, false},
		{"long server key", func(c *ScramCredential) { c.ServerKey = append(c.ServerKey, 0) }, false},
		{"iterations below minimum", func(c *ScramCredential) { c.Iterations = MinIterations - 1 }, false},
		{"iterations above maximum", func(c *ScramCredential) { c.Iterations = MaxIterations + 1 }, false},
	} {
		c := good
		tc.modify(&c)
		if got := h.validCredential(c); got != tc.want {
			t.Errorf("%s: validCredential = %v, want %v", tc.name, got, tc.want)
		}
	}
}
