package config

import (
	"strings"
	"testing"
	"time"
)

func TestDelegationTokenConfigs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags map[string]string
		want  DelegationTokens
	}{
		{"defaults: off", nil, DelegationTokens{MaxLifetime: 7 * 24 * time.Hour, ExpiryTime: 24 * time.Hour, ExpiryCheckInterval: time.Hour}},
		{"secret key", map[string]string{"delegation.token.secret.key": "s3cret"},
			DelegationTokens{SecretKey: "s3cret", MaxLifetime: 7 * 24 * time.Hour, ExpiryTime: 24 * time.Hour, ExpiryCheckInterval: time.Hour}},
		{"the deprecated name", map[string]string{"delegation.token.master.key": "old"},
			DelegationTokens{SecretKey: "old", MaxLifetime: 7 * 24 * time.Hour, ExpiryTime: 24 * time.Hour, ExpiryCheckInterval: time.Hour}},
		{"the new name wins", map[string]string{"delegation.token.master.key": "old", "delegation.token.secret.key": "new"},
			DelegationTokens{SecretKey: "new", MaxLifetime: 7 * 24 * time.Hour, ExpiryTime: 24 * time.Hour, ExpiryCheckInterval: time.Hour}},
		{"lifetimes", map[string]string{"delegation.token.secret.key": "k", "delegation.token.max.lifetime.ms": "60000",
			"delegation.token.expiry.time.ms": "1000", "delegation.token.expiry.check.interval.ms": "500"},
			DelegationTokens{SecretKey: "k", MaxLifetime: time.Minute, ExpiryTime: time.Second, ExpiryCheckInterval: 500 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustLoad(t, "", nil, tc.flags).DelegationTokens
			if got != tc.want {
				t.Fatalf("DelegationTokens = %+v, want %+v", got, tc.want)
			}
			if got.Enabled() != (tc.want.SecretKey != "") {
				t.Fatalf("Enabled() = %v", got.Enabled())
			}
		})
	}
}

func TestDelegationTokenConfigsRefused(t *testing.T) {
	for key, value := range map[string]string{
		"delegation.token.max.lifetime.ms":          "0",
		"delegation.token.expiry.time.ms":           "-1",
		"delegation.token.expiry.check.interval.ms": "soon",
		"delegation.token.secret.key":               "",
	} {
		_, err := LoadBroker("", nil, map[string]string{key: value})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%q: err = %v, want one naming the key", key, value, err)
		}
	}
}

func TestDelegationTokenSecretIsSensitive(t *testing.T) {
	for _, key := range []string{"delegation.token.secret.key", "delegation.token.master.key"} {
		d, ok := LookupBroker(key)
		if !ok || !d.Sensitive {
			t.Errorf("%s: found %v, sensitive %v; want a sensitive key", key, ok, d.Sensitive)
		}
	}
}
