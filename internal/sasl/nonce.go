package sasl

import (
	"errors"
	"fmt"
	"io"
)

// A server nonce is nonceSuffixChars characters drawn uniformly from the 93
// printable ASCII characters other than ',' (RFC 5802 "printable":
// %x21-2B / %x2D-7E): log2(93) * 30 ≈ 196 bits, more than the 24 random
// bytes (192 bits) RFC 5802 examples and Kafka's 130-bit nonce carry. The
// length is the one RFC 7677's example uses, so that its exchange can be
// replayed byte for byte.
const (
	nonceAlphabetSize = 93
	nonceSuffixChars  = 30
	// nonceAcceptBelow is the largest multiple of nonceAlphabetSize that
	// fits a byte: bytes at or above it are rejected so that b %
	// nonceAlphabetSize is uniform.
	nonceAcceptBelow = 2 * nonceAlphabetSize
	// nonceMaxReads bounds the rejection loop: with a uniform source a read
	// rejects each byte with probability 70/256, so needing more than this
	// many reads means the source is broken, not unlucky (p < 1e-34).
	nonceMaxReads = 64
)

var errNonceSource = errors.New("sasl: nonce source rejected too many bytes")

// nonceChar is the i-th character of the nonce alphabet, in ASCII order:
// '!' is 0, ',' is skipped, '~' is 92.
func nonceChar(i byte) byte {
	c := '!' + i
	if c >= ',' {
		c++
	}
	return c
}

// serverNonce draws a nonce suffix from r. It reads exactly as many bytes
// as characters it still needs, so a source that yields only bytes below
// nonceAcceptBelow is consumed one byte per character, in order: byte b
// becomes nonceChar(b % nonceAlphabetSize).
func serverNonce(r io.Reader) (string, error) {
	out := make([]byte, 0, nonceSuffixChars)
	var buf [nonceSuffixChars]byte
	for range nonceMaxReads {
		need := buf[:nonceSuffixChars-len(out)]
		if _, err := io.ReadFull(r, need); err != nil {
			return "", fmt.Errorf("sasl: reading a SCRAM server nonce: %w", err)
		}
		for _, b := range need {
			if b < nonceAcceptBelow {
				out = append(out, nonceChar(b%nonceAlphabetSize))
			}
		}
		if len(out) == nonceSuffixChars {
			return string(out), nil
		}
	}
	return "", errNonceSource
}
