package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	kafkasasl "github.com/segmentio/kafka-go/sasl"
	kafkaplain "github.com/segmentio/kafka-go/sasl/plain"
	kafkascram "github.com/segmentio/kafka-go/sasl/scram"
	"github.com/xdg-go/scram"
)

// TestSecuritySarama: sarama over TLS with SCRAM (through xdg-go/scram, as
// sarama's users plug it in) and over SASL_PLAINTEXT with PLAIN.
func TestSecuritySarama(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir())
	upsertScramUser(t, newAdmin(t, b.Addr), scramUser, scramPassword)

	cases := []struct {
		name, listener string
		edit           func(*sarama.Config)
	}{
		{"sasl-ssl-scram-sha-256", "SASL_SSL", func(c *sarama.Config) {
			c.Net.TLS.Enable, c.Net.TLS.Config = true, pki.clientTLS(false)
			saramaSASL(c, sarama.SASLTypeSCRAMSHA256, scramUser, scramPassword, scram.SHA256)
		}},
		{"sasl-plaintext-scram-sha-512", "SASL_PLAINTEXT", func(c *sarama.Config) {
			saramaSASL(c, sarama.SASLTypeSCRAMSHA512, scramUser, scramPassword, scram.SHA512)
		}},
		{"sasl-plaintext-plain", "SASL_PLAINTEXT", func(c *sarama.Config) {
			saramaSASL(c, sarama.SASLTypePlaintext, plainUser, plainPassword, nil)
		}},
		{"ssl-client-cert", "SSL", func(c *sarama.Config) {
			c.Net.TLS.Enable, c.Net.TLS.Config = true, pki.clientTLS(true)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := saramaConfig()
			c.edit(cfg)
			saramaRoundTrip(t, b.Listeners[c.listener], "sarama-"+c.name, cfg)
		})
	}

	t.Run("wrong-password", func(t *testing.T) {
		cfg := saramaConfig()
		saramaSASL(cfg, sarama.SASLTypeSCRAMSHA256, scramUser, "nope", scram.SHA256)
		cfg.Metadata.Retry.Max = 0
		client, err := sarama.NewClient([]string{b.Listeners["SASL_PLAINTEXT"]}, cfg)
		if err == nil {
			client.Close()
			t.Fatal("sarama authenticated with a wrong password")
		}
	})
}

func saramaSASL(c *sarama.Config, mechanism sarama.SASLMechanism, user, password string, hash scram.HashGeneratorFcn) {
	c.Net.SASL.Enable = true
	c.Net.SASL.Handshake = true
	c.Net.SASL.Mechanism = mechanism
	c.Net.SASL.User, c.Net.SASL.Password = user, password
	if hash != nil {
		c.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAMClient{hash: hash} }
	}
}

// xdgSCRAMClient adapts xdg-go/scram to sarama's SCRAMClient.
type xdgSCRAMClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (x *xdgSCRAMClient) Begin(user, password, authzID string) error {
	c, err := x.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	x.conv = c.NewConversation()
	return nil
}

func (x *xdgSCRAMClient) Step(challenge string) (string, error) { return x.conv.Step(challenge) }
func (x *xdgSCRAMClient) Done() bool                            { return x.conv.Done() }

// TestSecurityKafkaGo: segmentio/kafka-go with SCRAM over TLS and PLAIN.
func TestSecurityKafkaGo(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	upsertScramUser(t, adm, scramUser, scramPassword)

	sha512, err := kafkascram.Mechanism(kafkascram.SHA512, scramUser, scramPassword)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, listener string
		mechanism      kafkasasl.Mechanism
		tls            bool
	}{
		{"sasl-ssl-scram-sha-512", "SASL_SSL", sha512, true},
		{"sasl-plaintext-plain", "SASL_PLAINTEXT", kafkaplain.Mechanism{Username: plainUser, Password: plainPassword}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := "kafkago-" + c.name
			createTopic(t, adm, topic, 1, nil)
			transport := &kafka.Transport{DialTimeout: clientDialTimeout, IdleTimeout: 5 * time.Second, ClientID: "strata-e2e-kafkago", SASL: c.mechanism}
			dialer := &kafka.Dialer{Timeout: clientDialTimeout, ClientID: "strata-e2e-kafkago", SASLMechanism: c.mechanism}
			if c.tls {
				transport.TLS, dialer.TLS = pki.clientTLS(false), pki.clientTLS(false)
			}
			defer transport.CloseIdleConnections()
			addr := b.Listeners[c.listener]
			w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: 10 * time.Millisecond,
				ReadTimeout: 15 * time.Second, WriteTimeout: 15 * time.Second, MaxAttempts: 5, Transport: transport}
			ctx := testContext(t, 45*time.Second)
			const n = 30
			msgs := make([]kafka.Message, n)
			for i := range msgs {
				msgs[i] = kafka.Message{Value: []byte(value(topic, i))}
			}
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				t.Fatalf("kafka-go WriteMessages: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r := newKafkaGoReader(addr, topic, func(rc *kafka.ReaderConfig) { rc.Dialer = dialer })
			defer r.Close()
			for i := range n {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("kafka-go ReadMessage after %d: %v", i, err)
				}
				if string(m.Value) != value(topic, i) || m.Offset != int64(i) {
					t.Fatalf("message %d is %q at %d", i, m.Value, m.Offset)
				}
			}
		})
	}
}

// TestSecurityKcat: kcat (librdkafka) produces, consumes and lists over
// SASL_SSL with SCRAM-SHA-256 and over SSL, configured with the properties
// a librdkafka user writes.
func TestSecurityKcat(t *testing.T) {
	t.Parallel()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not on PATH (CI installs it: apt-get install kcat)")
	}
	b, pki := startSecureBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	upsertScramUser(t, adm, scramUser, scramPassword)

	cases := []struct {
		name, listener string
		props          []string
	}{
		{"sasl-ssl-scram", "SASL_SSL", []string{"security.protocol=SASL_SSL", "sasl.mechanisms=SCRAM-SHA-256",
			"sasl.username=" + scramUser, "sasl.password=" + scramPassword, "ssl.ca.location=" + pki.CAFile}},
		{"sasl-plaintext-plain", "SASL_PLAINTEXT", []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=PLAIN",
			"sasl.username=" + plainUser, "sasl.password=" + plainPassword}},
		{"ssl", "SSL", []string{"security.protocol=SSL", "ssl.ca.location=" + pki.CAFile}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := "kcat-" + c.name
			createTopic(t, adm, topic, 1, nil)
			runKcatScript(t, kcat, b.Listeners[c.listener], topic, c.props)
		})
	}

	t.Run("wrong-password", func(t *testing.T) {
		props := filepath.Join(t.TempDir(), "kcat.properties")
		conf := fmt.Sprintf("security.protocol=SASL_PLAINTEXT\nsasl.mechanisms=PLAIN\nsasl.username=%s\nsasl.password=nope\n", plainUser)
		if err := os.WriteFile(props, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, kcat, "-L", "-b", b.Listeners["SASL_PLAINTEXT"], "-F", props, "-m", "5").CombinedOutput()
		if err == nil {
			t.Fatalf("kcat listed metadata with a wrong password:\n%s", out)
		}
		if !strings.Contains(string(out), "Authentication failed") {
			t.Fatalf("kcat's error does not say the authentication failed:\n%s", out)
		}
	})
}

// TestSecurityBench: `strata bench` measures a cluster that requires TLS
// and SCRAM.
func TestSecurityBench(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir())
	upsertScramUser(t, newAdmin(t, b.Addr), scramUser, scramPassword)
	for _, mode := range []string{"produce", "consume"} {
		out, code := runCLI(t, "bench", "--bootstrap", b.Listeners["SASL_SSL"], "--tls-ca", pki.CAFile,
			"--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", scramUser, "--sasl-password", scramPassword,
			"--mode", mode, "--records", "2000", "--topic", "bench-secure", "--partitions", "2", "--json")
		if code != 0 || !strings.Contains(out, `"records":2000`) {
			t.Fatalf("strata bench --mode %s over SASL_SSL: exit %d\n%s", mode, code, out)
		}
	}
}
