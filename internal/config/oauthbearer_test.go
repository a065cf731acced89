package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// oauthListeners is a SASL listener with OAUTHBEARER enabled (and PLAIN,
// with a user, for the inter-broker listener) next to a plaintext one.
var oauthListeners = map[string]string{
	"listeners":               "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093",
	"sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
	"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="pw";`,
}

const securedClass = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"

func TestOAuthValidationUnsecured(t *testing.T) {
	b := mustLoad(t, "", nil, oauthListeners)
	want := OAuthValidation{PrincipalClaim: "sub", ScopeClaim: "scope"}
	if got := b.OAuth["SASL_PLAINTEXT"]; !reflect.DeepEqual(got, want) || len(b.OAuth) != 1 {
		t.Fatalf("OAuth = %+v, want only SASL_PLAINTEXT: %+v", b.OAuth, want)
	}
	b = mustLoad(t, "", nil, withKeys(oauthListeners, "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
		`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin"
		unsecuredValidatorPrincipalClaimName="client_id" unsecuredValidatorRequiredScope="kafka write" unsecuredValidatorAllowableClockSkewMs="1500";`))
	want = OAuthValidation{PrincipalClaim: "client_id", ScopeClaim: "scope", RequiredScopes: []string{"kafka", "write"}, ClockSkew: 1500 * time.Millisecond}
	if got := b.OAuth["SASL_PLAINTEXT"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("with JAAS options: %+v, want %+v", got, want)
	}
}

func TestOAuthValidationSecured(t *testing.T) {
	flags := withKeys(oauthListeners,
		"sasl.oauthbearer.jwks.endpoint.url", "https://idp.example/jwks",
		"sasl.oauthbearer.expected.audience", "kafka,kafka-prod",
		"sasl.oauthbearer.expected.issuer", "https://idp.example",
		"sasl.oauthbearer.clock.skew.seconds", "5")
	env := []string{"STRATA_LISTENER_NAME_SASL_PLAINTEXT_OAUTHBEARER_SASL_SERVER_CALLBACK_HANDLER_CLASS=" + securedClass}
	b := mustLoad(t, "", env, flags)
	want := OAuthValidation{Secured: true, JWKSURL: "https://idp.example/jwks", JWKSRefresh: time.Hour, RetryBackoff: 100 * time.Millisecond,
		RetryBackoffMax: 10 * time.Second, PrincipalClaim: "sub", ScopeClaim: "scope", ExpectedAudience: []string{"kafka", "kafka-prod"},
		ExpectedIssuer: "https://idp.example", ClockSkew: 5 * time.Second, TLS: b.TLSFor("SASL_PLAINTEXT")}
	if got := b.OAuth["SASL_PLAINTEXT"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("OAuth = %+v, want %+v", got, want)
	}
}

func TestOAuthRefusals(t *testing.T) {
	handler := "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"
	jaas := "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config"
	for _, tc := range []struct {
		name  string
		flags map[string]string
		key   string // the key the error names
		want  string
	}{
		{"secured without a key set", withKeys(oauthListeners, handler, securedClass), "sasl.oauthbearer.jwks.endpoint.url", "must give the key set"},
		{"another class", withKeys(oauthListeners, handler, "com.example.MyHandler"), handler, "loads no Java classes"},
		{"handler of a plaintext listener", withKeys(oauthListeners, "listener.name.plaintext.oauthbearer.sasl.server.callback.handler.class", securedClass),
			"listener.name.plaintext.oauthbearer.sasl.server.callback.handler.class", "not SASL_PLAINTEXT or SASL_SSL"},
		{"handler without OAUTHBEARER", withKeys(oauthListeners, "sasl.enabled.mechanisms", "PLAIN", handler, securedClass), handler, "does not enable"},
		{"a key set over FTP", withKeys(oauthListeners, "sasl.oauthbearer.jwks.endpoint.url", "ftp://idp/jwks"), "sasl.oauthbearer.jwks.endpoint.url", "scheme"},
		{"another login module", withKeys(oauthListeners, jaas, `org.apache.kafka.common.security.plain.PlainLoginModule required;`), jaas, "must be " + oauthLoginModule},
		{"an unknown option", withKeys(oauthListeners, jaas, oauthLoginModule+` required unsecuredValidatorRequiredScopes="x";`), jaas, "is not one"},
		{"a bad clock skew", withKeys(oauthListeners, jaas, oauthLoginModule+` required unsecuredValidatorAllowableClockSkewMs="soon";`), jaas, "milliseconds"},
		{"OAUTHBEARER between brokers", withKeys(oauthListeners, "sasl.mechanism.inter.broker.protocol", "OAUTHBEARER"), "sasl.mechanism.inter.broker.protocol", "between Strata brokers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tc.flags)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadBroker: %v; want an error naming %s that says %q", err, tc.key, tc.want)
			}
		})
	}
}

// A listener's own sasl.oauthbearer.* keys (Kafka's
// listener.name.<listener>.oauthbearer. prefix) win over the broker-wide
// ones, from a file key or the environment.
func TestOAuthListenerOverrides(t *testing.T) {
	flags := withKeys(oauthListeners,
		"listeners", "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093,INTERNAL://127.0.0.1:9094",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
		"listener.name.internal.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="pw";`,
		"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", securedClass,
		"listener.name.internal.oauthbearer.sasl.server.callback.handler.class", securedClass,
		"sasl.oauthbearer.jwks.endpoint.url", "https://idp.example/jwks",
		"sasl.oauthbearer.expected.audience", "kafka",
		"listener.name.internal.oauthbearer.sasl.oauthbearer.jwks.endpoint.url", "file:///etc/strata/internal-jwks.json")
	env := []string{"STRATA_LISTENER_NAME_INTERNAL_OAUTHBEARER_SASL_OAUTHBEARER_EXPECTED_AUDIENCE=kafka-internal"}
	b := mustLoad(t, "", env, flags)
	public, internal := b.OAuth["SASL_PLAINTEXT"], b.OAuth["INTERNAL"]
	if public.JWKSURL != "https://idp.example/jwks" || !reflect.DeepEqual(public.ExpectedAudience, []string{"kafka"}) {
		t.Errorf("SASL_PLAINTEXT: %+v, want the broker-wide values", public)
	}
	if internal.JWKSURL != "file:///etc/strata/internal-jwks.json" || !reflect.DeepEqual(internal.ExpectedAudience, []string{"kafka-internal"}) {
		t.Errorf("INTERNAL: %+v, want its own key set and audience", internal)
	}
	bad := withKeys(oauthListeners, "listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.clock.skew.seconds", "-1")
	if _, err := LoadBroker("", nil, bad); err == nil {
		t.Error("a negative listener-level clock skew was accepted")
	}
	if _, err := LoadBroker("", nil, withKeys(oauthListeners, "listener.name.plaintext.oauthbearer.sasl.oauthbearer.expected.issuer", "x")); err == nil {
		t.Error("a listener-level OAUTHBEARER key of a plaintext listener was accepted")
	}
}
