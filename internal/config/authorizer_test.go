package config

import (
	"slices"
	"testing"
	"time"
)

func TestAuthorizerConfigs(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	if b.MaxReauth != 0 {
		t.Fatalf("connections.max.reauth.ms default: %v", b.MaxReauth)
	}
	if b = mustLoad(t, "", nil, map[string]string{"connections.max.reauth.ms": "60000"}); b.MaxReauth != time.Minute {
		t.Fatalf("connections.max.reauth.ms=60000: %v", b.MaxReauth)
	}
	b = mustLoad(t, "", nil, nil)
	if b.FailedAuthenticationDelay != 100*time.Millisecond {
		t.Fatalf("connection.failed.authentication.delay.ms default: %v", b.FailedAuthenticationDelay)
	}
	if b.Authorizer || b.SuperUsers != nil || b.AllowEveryoneIfNoACL {
		t.Fatalf("defaults: authorizer %v, super users %v, allow everyone %v", b.Authorizer, b.SuperUsers, b.AllowEveryoneIfNoACL)
	}
	b = mustLoad(t, "", nil, map[string]string{
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                    " User:admin ; User:CN=broker,O=strata;",
		"allow.everyone.if.no.acl.found": "true",
	})
	if !b.Authorizer || !slices.Equal(b.SuperUsers, []string{"User:admin", "User:CN=broker,O=strata"}) || !b.AllowEveryoneIfNoACL {
		t.Fatalf("authorizer %v, super users %q, allow everyone %v", b.Authorizer, b.SuperUsers, b.AllowEveryoneIfNoACL)
	}
	if b = mustLoad(t, "", nil, map[string]string{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}); !b.Authorizer {
		t.Fatal("AclAuthorizer does not turn the authorizer on")
	}
	for _, bad := range []map[string]string{
		{"authorizer.class.name": "com.example.MyAuthorizer"},
		{"super.users": "admin"},
		{"super.users": "User:"},
	} {
		if _, err := LoadBroker("", nil, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
