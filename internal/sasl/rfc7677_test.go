package sasl

import (
	"bytes"
	"strings"
	"testing"
)

// RFC 7677 §3: the SCRAM-SHA-256 exchange of user "user" with password
// "pencil", replayed against a Session byte for byte.
const (
	rfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfcServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	rfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
)

// rfcNonceSource yields the RFC's server nonce through the real encoding:
// serverNonce reads one byte per character and maps byte b to nonceChar(b)
// for b below nonceAlphabetSize, so the source is each character's index
// in the alphabet.
func rfcNonceSource(t *testing.T) *bytes.Reader {
	t.Helper()
	var src []byte
	for _, c := range []byte(rfcServerNonce) {
		i := byte(0)
		for i < nonceAlphabetSize && nonceChar(i) != c {
			i++
		}
		if i == nonceAlphabetSize {
			t.Fatalf("RFC nonce character %q is not in the nonce alphabet", c)
		}
		src = append(src, i)
	}
	return bytes.NewReader(src)
}

func TestRFC7677Vector(t *testing.T) {
	if len(rfcServerNonce) != nonceSuffixChars {
		t.Fatalf("the RFC's server nonce has %d characters, the encoding makes %d", len(rfcServerNonce), nonceSuffixChars)
	}
	salted, err := SaltPassword(ScramSHA256, "pencil", rfcSalt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := NewScramCredential(ScramSHA256, rfcSalt, salted, 4096)
	if err != nil {
		t.Fatal(err)
	}
	creds := &memCredentials{scram: map[[2]string]ScramCredential{{ScramSHA256, "user"}: cred}}
	rand := rfcNonceSource(t)
	s := NewSession(&Config{Mechanisms: []string{ScramSHA256}, Credentials: creds, Rand: rand})
	if err := s.Handshake(ScramSHA256); err != nil {
		t.Fatal(err)
	}
	serverFirst, err := s.Authenticate([]byte(rfcClientFirst))
	if err != nil {
		t.Fatal(err)
	}
	if string(serverFirst) != rfcServerFirst {
		t.Fatalf("server-first-message\n got %s\nwant %s", serverFirst, rfcServerFirst)
	}
	if rand.Len() != 0 {
		t.Errorf("%d nonce bytes left unread", rand.Len())
	}
	serverFinal, err := s.Authenticate([]byte(rfcClientFinal))
	if err != nil {
		t.Fatal(err)
	}
	if string(serverFinal) != rfcServerFinal {
		t.Fatalf("server-final-message\n got %s\nwant %s", serverFinal, rfcServerFinal)
	}
	if !s.Authenticated() || s.Principal() != "User:user" {
		t.Errorf("Authenticated %v, Principal %q", s.Authenticated(), s.Principal())
	}
}

// TestRFC7677WrongPassword: the RFC's client-final-message does not
// authenticate a user whose password is not "pencil".
func TestRFC7677WrongPassword(t *testing.T) {
	cred := mustCredential(ScramSHA256, "pencil ", rfcSalt, 4096)
	creds := &memCredentials{scram: map[[2]string]ScramCredential{{ScramSHA256, "user"}: cred}}
	s := NewSession(&Config{Mechanisms: []string{ScramSHA256}, Credentials: creds, Rand: rfcNonceSource(t)})
	s.Handshake(ScramSHA256)
	if _, err := s.Authenticate([]byte(rfcClientFirst)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Authenticate([]byte(rfcClientFinal))
	if code(t, err) != CodeAuthenticationFailed || !strings.Contains(message(err), "invalid credentials with SASL mechanism SCRAM-SHA-256") {
		t.Fatalf("Authenticate = %v, want invalid credentials", err)
	}
}
