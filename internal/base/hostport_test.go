package base

import "testing"

func TestCanonicalAddr(t *testing.T) {
	for in, want := range map[string]string{
		"Broker-1.Example:0009093": "broker-1.example:9093",
		"127.0.0.1:9093":           "127.0.0.1:9093",
		"[::1]:09093":              "[::1]:9093",
		"no-port":                  "no-port",
	} {
		if got := CanonicalAddr(in); got != want {
			t.Errorf("CanonicalAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
