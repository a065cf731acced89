package sasl

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestNonceAlphabet(t *testing.T) {
	seen := map[byte]bool{}
	for i := range byte(nonceAlphabetSize) {
		c := nonceChar(i)
		if c < 0x21 || c > 0x7e || c == ',' || seen[c] {
			t.Fatalf("nonceChar(%d) = %q: not printable, a comma or repeated", i, c)
		}
		seen[c] = true
	}
	if nonceChar(0) != '!' || nonceChar(11) != '-' || nonceChar(92) != '~' {
		t.Errorf("alphabet not in ASCII order without ','")
	}
}

func TestServerNonce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		source   []byte
		want     string // "" means an error is wanted
		wantLeft int    // bytes of source left unread
	}{
		{name: "one byte per character", source: append(seq(0, 30), 9, 9), want: "!\"#$%&'()*+-./0123456789:;<=>?", wantLeft: 2},
		{name: "upper half of the accepted range", source: bytes.Repeat([]byte{nonceAlphabetSize + 92}, 30), want: strings.Repeat("~", 30)},
		{name: "rejected bytes are skipped", source: append(append([]byte{186, 255}, seq(0, 29)...), 200, 92),
			want: "!\"#$%&'()*+-./0123456789:;<=>~"},
		{name: "short source", source: seq(0, 29)},
		{name: "source of only rejected bytes", source: bytes.Repeat([]byte{0xff}, 30*nonceMaxReads)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(tc.source)
			got, err := serverNonce(r)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("serverNonce = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want || r.Len() != tc.wantLeft {
				t.Fatalf("serverNonce = %q, %v with %d bytes left; want %q with %d left", got, err, r.Len(), tc.want, tc.wantLeft)
			}
		})
	}
}

func TestServerNonceErrors(t *testing.T) {
	if _, err := serverNonce(bytes.NewReader(seq(0, 10))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short source: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := serverNonce(bytes.NewReader(bytes.Repeat([]byte{0xff}, 30*nonceMaxReads))); !errors.Is(err, errNonceSource) {
		t.Errorf("rejecting source: %v, want errNonceSource", err)
	}
}

func TestServerNonceFromCryptoRand(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		n, err := serverNonce(rand.Reader)
		if err != nil || len(n) != nonceSuffixChars || !printableNonce(n) || seen[n] {
			t.Fatalf("serverNonce = %q, %v: want %d new printable characters", n, err, nonceSuffixChars)
		}
		seen[n] = true
	}
}

// seq is the bytes lo, lo+1, ..., lo+n-1.
func seq(lo, n byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = lo + byte(i)
	}
	return b
}
