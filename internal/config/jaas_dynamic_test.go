package config

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// A broker whose brokers authenticate to each other with PLAIN on its SASL
// listener, as user admin.
func plainInterBroker(t *testing.T) *Broker {
	t.Helper()
	return mustLoad(t, "", nil, map[string]string{
		"listeners":                                           "SASL_PLAINTEXT://:9092,PLAINTEXT://:9093,SASL_SSL://:9094",
		"ssl.keystore.location":                               "/ks.pem",
		"inter.broker.listener.name":                          "SASL_PLAINTEXT",
		"sasl.enabled.mechanisms":                             "PLAIN",
		"sasl.mechanism.inter.broker.protocol":                "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS,
		plainKey: plainJAAS,
	})
}

const jaasBob = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_bob="bob-secret";`

func TestPlainUsersOf(t *testing.T) {
	b := plainInterBroker(t)
	static := map[string]string{"admin": "admin-secret", "alice": "alice-secret"}
	if got := b.PlainUsersOf("SASL_PLAINTEXT"); !maps.Equal(got, static) {
		t.Fatalf("static users %v, want %v", got, static)
	}
	dyn := b.WithDynamic(Dynamic{Node: map[string]string{"listener.name.sasl_plaintext.plain.sasl.jaas.config": jaasBob}})
	if got, want := dyn.PlainUsersOf("SASL_PLAINTEXT"), map[string]string{"admin": "admin-secret", "bob": "bob-secret"}; !maps.Equal(got, want) {
		t.Fatalf("dynamic users %v, want %v", got, want)
	}
	if got := dyn.PlainUsersOf("SASL_SSL"); !maps.Equal(got, static) {
		t.Fatalf("another listener's users %v, want its static ones", got)
	}
	// A cluster-wide value is not this broker's (refused when set: CheckClusterWide).
	wide := b.WithDynamic(Dynamic{Default: map[string]string{"listener.name.sasl_plaintext.plain.sasl.jaas.config": jaasBob}})
	if got := wide.PlainUsersOf("SASL_PLAINTEXT"); !maps.Equal(got, static) {
		t.Fatalf("with a cluster-wide value: %v, want the static users", got)
	}
}

func TestPlainUsersAreDynamicPerBroker(t *testing.T) {
	key := "listener.name.sasl_plaintext.plain.sasl.jaas.config"
	if _, err := ValidateDynamic(map[string]string{key: jaasBob}); err != nil {
		t.Fatalf("PLAIN users at run time: %v", err)
	}
	var pb *PerBrokerOnlyError
	if err := CheckClusterWide(map[string]string{key: jaasBob}); !errors.As(err, &pb) {
		t.Fatalf("PLAIN users for the whole cluster: %v, want per broker only", err)
	}
	var ce *Error
	if _, err := ValidateDynamic(map[string]string{key: "PlainLoginModule required user_a="}); !errors.As(err, &ce) {
		t.Fatalf("a JAAS value that does not parse: %v", err)
	}
}

func TestCheckDynamicSASL(t *testing.T) {
	b := plainInterBroker(t)
	for _, tc := range []struct {
		name string
		node map[string]string
		want string // "" for no error
	}{
		{"users changed, the broker's own kept", map[string]string{"listener.name.sasl_plaintext.plain.sasl.jaas.config": jaasBob}, ""},
		{"another listener's users replaced", map[string]string{plainKey: `org.apache.kafka.common.security.plain.PlainLoginModule required user_carol="c";`}, ""},
		{"the broker's own user dropped", map[string]string{"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="b";`},
			"user admin, with which the brokers authenticate to each other on SASL_PLAINTEXT"},
		{"the broker's own password changed", map[string]string{"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="new";`},
			"keep user_admin"},
		{"no user", map[string]string{plainKey: `org.apache.kafka.common.security.plain.PlainLoginModule required username="x" password="y";`}, "defines no PLAIN user"},
		{"unknown listener", map[string]string{"listener.name.other.plain.sasl.jaas.config": jaasBob}, "names listener OTHER"},
		{"not a SASL listener", map[string]string{"listener.name.plaintext.plain.sasl.jaas.config": jaasBob}, "not SASL_PLAINTEXT or SASL_SSL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.WithDynamic(Dynamic{Node: tc.node}).CheckDynamicSASL()
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckDynamicSASL: %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Fatalf("the error quotes a password: %v", err)
			}
		})
	}
}
