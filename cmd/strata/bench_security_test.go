package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/testpki"
)

func TestBenchSecurityFlags(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pki.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		s        benchSecurity
		wantOpts int    // options when valid
		wantErr  string // substring of the error
	}{
		{"nothing", benchSecurity{}, 0, ""},
		{"tls", benchSecurity{tls: true}, 1, ""},
		{"tls by its CA", benchSecurity{ca: ca}, 1, ""},
		{"scram over tls", benchSecurity{ca: ca, mechanism: "SCRAM-SHA-512", user: "bob", password: "pw"}, 2, ""},
		{"plain", benchSecurity{mechanism: "PLAIN", user: "alice", password: "pw"}, 1, ""},
		{"cert without key", benchSecurity{cert: "c.pem"}, 0, "--tls-cert and --tls-key"},
		{"user without mechanism", benchSecurity{user: "bob"}, 0, "--sasl-mechanism"},
		{"mechanism without user", benchSecurity{mechanism: "PLAIN"}, 0, "--sasl-user"},
		{"unknown mechanism", benchSecurity{mechanism: "GSSAPI", user: "bob"}, 0, `--sasl-mechanism "GSSAPI"`},
		{"missing CA file", benchSecurity{ca: filepath.Join(dir, "nope.pem")}, 0, "--tls-ca"},
		{"CA file without a certificate", benchSecurity{ca: filepath.Join(dir, "ca.pem") + ".x"}, 0, "--tls-ca"},
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem.x"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.validate()
			var opts int
			if err == nil {
				o, oerr := tt.s.opts()
				opts, err = len(o), oerr
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
			case tt.wantErr == "" && opts != tt.wantOpts:
				t.Fatalf("%d options, want %d", opts, tt.wantOpts)
			}
		})
	}
}
