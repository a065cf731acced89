package e2e

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Users of the secure broker: PLAIN users come from the listeners' JAAS
// configs, SCRAM users are created through AlterUserScramCredentials.
const (
	plainUser, plainPassword = "alice", "alice-secret"
	scramUser, scramPassword = "bob", "bob-secret"
)

// secureListeners are the four listener kinds, PLAINTEXT first (the
// broker's Addr, for admin work before any SCRAM user exists).
var secureListeners = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// startSecureBroker starts a broker with a listener of each security
// protocol, TLS with a test CA (client certificates requested, verified
// when given), PLAIN and both SCRAM mechanisms.
func startSecureBroker(t *testing.T, dir string, extra ...string) (*Broker, *testPKI) {
	t.Helper()
	pki := newTestPKI(t, t.TempDir())
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s" user_%s="%s";`,
		plainUser, plainPassword, plainUser, plainPassword)
	overrides := append([]string{
		"ssl.keystore.location=" + pki.KeystoreFile,
		"ssl.truststore.location=" + pki.CAFile,
		"ssl.client.auth=requested",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config=" + jaas,
		"listener.name.sasl_ssl.plain.sasl.jaas.config=" + jaas,
	}, extra...)
	return startBrokerListeners(t, dir, secureListeners, overrides...), pki
}

// upsertScramUser gives user a password for both SCRAM mechanisms.
func upsertScramUser(t *testing.T, adm *kadm.Client, user, password string) {
	t.Helper()
	res, err := adm.AlterUserSCRAMs(testContext(t, 15*time.Second), nil, []kadm.UpsertSCRAM{
		{User: user, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: password},
		{User: user, Mechanism: kadm.ScramSha512, Iterations: 8192, Password: password},
	})
	if err != nil {
		t.Fatalf("AlterUserSCRAMs: %v", err)
	}
	if r := res[user]; r.Err != nil {
		t.Fatalf("AlterUserSCRAMs %s: %v (%s)", user, r.Err, r.ErrMessage)
	}
}

// roundTrip produces n records to topic through a client with opts and
// reads them back from the start with another client with the same opts.
func roundTrip(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) {
	t.Helper()
	producer := newClient(t, addr, opts...)
	records := make([]*kgo.Record, n)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Value: []byte(value(topic, i))}
	}
	produceSync(t, producer, records...)
	consumer := newClient(t, addr, append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	ctx := testContext(t, consumeTimeout)
	var got []string
	for len(got) < n {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s: %v after %d of %d records", topic, ctx.Err(), len(got), n)
		}
		fetches.EachError(func(_ string, p int32, err error) { t.Fatalf("consuming %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if v != value(topic, i) {
			t.Fatalf("record %d of %s is %q, want %q", i, topic, v, value(topic, i))
		}
	}
}

func tlsOpt(c *tls.Config) kgo.Opt {
	return kgo.Dialer((&tls.Dialer{Config: c, NetDialer: &net.Dialer{Timeout: clientDialTimeout}}).DialContext)
}

func TestSecurityEveryListenerServesClients(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir())
	upsertScramUser(t, newAdmin(t, b.Addr), scramUser, scramPassword)

	sha256 := scram.Auth{User: scramUser, Pass: scramPassword}.AsSha256Mechanism()
	sha512 := scram.Auth{User: scramUser, Pass: scramPassword}.AsSha512Mechanism()
	alice := plain.Auth{User: plainUser, Pass: plainPassword}.AsMechanism()
	cases := []struct {
		name     string
		listener string
		opts     []kgo.Opt
	}{
		{"ssl", "SSL", []kgo.Opt{tlsOpt(pki.clientTLS(false))}},
		{"ssl-client-cert", "SSL", []kgo.Opt{tlsOpt(pki.clientTLS(true))}},
		{"sasl-plaintext-plain", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(alice)}},
		{"sasl-plaintext-scram-sha-256", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(sha256)}},
		{"sasl-ssl-scram-sha-512", "SASL_SSL", []kgo.Opt{kgo.SASL(sha512), tlsOpt(pki.clientTLS(false))}},
		{"sasl-ssl-plain", "SASL_SSL", []kgo.Opt{kgo.SASL(alice), tlsOpt(pki.clientTLS(false))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topic := "secure-" + c.name
			// Create the topic through the listener itself: Metadata must
			// send the client back to this listener's address.
			adm := kadm.NewClient(newClient(t, b.Listeners[c.listener], c.opts...))
			createTopic(t, adm, topic, 2, nil)
			roundTrip(t, b.Listeners[c.listener], topic, 50, c.opts...)
			brokers, err := adm.ListBrokers(testContext(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := net.JoinHostPort(brokers[0].Host, fmt.Sprint(brokers[0].Port)); got != b.Listeners[c.listener] {
				t.Fatalf("Metadata on listener %s names %s, want that listener's address %s", c.listener, got, b.Listeners[c.listener])
			}
		})
	}
}

func TestSecurityRefusesWrongCredentials(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir(), "strata.metrics.listener=127.0.0.1:0")
	upsertScramUser(t, newAdmin(t, b.Addr), scramUser, scramPassword)

	refused := []struct {
		name     string
		listener string
		opts     []kgo.Opt
	}{
		{"plain-wrong-password", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(plain.Auth{User: plainUser, Pass: "nope"}.AsMechanism())}},
		{"plain-unknown-user", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(plain.Auth{User: "eve", Pass: plainPassword}.AsMechanism())}},
		{"scram-wrong-password", "SASL_SSL", []kgo.Opt{kgo.SASL(scram.Auth{User: scramUser, Pass: "nope"}.AsSha512Mechanism()), tlsOpt(pki.clientTLS(false))}},
		{"scram-unknown-user", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(scram.Auth{User: "eve", Pass: "x"}.AsSha256Mechanism())}},
		// A SCRAM user is not a PLAIN user (PLAIN users come from JAAS).
		{"plain-as-scram-user", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(plain.Auth{User: scramUser, Pass: scramPassword}.AsMechanism())}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			err := pingErr(t, b.Listeners[c.listener], c.opts...)
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("got %v, want SASL_AUTHENTICATION_FAILED", err)
			}
		})
	}
	// Each refusal above is one failed authentication in the metrics, and
	// the answer to it was held back by connection.failed.authentication.delay.ms.
	samples := scrape(t, metricsBase(t, b)+"/metrics")
	failed := samples[`strata_authentications_total{listener="SASL_PLAINTEXT",mechanism="PLAIN",result="failure"}`] +
		samples[`strata_authentications_total{listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-256",result="failure"}`] +
		samples[`strata_authentications_total{listener="SASL_SSL",mechanism="SCRAM-SHA-512",result="failure"}`]
	if failed < float64(len(refused)) {
		t.Fatalf("%v failed authentications counted, want at least %d", failed, len(refused))
	}

	t.Run("stranger-client-cert", func(t *testing.T) {
		c := pki.clientTLS(false)
		stranger := strangerCert(t)
		// Sent even though the broker's request names another CA (Go's
		// client would otherwise send no certificate at all).
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &stranger, nil }
		if err := pingErr(t, b.Listeners["SSL"], tlsOpt(c)); err == nil {
			t.Fatal("a client certificate from another CA was accepted")
		}
	})
	t.Run("plaintext-client-on-tls-listener", func(t *testing.T) {
		if err := pingErr(t, b.Listeners["SSL"]); err == nil {
			t.Fatal("a plaintext client was served on the SSL listener")
		}
	})
	t.Run("no-sasl-on-sasl-listener", func(t *testing.T) {
		if err := pingErr(t, b.Listeners["SASL_PLAINTEXT"]); err == nil {
			t.Fatal("a client that did not authenticate was served on the SASL_PLAINTEXT listener")
		}
	})
}

// pingErr is the error a fresh client with opts gets asking addr for
// metadata (nil if it is served).
func pingErr(t *testing.T, addr string, opts ...kgo.Opt) error {
	t.Helper()
	cl := newClient(t, addr, append(opts, kgo.RetryTimeout(time.Second), kgo.RequestRetries(0))...)
	ctx := testContext(t, 10*time.Second)
	_, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

// TestSecurityUnauthenticatedRequestClosesConnection speaks the protocol
// by hand: before SASL completes, Kafka serves only ApiVersions and
// SaslHandshake and closes the connection on anything else.
func TestSecurityUnauthenticatedRequestClosesConnection(t *testing.T) {
	t.Parallel()
	b, _ := startSecureBroker(t, t.TempDir())
	addr := b.Listeners["SASL_PLAINTEXT"]

	conn := dialRaw(t, addr)
	versions := kmsg.NewPtrApiVersionsRequest()
	versions.SetVersion(3)
	versions.ClientSoftwareName, versions.ClientSoftwareVersion = "e2e", "1"
	if _, err := rawRoundTrip(conn, 1, versions); err != nil {
		t.Fatalf("ApiVersions before authenticating: %v", err)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(9)
	if _, err := rawRoundTrip(conn, 2, md); err == nil {
		t.Fatal("Metadata before authenticating was answered")
	}

	// A handshake naming a mechanism that is not enabled is answered with
	// the enabled list, then the connection is closed.
	conn = dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "GSSAPI"
	raw, err := rawRoundTrip(conn, 3, hs)
	if err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.SetVersion(1)
	if err := resp.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(resp.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" {
		t.Fatalf("handshake for GSSAPI: error %d mechanisms %v", resp.ErrorCode, resp.SupportedMechanisms)
	}
	if _, err := rawRoundTrip(conn, 4, versions); err == nil {
		t.Fatal("the connection stayed open after an unsupported mechanism")
	}
}

// rawRoundTrip writes req with a v1/v2 header and returns the response
// body after its header (v0; ApiVersions and the non-flexible requests used
// here).
func rawRoundTrip(conn net.Conn, correlation int32, req kmsg.Request) ([]byte, error) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var frame []byte
	frame = binary.BigEndian.AppendUint16(frame, uint16(req.Key()))
	frame = binary.BigEndian.AppendUint16(frame, uint16(req.GetVersion()))
	frame = binary.BigEndian.AppendUint32(frame, uint32(correlation))
	frame = binary.BigEndian.AppendUint16(frame, 3)
	frame = append(frame, "e2e"...)
	if req.IsFlexible() {
		frame = append(frame, 0)
	}
	frame = req.AppendTo(frame)
	if _, err := conn.Write(binary.BigEndian.AppendUint32(nil, uint32(len(frame)))); err != nil {
		return nil, err
	}
	if _, err := conn.Write(frame); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, err
	}
	return body[4:], nil
}

func TestScramCredentialsAdmin(t *testing.T) {
	t.Parallel()
	b, _ := startSecureBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	ctx := testContext(t, 30*time.Second)
	upsertScramUser(t, adm, scramUser, scramPassword)
	upsertScramUser(t, adm, "carol", "carol-secret")

	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(described[scramUser].CredInfos); got != "[SCRAM-SHA-256=iterations=4096 SCRAM-SHA-512=iterations=8192]" || len(described) != 2 {
		t.Fatalf("described %v; bob has %s", described, got)
	}
	missing, err := adm.DescribeUserSCRAMs(ctx, "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(missing["nobody"].Err, kerr.ResourceNotFound) {
		t.Fatalf("describing an unknown user: %v", missing["nobody"].Err)
	}

	// Refusals the client library would catch first go out by hand.
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "nobody", 1
	few := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	few.Name, few.Mechanism, few.Iterations, few.Salt, few.SaltedPassword = "dave", 1, 100, []byte("salt"), make([]byte, 32)
	unknown := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	unknown.Name, unknown.Mechanism, unknown.Iterations, unknown.Salt, unknown.SaltedPassword = "erin", 3, 4096, []byte("salt"), make([]byte, 32)
	twice := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	twice.Name, twice.Mechanism = scramUser, 2
	twiceUp := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	twiceUp.Name, twiceUp.Mechanism, twiceUp.Iterations, twiceUp.Salt, twiceUp.SaltedPassword = scramUser, 2, 4096, []byte("salt"), make([]byte, 64)
	req.Deletions = append(req.Deletions, del, twice)
	req.Upsertions = append(req.Upsertions, few, unknown, twiceUp)
	resp, err := req.RequestWith(ctx, newClient(t, b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{"nobody": kerr.ResourceNotFound.Code, "dave": kerr.UnacceptableCredential.Code,
		"erin": kerr.UnsupportedSaslMechanism.Code, scramUser: kerr.DuplicateResource.Code}
	if len(resp.Results) != len(want) {
		t.Fatalf("%d results, want one per user: %+v", len(resp.Results), resp.Results)
	}
	for _, r := range resp.Results {
		if r.ErrorCode != want[r.User] {
			t.Fatalf("user %s: error %d, want %d (%v)", r.User, r.ErrorCode, want[r.User], r.ErrorMessage)
		}
	}
	// The refused request changed nothing: bob still has both mechanisms.
	if d, err := adm.DescribeUserSCRAMs(ctx, scramUser); err != nil || len(d[scramUser].CredInfos) != 2 {
		t.Fatalf("bob after a refused alteration: %v %v", d, err)
	}

	// Deleting bob's SHA-256 credential: SHA-256 fails from then on, SHA-512 still works.
	res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: scramUser, Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || res[scramUser].Err != nil {
		t.Fatalf("deleting bob's SCRAM-SHA-256: %v / %v", err, res[scramUser].Err)
	}
	addr := b.Listeners["SASL_PLAINTEXT"]
	if err := pingErr(t, addr, kgo.SASL(scram.Auth{User: scramUser, Pass: scramPassword}.AsSha256Mechanism())); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("SCRAM-SHA-256 after its deletion: %v", err)
	}
	if err := pingErr(t, addr, kgo.SASL(scram.Auth{User: scramUser, Pass: scramPassword}.AsSha512Mechanism())); err != nil {
		t.Fatalf("SCRAM-SHA-512 after SHA-256's deletion: %v", err)
	}
}

// TestScramCredentialsSurviveKill: credentials live in the metadata quorum;
// a kill -9 and a restart keep every acknowledged change.
func TestScramCredentialsSurviveKill(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	upsertScramUser(t, adm, scramUser, scramPassword)
	upsertScramUser(t, adm, "carol", "carol-secret")
	res, err := adm.AlterUserSCRAMs(testContext(t, 15*time.Second), []kadm.DeleteSCRAM{
		{User: "carol", Mechanism: kadm.ScramSha256}, {User: "carol", Mechanism: kadm.ScramSha512},
	}, nil)
	if err != nil || res["carol"].Err != nil {
		t.Fatalf("deleting carol: %v / %v", err, res["carol"].Err)
	}
	b.Kill()
	b.Restart()

	createTopic(t, newAdmin(t, b.Addr), "after-restart", 1, nil)
	tlsc := tlsOpt(pki.clientTLS(false))
	bob := func(user, pass string) []kgo.Opt {
		return []kgo.Opt{kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()), tlsc}
	}
	roundTrip(t, b.Listeners["SASL_SSL"], "after-restart", 10, bob(scramUser, scramPassword)...)
	if err := pingErr(t, b.Listeners["SASL_SSL"], bob("carol", "carol-secret")...); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("carol, deleted before the kill, after the restart: %v", err)
	}
}

// TestSecurityOnlyEnabledMechanisms: a mechanism left out of
// sasl.enabled.mechanisms is refused at the handshake.
func TestSecurityOnlyEnabledMechanisms(t *testing.T) {
	t.Parallel()
	b := startBrokerListeners(t, t.TempDir(), []string{"PLAINTEXT", "SASL_PLAINTEXT"}, "sasl.enabled.mechanisms=SCRAM-SHA-512")
	upsertScramUser(t, newAdmin(t, b.Addr), scramUser, scramPassword)
	addr := b.Listeners["SASL_PLAINTEXT"]
	if err := pingErr(t, addr, kgo.SASL(scram.Auth{User: scramUser, Pass: scramPassword}.AsSha256Mechanism())); !errors.Is(err, kerr.UnsupportedSaslMechanism) {
		t.Fatalf("SCRAM-SHA-256 when only SCRAM-SHA-512 is enabled: %v", err)
	}
	if err := pingErr(t, addr, kgo.SASL(scram.Auth{User: scramUser, Pass: scramPassword}.AsSha512Mechanism())); err != nil {
		t.Fatalf("SCRAM-SHA-512: %v", err)
	}
}

// TestSecurityReauthentication: with connections.max.reauth.ms a client
// re-authenticates on its connections as their sessions end (KIP-368), and
// a user whose credential is deleted loses access when the session ends,
// without reconnecting.
func TestSecurityReauthentication(t *testing.T) {
	t.Parallel()
	const lifetime = 1500 * time.Millisecond
	b, _ := startSecureBroker(t, t.TempDir(), fmt.Sprintf("connections.max.reauth.ms=%d", lifetime.Milliseconds()))
	adm := newAdmin(t, b.Addr)
	upsertScramUser(t, adm, scramUser, scramPassword)
	createTopic(t, adm, "reauth", 1, nil)

	cl := newClient(t, b.Listeners["SASL_PLAINTEXT"], kgo.SASL(scram.Auth{User: scramUser, Pass: scramPassword}.AsSha256Mechanism()),
		kgo.RetryTimeout(3*time.Second))
	deadline := time.Now().Add(3 * lifetime)
	for n := 0; time.Now().Before(deadline); n++ {
		if err := produceErr(t, cl, "reauth"); err != nil {
			t.Fatalf("produce %d, across re-authentications: %v", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	res, err := adm.AlterUserSCRAMs(testContext(t, 10*time.Second), []kadm.DeleteSCRAM{
		{User: scramUser, Mechanism: kadm.ScramSha256}, {User: scramUser, Mechanism: kadm.ScramSha512},
	}, nil)
	if err != nil || res[scramUser].Err != nil {
		t.Fatalf("deleting bob: %v / %v", err, res[scramUser].Err)
	}
	time.Sleep(lifetime + 500*time.Millisecond)
	if err := produceErr(t, cl, "reauth"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("bob's produce after his credential was deleted and his session ended: %v", err)
	}
}

// TestSecurityConfigsStaySecret: DescribeConfigs lists the JAAS and
// inline-PEM settings as sensitive, without their values.
func TestSecurityConfigsStaySecret(t *testing.T) {
	t.Parallel()
	b, _ := startSecureBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	rcs, err := adm.DescribeBrokerConfigs(testContext(t, 10*time.Second), brokerNodeID(t, adm))
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("DescribeConfigs of the broker: %v %+v", err, rcs)
	}
	found := map[string]bool{}
	for _, c := range rcs[0].Configs {
		if !strings.Contains(c.Key, "jaas") {
			continue
		}
		found[c.Key] = true
		if !c.Sensitive || c.Value != nil {
			t.Errorf("%s: sensitive %v, value %v", c.Key, c.Sensitive, c.Value)
		}
	}
	for _, key := range []string{"listener.name.sasl_plaintext.plain.sasl.jaas.config", "listener.name.sasl_ssl.plain.sasl.jaas.config"} {
		if !found[key] {
			t.Errorf("%s is not described", key)
		}
	}
}

// TestSecurityListenerSettings: listener.name.<l>.ssl.* applies to one
// listener; ssl.client.auth reaches a SASL_SSL listener only that way
// (KIP-684).
func TestSecurityListenerSettings(t *testing.T) {
	t.Parallel()
	b, pki := startSecureBroker(t, t.TempDir(), "ssl.client.auth=none", "listener.name.sasl_ssl.ssl.client.auth=required")
	upsertScramUser(t, newAdmin(t, b.Addr), scramUser, scramPassword)
	bob := kgo.SASL(scram.Auth{User: scramUser, Pass: scramPassword}.AsSha512Mechanism())
	if err := pingErr(t, b.Listeners["SASL_SSL"], bob, tlsOpt(pki.clientTLS(false))); err == nil {
		t.Fatal("SASL_SSL with listener.name.sasl_ssl.ssl.client.auth=required served a client without a certificate")
	}
	if err := pingErr(t, b.Listeners["SASL_SSL"], bob, tlsOpt(pki.clientTLS(true))); err != nil {
		t.Fatalf("SASL_SSL with a client certificate: %v", err)
	}
	if err := pingErr(t, b.Listeners["SSL"], tlsOpt(pki.clientTLS(false))); err != nil {
		t.Fatalf("SSL without a client certificate (ssl.client.auth=none): %v", err)
	}
}
