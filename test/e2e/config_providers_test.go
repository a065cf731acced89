package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestConfigProviderKeepsTheJAASSecretOutOfTheConfig: the broker's PLAIN
// users come from a secrets file through Kafka's FileConfigProvider, as a
// Kafka operator keeps them out of server.properties (KIP-297). A client
// with the password from that file produces and consumes; one with
// another password is refused.
func TestConfigProviderKeepsTheJAASSecretOutOfTheConfig(t *testing.T) {
	t.Parallel()
	secrets := filepath.Join(t.TempDir(), "secrets.properties")
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="from-the-secrets-file";`
	if err := os.WriteFile(secrets, []byte("plain.jaas="+jaas+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBrokerListeners(t, t.TempDir(), []string{"SASL_PLAINTEXT"},
		"sasl.enabled.mechanisms=PLAIN",
		"config.providers=secrets",
		"config.providers.secrets.class=org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.secrets.param.allowed.paths="+filepath.Dir(secrets),
		"listener.name.sasl_plaintext.plain.sasl.jaas.config=${secrets:"+secrets+":plain.jaas}",
	)
	if strings.Contains(b.output.String(), "from-the-secrets-file") {
		t.Fatal("the broker logged the secret")
	}
	alice := kgo.SASL(plain.Auth{User: "alice", Pass: "from-the-secrets-file"}.AsMechanism())
	createTopic(t, kadm.NewClient(newClient(t, b.Addr, alice)), "config-providers", 1, nil)
	requireHealthy(t, b.Addr, "config-providers", "a password from the secrets file", alice)

	wrong := newClient(t, b.Addr, kgo.SASL(plain.Auth{User: "alice", Pass: "${secrets:" + secrets + ":plain.jaas}"}.AsMechanism()))
	if err := wrong.Ping(testContext(t, 10*time.Second)); err == nil {
		t.Fatal("a client with another password was let in")
	}
}
