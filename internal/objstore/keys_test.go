package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
)

func TestValidateKey(t *testing.T) {
	valid := []string{
		"a", "a/b", "topic-Zm9v/0/00000000000000000000-3f2a.log", "é/ü/日本", "..x", "x..", "a.b",
		".hidden", ".strata", "a b", strings.Repeat("k", componentMaxBytes),
		strings.Repeat("k/", keyMaxBytes/2-1) + "kk", // exactly 1024 bytes
	}
	for _, k := range valid {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v", k, err)
		}
	}
	for _, k := range invalidKeys {
		err := ValidateKey(k)
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	if err := ValidateKey(strings.Repeat("x", 2000)); err == nil || len(err.Error()) > 200 {
		t.Errorf("the error of a long key should be short: %v", err)
	}
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "a", "a/", "a/b", "a/b/", "a/.", "a/..", "a/.strata-"} {
		// A partial last component may be anything a key component starts with.
		if err := validatePrefix(p); err != nil {
			t.Errorf("validatePrefix(%q) = %v", p, err)
		}
	}
	for _, p := range []string{
		"/", "/a", "a//", "../", "a/../b", "./a", "a\x00", ".strata-tmp-1/",
		"a/" + strings.Repeat("c", componentMaxBytes+1), // no key starts so
	} {
		if err := validatePrefix(p); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("validatePrefix(%q) = %v, want ErrInvalidKey", p, err)
		}
	}
}

func TestIsTransient(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrNotFound, false},
		{fmt.Errorf("get x: %w", ErrNotFound), false},
		{ErrInvalidKey, false},
		{ErrSizeMismatch, false},
		{fmt.Errorf("slow down: %w", ErrTransient), true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{fmt.Errorf("dial: %w (%w)", refused, context.Canceled), false},
		{refused, true},
		{fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), true},
		{syscall.ECONNRESET, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNABORTED}, true},
		{fmt.Errorf("write: %w", syscall.EPIPE), true},
		{syscall.ETIMEDOUT, true},
		{syscall.EHOSTUNREACH, true},
		{syscall.ENETUNREACH, true},
		// A network error that is not a timeout is not transient for
		// being a net.Error: a host name that does not resolve stays so.
		{&net.DNSError{Err: "no such host", Name: "bucket.invalid", IsNotFound: true}, false},
		{errors.New("disk on fire"), false},
	} {
		if got := IsTransient(c.err); got != c.want {
			t.Errorf("IsTransient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
