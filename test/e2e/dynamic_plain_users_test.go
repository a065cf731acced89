package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// plainLogin reports whether user gets in on addr with PLAIN and password:
// nil when a request is answered.
func plainLogin(t *testing.T, addr, user, password string) error {
	t.Helper()
	cl := newClient(t, addr, kgo.SASL(plain.Auth{User: user, Pass: password}.AsMechanism()), kgo.RequestRetries(0))
	_, err := kadm.NewClient(cl).ListBrokers(testContext(t, 10*time.Second))
	return err
}

// A listener's PLAIN users change at run time on one broker
// (listener.name.<listener>.plain.sasl.jaas.config, as Kafka's dynamic
// sasl.jaas.config): the new users get in, the dropped ones are refused,
// other listeners keep theirs, a restart keeps the change, and deleting it
// gives back the static users. The whole cluster's default is refused, as
// Kafka refuses it.
func TestDynamicPlainUsers(t *testing.T) {
	t.Parallel()
	b, _ := startSecureBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	sasl := b.Listeners["SASL_PLAINTEXT"]
	if err := plainLogin(t, sasl, plainUser, plainPassword); err != nil {
		t.Fatalf("%s with the static JAAS config: %v", plainUser, err)
	}

	const key = "listener.name.sasl_plaintext.plain.sasl.jaas.config"
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";`
	set := []kadm.AlterConfig{{Name: key, Value: &jaas}}
	if err := alterBrokerConfigs(t, adm, set); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("PLAIN users as the cluster-wide default: %v, want INVALID_REQUEST", err)
	}
	none := `org.apache.kafka.common.security.plain.PlainLoginModule required username="x" password="y";`
	if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{{Name: key, Value: &none}}, 1); !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("a JAAS config without users: %v, want INVALID_CONFIG", err)
	}
	if err := alterBrokerConfigs(t, adm, set, 1); err != nil {
		t.Fatalf("setting the listener's PLAIN users on broker 1: %v", err)
	}
	waitFor(t, 10*time.Second, "bob to get in", func() bool { return plainLogin(t, sasl, "bob", "bob-secret") == nil })
	if err := plainLogin(t, sasl, plainUser, plainPassword); err == nil {
		t.Fatalf("%s, dropped from the listener's users, still gets in", plainUser)
	}

	b.Stop()
	b.Restart()
	if err := plainLogin(t, sasl, "bob", "bob-secret"); err != nil {
		t.Fatalf("bob after a restart: %v", err)
	}
	if err := alterBrokerConfigs(t, newAdmin(t, b.Addr), []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: key}}, 1); err != nil {
		t.Fatalf("deleting the dynamic PLAIN users: %v", err)
	}
	waitFor(t, 10*time.Second, plainUser+" to get in again", func() bool { return plainLogin(t, sasl, plainUser, plainPassword) == nil })
	if err := plainLogin(t, sasl, "bob", "bob-secret"); err == nil {
		t.Fatal("bob still gets in with the static users back")
	}
}
