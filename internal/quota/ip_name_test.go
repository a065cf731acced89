package quota

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateIPName(t *testing.T) {
	for name, want := range map[string]bool{
		"127.0.0.1":                      true,
		"::1":                            true,
		"fe80::1%eth0":                   true,
		"::ffff:10.0.0.1":                true,
		"localhost":                      true,
		"broker-1.example.com":           true,
		"broker-1.example.com.":          true,
		"_srv.example.com":               true,
		"Broker-1.Example.COM":           true,
		"broker0.example.com":            true,
		strings.Repeat("a", 63) + ".b":   true,  // the longest label
		strings.Repeat("a.", 126) + "a":  true,  // the longest name: 253 bytes
		strings.Repeat("a.", 126) + "ab": false, // 254 bytes
		"":                               false,
		".":                              false,
		"10.0.0.0/8":                     false,
		"host name":                      false,
		"-host.example.com":              false,
		"host-.example.com":              false,
		"a..b":                           false,
		"127.0.0.1:9092":                 false,
		strings.Repeat("a", 64) + ".b":   false,
		strings.Repeat("a.", 127) + "a":  false,
	} {
		err := ValidateIPName(name)
		if want && err != nil {
			t.Errorf("ValidateIPName(%q) = %v, want nil", name, err)
		}
		if !want && !errors.Is(err, ErrInvalidEntity) {
			t.Errorf("ValidateIPName(%q) = %v, want ErrInvalidEntity", name, err)
		}
	}
	for name, want := range map[string]bool{"10.0.0.1": true, "::1": true, "localhost": false, "": false} {
		if got := IsIPAddress(name); got != want {
			t.Errorf("IsIPAddress(%q) = %v, want %v", name, got, want)
		}
	}
}
