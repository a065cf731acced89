package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
	"github.com/strata-broker/strata/internal/testpki"
)

// The SASL replication tests: brokers whose only listener is
// SASL_PLAINTEXT (or SASL_SSL), so that every replica fetch authenticates
// with the broker's own credentials, and a client user that produces.
const (
	saslListener       = config.ProtocolSASLPlaintext
	saslBrokerUser     = "broker"
	saslBrokerPassword = "broker-pw"
	saslClientUser     = "alice"
	saslClientPassword = "alice-pw"
	plainModule        = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule        = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// saslNet is how the test's brokers and clients connect: the listener
// (SASL_PLAINTEXT or SASL_SSL, a name that is also its protocol), and for
// SASL_SSL the CA that issued the brokers' certificate.
type saslNet struct {
	listener string
	pki      *testpki.PKI
}

var saslPlaintext = saslNet{listener: saslListener}

func saslSSL(t *testing.T) saslNet {
	t.Helper()
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	return saslNet{listener: config.ProtocolSASLSSL, pki: pki}
}

func (n saslNet) jaasKey(mechanism string) string {
	return "listener.name." + strings.ToLower(n.listener) + "." + strings.ToLower(mechanism) + ".sasl.jaas.config"
}

// clientOpts are what a client of the listener needs besides SASL.
func (n saslNet) clientOpts() []kgo.Opt {
	if n.pki == nil {
		return nil
	}
	return []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: n.pki.Pool, MinVersion: tls.VersionTLS12})}
}

// saslConfigs are the configs of a broker on sn's listener that
// authenticates to the other broker with mechanism (PLAIN or
// SCRAM-SHA-256) as saslBrokerUser with password, and commits acks=all
// writes with two in-sync replicas only. The PLAIN users are the client
// and, for PLAIN, the broker (always with saslBrokerPassword, so that a
// wrong password is this broker's own, not the other's server's).
func saslConfigs(sn saslNet, mechanism, password string) map[string]string {
	own := `username="` + saslBrokerUser + `" password="` + password + `" `
	plainKey, scramKey := sn.jaasKey(config.MechanismPlain), sn.jaasKey(config.MechanismScramSHA256)
	c := map[string]string{
		"listeners":                                 sn.listener + "://127.0.0.1:0",
		"sasl.enabled.mechanisms":                   "PLAIN,SCRAM-SHA-256",
		"sasl.mechanism.inter.broker.protocol":      mechanism,
		"min.insync.replicas":                       "2",
		"connection.failed.authentication.delay.ms": "10",
	}
	switch mechanism {
	case config.MechanismPlain:
		c[plainKey] = plainModule + " required " + own +
			`user_` + saslBrokerUser + `="` + saslBrokerPassword + `" user_` + saslClientUser + `="` + saslClientPassword + `";`
	case config.MechanismScramSHA256:
		// The broker is no PLAIN user: only SCRAM lets it in.
		c[plainKey] = plainModule + ` required user_` + saslClientUser + `="` + saslClientPassword + `";`
		c[scramKey] = scramModule + " required " + own + ";"
	}
	if sn.pki != nil {
		// The brokers' certificate is for 127.0.0.1, issued by the CA
		// they trust.
		c["ssl.keystore.certificate.chain"] = string(sn.pki.ServerCertPEM)
		c["ssl.keystore.key"] = string(sn.pki.ServerKeyPEM)
		c["ssl.truststore.certificates"] = string(sn.pki.CAPEM)
	}
	return c
}

// registerSASLOnLoopback is registerOnLoopback for the SASL listener.
func registerSASLOnLoopback(t *testing.T, meta *metadata.Store, id int32, listener string) (net.Listener, *metadata.Broker) {
	t.Helper()
	ln := listenLoopback(t)
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	b, err := meta.RegisterBroker(t.Context(), metadata.BrokerRegistration{ID: id, Incarnation: [16]byte{byte(id)},
		Endpoints: []metadata.Endpoint{{Listener: listener, Host: host, Port: int32(p), SecurityProtocol: listener}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := meta.Heartbeat(t.Context(), metadata.Heartbeat{BrokerID: id, BrokerEpoch: b.Epoch, AppliedVersion: meta.Image().Version}); err != nil {
		t.Fatal(err)
	}
	return ln, b
}

// saslReplicas is twoReplicas on sn's SASL listeners: nodes 1 and 2
// with configs[id], topic "r" of one partition on both, led by 1. Before
// the nodes start, prepare may write to the quorum (SCRAM credentials).
func saslReplicas(t *testing.T, sn saslNet, configs map[int32]map[string]string, prepare func(*metadata.Store)) (*metadata.Store, map[int32]*replicaNode, *metadata.Topic) {
	t.Helper()
	meta := openTestQuorum(t)
	if prepare != nil {
		prepare(meta)
	}
	lns, addrs := map[int32]net.Listener{}, map[int32]string{}
	for _, id := range []int32{1, 2} {
		lns[id], _ = registerSASLOnLoopback(t, meta, id, sn.listener)
		addrs[id] = lns[id].Addr().String()
	}
	nodes := map[int32]*replicaNode{}
	for _, id := range []int32{1, 2} {
		nodes[id] = startReplicaNode(t, replicaSpec{meta: meta, id: id, ln: lns[id], addrs: addrs, configs: configs[id]})
		nodes[id].reg = meta.Image().Brokers[id]
	}
	topic, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: "r", Assignments: [][]int32{{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	return meta, nodes, topic
}

// saslClient is a client of sn's listener at addr as the client user.
func saslClient(t *testing.T, sn saslNet, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DisableClientMetrics(),
		kgo.SASL(plain.Auth{User: saslClientUser, Pass: saslClientPassword}.AsMechanism()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(30 * time.Second)}, sn.clientOpts()...), opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// metadataISR is the ISR of r-0 as the Metadata API answers it to cl.
func metadataISR(t *testing.T, cl *kgo.Client) []int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("r")
	req.Topics = append(req.Topics, rt)
	md, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 1 {
		t.Fatalf("Metadata of r: %+v", md.Topics)
	}
	isr := slices.Clone(md.Topics[0].Partitions[0].ISR)
	slices.Sort(isr)
	return isr
}

func imageISR(meta *metadata.Store, topic *metadata.Topic) []int32 {
	isr := slices.Clone(meta.Image().TopicsByID[topic.ID].Partitions[0].ISR)
	slices.Sort(isr)
	return isr
}

// checkReplicatesOverSASL: records produced with acks=all and
// min.insync.replicas=2 are acknowledged, so the follower fetched them
// over the SASL listener; it has every one, and both the quorum and the
// Metadata API show an ISR of both brokers.
func checkReplicatesOverSASL(t *testing.T, sn saslNet, meta *metadata.Store, nodes map[int32]*replicaNode, topic *metadata.Topic) {
	t.Helper()
	p1, p2 := hostedPartition(t, nodes[1]), hostedPartition(t, nodes[2])
	waitUntil(t, "roles from the image", func() bool { return p1.IsLeader() && !p2.IsLeader() })

	// The listener takes nothing but SASL: a fetch that reaches the
	// leader has authenticated.
	bare, err := kgo.NewClient(append(sn.clientOpts(), kgo.SeedBrokers(nodes[1].addr), kgo.DisableClientMetrics(), kgo.RequestRetries(0))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, bare)
	cancel()
	bare.Close()
	if err == nil {
		t.Fatal("a client without SASL was answered on the SASL listener")
	}

	cl := saslClient(t, sn, nodes[1].addr, kgo.RequiredAcks(kgo.AllISRAcks()))
	values := []string{"a", "b", "c", "d", "e"}
	for _, v := range values {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "r", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("producing %q with acks=all: %v", v, err)
		}
	}
	if end := p2.Offsets().LogEnd; end < base.Offset(len(values)) {
		t.Fatalf("acks=all acknowledged with the follower at %d", end)
	}
	waitUntil(t, "the follower's high watermark", func() bool { return p2.Offsets().HighWatermark == base.Offset(len(values)) })
	if string(logBytes(t, p1)) != string(logBytes(t, p2)) {
		t.Fatal("the follower's log differs from the leader's")
	}
	if isr := imageISR(meta, topic); !slices.Equal(isr, []int32{1, 2}) {
		t.Errorf("the quorum's ISR is %v, want [1 2]", isr)
	}
	for _, id := range []int32{1, 2} {
		if isr := metadataISR(t, saslClient(t, sn, nodes[id].addr)); !slices.Equal(isr, []int32{1, 2}) {
			t.Errorf("Metadata at broker %d gives the ISR %v, want [1 2]", id, isr)
		}
	}
}

// TestReplicationOverSASLPlain: the follower fetches from the leader's
// SASL_PLAINTEXT listener as a PLAIN user (sasl.mechanism.inter.broker.protocol
// PLAIN, its credentials from the listener's JAAS config).
func TestReplicationOverSASLPlain(t *testing.T) {
	configs := map[int32]map[string]string{
		1: saslConfigs(saslPlaintext, config.MechanismPlain, saslBrokerPassword),
		2: saslConfigs(saslPlaintext, config.MechanismPlain, saslBrokerPassword),
	}
	meta, nodes, topic := saslReplicas(t, saslPlaintext, configs, nil)
	checkReplicatesOverSASL(t, saslPlaintext, meta, nodes, topic)
}

// TestReplicationOverSASLSSL: as TestReplicationOverSASLPlain on SASL_SSL
// listeners: the follower's client verifies the leader's certificate
// against ssl.truststore and then authenticates with PLAIN.
func TestReplicationOverSASLSSL(t *testing.T) {
	sn := saslSSL(t)
	configs := map[int32]map[string]string{
		1: saslConfigs(sn, config.MechanismPlain, saslBrokerPassword),
		2: saslConfigs(sn, config.MechanismPlain, saslBrokerPassword),
	}
	meta, nodes, topic := saslReplicas(t, sn, configs, nil)
	checkReplicatesOverSASL(t, sn, meta, nodes, topic)
}

// TestReplicationOverSASLScram: as TestReplicationOverSASLPlain with
// SCRAM-SHA-256, the broker's user holding a SCRAM credential in the
// quorum and no PLAIN password.
func TestReplicationOverSASLScram(t *testing.T) {
	const mech = config.MechanismScramSHA256
	configs := map[int32]map[string]string{
		1: saslConfigs(saslPlaintext, mech, saslBrokerPassword),
		2: saslConfigs(saslPlaintext, mech, saslBrokerPassword),
	}
	meta, nodes, topic := saslReplicas(t, saslPlaintext, configs, func(meta *metadata.Store) {
		salt := []byte("strata-test-salt")
		salted, err := sasl.SaltPassword(mech, saslBrokerPassword, salt, metadata.MinScramIterations)
		if err != nil {
			t.Fatal(err)
		}
		c, err := sasl.NewScramCredential(mech, salt, salted, metadata.MinScramIterations)
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.AlterScramCredentials(t.Context(), saslBrokerUser, map[string]metadata.ScramCredential{
			mech: {Salt: c.Salt, StoredKey: c.StoredKey, ServerKey: c.ServerKey, Iterations: c.Iterations},
		}, nil); err != nil {
			t.Fatal(err)
		}
	})
	checkReplicatesOverSASL(t, saslPlaintext, meta, nodes, topic)
}

// TestReplicationOverSASLWrongPasswordKeepsFollowerOut: a follower whose
// inter-broker password is wrong is refused by the leader's listener, so
// it never copies a record and never joins the ISR; the leader's ISR
// shrinks to itself and stays so, and acks=all writes with
// min.insync.replicas=2 fail with NOT_ENOUGH_REPLICAS.
func TestReplicationOverSASLWrongPasswordKeepsFollowerOut(t *testing.T) {
	configs := map[int32]map[string]string{
		1: saslConfigs(saslPlaintext, config.MechanismPlain, saslBrokerPassword),
		2: saslConfigs(saslPlaintext, config.MechanismPlain, "wrong-pw"),
	}
	meta, nodes, topic := saslReplicas(t, saslPlaintext, configs, nil)
	p1, p2 := hostedPartition(t, nodes[1]), hostedPartition(t, nodes[2])
	waitUntil(t, "roles from the image", func() bool { return p1.IsLeader() && !p2.IsLeader() })

	// acks=1 does not need the follower: the leader has a record the
	// follower would copy if it could fetch.
	if err := saslClient(t, saslPlaintext, nodes[1].addr, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()).
		ProduceSync(t.Context(), &kgo.Record{Topic: "r", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("producing with acks=1: %v", err)
	}
	waitUntil(t, "the ISR to shrink to the leader", func() bool { return slices.Equal(imageISR(meta, topic), []int32{1}) })
	// Longer than replica.lag.time.max.ms (2s in the harness) and a shrink
	// check: a follower that fetched would be caught up and back by then.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if isr := imageISR(meta, topic); !slices.Equal(isr, []int32{1}) {
			t.Fatalf("the ISR became %v with a follower that cannot authenticate", isr)
		}
		if end := p2.Offsets().LogEnd; end != 0 {
			t.Fatalf("the follower copied up to %d without authenticating", end)
		}
	}
	if isr := metadataISR(t, saslClient(t, saslPlaintext, nodes[1].addr)); !slices.Equal(isr, []int32{1}) {
		t.Errorf("Metadata at the leader gives the ISR %v, want [1]", isr)
	}

	cl := saslClient(t, saslPlaintext, nodes[1].addr, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(1), kgo.MetadataMinAge(50*time.Millisecond))
	err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "r", Value: []byte("y")}).FirstErr()
	if !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all with an ISR of one and min.insync.replicas=2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
}

// TestReplicaClientsNeedSASLCredentials: a config whose SASL inter-broker
// listener has no broker credentials (accepted on a single node) builds no
// replica clients, with one line that says what to set.
func TestReplicaClientsNeedSASLCredentials(t *testing.T) {
	cfg, err := config.LoadBroker("", nil, map[string]string{"listeners": saslListener + "://127.0.0.1:0", "log.dirs": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = newReplicaClients(cfg, nil, nil)
	if err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "inter.broker.listener.name SASL_PLAINTEXT uses SASL_PLAINTEXT") ||
		!strings.Contains(err.Error(), "sasl.mechanism.inter.broker.protocol") {
		t.Fatalf("newReplicaClients = %v, want one line naming sasl.mechanism.inter.broker.protocol", err)
	}
}
