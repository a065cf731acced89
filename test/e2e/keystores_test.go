package e2e

import (
	"crypto/tls"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaKeystores: a broker configured as Kafka's documentation sets up
// TLS (a JKS keystore and truststore made with keytool, their passwords and
// no store type, client certificates required, all in server.properties)
// serves clients
// that present a certificate of its CA and refuses the others; kcat
// (librdkafka) connects with a PKCS12 client keystore. A wrong keystore
// password is one clear line at start.
func TestKafkaKeystores(t *testing.T) {
	t.Parallel()
	storeDir := t.TempDir()
	pki := newTestPKI(t, storeDir)
	stores, err := pki.WriteStores(storeDir, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	keystore, truststore := stores.ServerJKS, stores.TrustJKS
	if ks, _, ts, _, err := stores.WriteKeytoolStores(storeDir); err == nil {
		keystore, truststore = ks, ts
	} else if !errors.Is(err, exec.ErrNotFound) {
		t.Fatal(err)
	}
	// As Kafka's documentation writes them: no store type (Kafka's default
	// is JKS), the passwords, client certificates required.
	props := strings.Join([]string{
		"ssl.keystore.location=" + keystore,
		"ssl.keystore.password=" + stores.Password,
		"ssl.key.password=" + stores.Password,
		"ssl.truststore.location=" + truststore,
		"ssl.truststore.password=" + stores.Password,
		"ssl.client.auth=required",
		"",
	}, "\n")
	file := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(file, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBrokerListenersConfig(t, t.TempDir(), []string{"SSL"}, func(*Broker) string { return file })
	if strings.Contains(b.output.String(), stores.Password) {
		t.Errorf("the broker's output quotes a store password:\n%s", b.output.String())
	}

	tlsConf := pki.clientTLS(true)
	tlsConf.ServerName = "127.0.0.1"
	roundTrip(t, b.Addr, "jks-listener", 20, tlsOpt(tlsConf), kgo.AllowAutoTopicCreation())

	stranger := &tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{strangerCert(t)}, ServerName: "127.0.0.1"}
	if err := pingErr(t, b.Addr, tlsOpt(stranger)); err == nil {
		t.Error("a client certificate of another CA was accepted")
	}

	t.Run("kcat with a PKCS12 client keystore", func(t *testing.T) {
		kcat, err := exec.LookPath("kcat")
		if err != nil {
			t.Skip("kcat is not on PATH (CI installs it: apt-get install kcat)")
		}
		ctx := testContext(t, 30*time.Second)
		out, err := exec.CommandContext(ctx, kcat, "-b", b.Addr, "-L", "-t", "jks-listener",
			"-X", "security.protocol=SSL", "-X", "ssl.ca.location="+pki.CAFile,
			"-X", "ssl.keystore.location="+stores.ClientP12, "-X", "ssl.keystore.password="+stores.Password).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `topic "jks-listener"`) {
			t.Fatalf("kcat -L over TLS with a PKCS12 keystore: %v\n%s", err, out)
		}
	})

	t.Run("a wrong keystore password is one clear line", func(t *testing.T) {
		wrong := strings.Replace(props, "ssl.keystore.password="+stores.Password, "ssl.keystore.password=wrong-one", 1)
		wrongFile := filepath.Join(t.TempDir(), "server.properties")
		if err := os.WriteFile(wrongFile, []byte(wrong), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, "serve", "--data-dir", filepath.Join(t.TempDir(), "data"), "--config", wrongFile,
			"--override", "listeners=SSL://127.0.0.1:0")
		requireOneClearLine(t, out, code, "ssl.keystore.location", keystore, "password is wrong")
		if strings.Contains(out, "wrong-one") {
			t.Errorf("the error quotes the password: %s", out)
		}
	})
}
