package config

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Kafka 4's own server.properties runs unchanged: its standalone quorum is
// the first voter of a quorum others may join, at its advertised controller
// address; the thread pool sizes accepted and listed as changing nothing,
// the socket buffers and the share state topic's settings taken.
func TestKafka4ServerPropertiesLoads(t *testing.T) {
	b := mustLoad(t, filepath.Join("testdata", "kafka4-server.properties"), nil, nil)
	plain := Listener{Name: "PLAINTEXT", Host: "", Port: 9092, Protocol: ProtocolPlaintext}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Clustered", b.Clustered(), true},
		{"StandaloneQuorum", b.StandaloneQuorum, true},
		{"QuorumVoters", b.QuorumVoters, map[int32]string{1: "localhost:9093"}},
		{"QuorumBootstrap", b.QuorumBootstrap, []string(nil)},
		{"ControllerAdvertised", b.ControllerAdvertised, "localhost:9093"},
		{"Listeners", b.Listeners, []Listener{plain}},
		{"AdvertisedListeners", b.AdvertisedListeners, []Listener{{Name: "PLAINTEXT", Host: "localhost", Port: 9092, Protocol: ProtocolPlaintext}}},
		{"ControllerListener", b.ControllerListener, Listener{Name: "CONTROLLER", Host: "", Port: 9093, Protocol: ProtocolPlaintext}},
		{"InterBrokerListener", b.InterBrokerListener, "PLAINTEXT"},
		{"MetadataDir", b.MetadataDir, filepath.Join("/tmp/kraft-combined-logs", "__metadata")},
		{"Connections", b.Connections, Connections{SendBufferBytes: 102400, ReceiveBufferBytes: 102400,
			MaxIdle: 10 * time.Minute, ConnectionLimits: ConnectionLimits{Max: 1<<31 - 1, MaxPerIP: 1<<31 - 1, MaxCreationRate: 1<<31 - 1, PerIPOverrides: []HostLimit{}}}},
		{"NoEffectSettings", b.NoEffectSettings(), []string{"num.io.threads=8", "num.network.threads=3"}},
		{"ShareStateTopicReplicationFactor", b.ShareStateTopicReplicationFactor, int16(1)},
		{"ShareStateTopicMinISR", b.ShareStateTopicMinISR, int32(1)},
		{"RecoveryThreads", b.RecoveryThreads, int32(1)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

// Kafka 3's ZooKeeper-mode file is refused at its first zookeeper key, with
// what to do instead.
func TestZookeeperKeysAreRefusedWithWhy(t *testing.T) {
	file := filepath.Join("testdata", "kafka3-zookeeper.properties")
	_, err := LoadBroker(file, nil, nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "zookeeper.connect" || !strings.Contains(err.Error(), "no ZooKeeper") ||
		!strings.Contains(err.Error(), "controller.quorum.voters") || !strings.Contains(err.Error(), file+":17") {
		t.Fatalf("err = %v", err)
	}
	lines := nonZookeeperLines(t, file)
	b := mustLoad(t, "", nil, lines) // the rest of the file is fine
	if got := b.NoEffectSettings(); len(got) != 2 {
		t.Errorf("NoEffectSettings = %v", got)
	}
}

func nonZookeeperLines(t *testing.T, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	props, err := parseProperties(file, data)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, p := range props {
		if !isZookeeperKey(p.key) {
			m[p.key] = p.value
		}
	}
	return m
}

// controller.quorum.bootstrap.servers naming this node's controller
// listener alone makes it a quorum's first voter; naming any other address
// makes it a member that joins them; what cannot be read either way is
// refused with what to write instead.
func TestBootstrapServers(t *testing.T) {
	standalone := map[string]string{
		"node.id":                             "1",
		"listeners":                           "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
		"controller.quorum.bootstrap.servers": "localhost:9093",
	}
	with := func(extra map[string]string) map[string]string { return withFlags(standalone, extra) }
	for flags, voter := range map[*map[string]string]string{
		&standalone: "localhost:9093",
		ptr(with(map[string]string{"controller.quorum.bootstrap.servers": "127.0.0.1:9093"})):                                                                     "127.0.0.1:9093",
		ptr(with(map[string]string{"listeners": "PLAINTEXT://10.0.0.5:9092,CONTROLLER://10.0.0.5:9093", "controller.quorum.bootstrap.servers": "10.0.0.5:9093"})): "10.0.0.5:9093",
		ptr(with(map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093", "advertised.listeners": "PLAINTEXT://node-1:9092,CONTROLLER://node-1:9093",
			"controller.quorum.bootstrap.servers": "node-1:9093"})): "node-1:9093",
	} {
		b := mustLoad(t, "", nil, *flags)
		if !b.StandaloneQuorum || !reflect.DeepEqual(b.QuorumVoters, map[int32]string{1: voter}) || b.QuorumBootstrap != nil ||
			b.ControllerAdvertised != voter || b.ControllerListener.Name != "CONTROLLER" || len(b.Listeners) != 1 {
			t.Errorf("%v: StandaloneQuorum %v, QuorumVoters %v, QuorumBootstrap %v, ControllerAdvertised %q, ControllerListener %+v",
				*flags, b.StandaloneQuorum, b.QuorumVoters, b.QuorumBootstrap, b.ControllerAdvertised, b.ControllerListener)
		}
	}
	for _, flags := range []map[string]string{
		with(map[string]string{"node.id": "2", "listeners": "PLAINTEXT://127.0.0.1:9192,CONTROLLER://127.0.0.1:9193"}),
		with(map[string]string{"controller.quorum.bootstrap.servers": "localhost:9093,ctrl-2:9093"}),
		// Another host on the same port: without DNS, surely not this node.
		with(map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093", "advertised.listeners": "PLAINTEXT://node-2:9092,CONTROLLER://node-2:9093",
			"controller.quorum.bootstrap.servers": "node-1:9093"}),
		with(map[string]string{"process.roles": "broker", "controller.quorum.bootstrap.servers": "ctrl-1:9093"}),
	} {
		b := mustLoad(t, "", nil, flags)
		if b.StandaloneQuorum || b.QuorumVoters != nil || !reflect.DeepEqual(b.QuorumBootstrap, splitList(flags["controller.quorum.bootstrap.servers"])) || !b.Clustered() {
			t.Errorf("%v: StandaloneQuorum %v, QuorumVoters %v, QuorumBootstrap %v", flags, b.StandaloneQuorum, b.QuorumVoters, b.QuorumBootstrap)
		}
	}
	bad := []struct {
		flags   map[string]string
		key     string
		mention string
	}{
		{with(map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092"}), "listeners", "has no listener CONTROLLER"},
		{with(map[string]string{"controller.quorum.bootstrap.servers": ""}), "listeners", "only a cluster uses"},
		{with(map[string]string{"listeners": "CONTROLLER://127.0.0.1:9093"}), "listeners", "serves no client"},
		{with(map[string]string{"process.roles": "broker"}), "process.roles", "names only this node's own controller listener"},
		{with(map[string]string{"controller.quorum.bootstrap.servers": "localhost"}), "controller.quorum.bootstrap.servers", "host:port"},
		{withFlags(standalone, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092", "controller.quorum.bootstrap.servers": "", "process.roles": "broker"}), "process.roles", "controller.quorum.bootstrap.servers"},
	}
	for _, c := range bad {
		_, err := LoadBroker("", nil, c.flags)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%v: err = %v, want %s mentioning %q", c.flags, err, c.key, c.mention)
		}
	}
	// With voters the bootstrap servers are ignored: the voters find the quorum.
	b := mustLoad(t, "", nil, clusterFlags("1", map[string]string{"controller.quorum.bootstrap.servers": "ctrl-9:9093"}))
	if !b.Clustered() || b.StandaloneQuorum || b.QuorumBootstrap != nil {
		t.Errorf("with voters: Clustered %v, StandaloneQuorum %v, QuorumBootstrap %v", b.Clustered(), b.StandaloneQuorum, b.QuorumBootstrap)
	}
}

func ptr[T any](v T) *T { return &v }

func TestNamesThisNode(t *testing.T) {
	wildcard := Listener{Name: "CONTROLLER", Port: 9093}
	specific := Listener{Name: "CONTROLLER", Host: "10.0.0.5", Port: 9093}
	loopback := Listener{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093}
	adv := Listener{Name: "CONTROLLER", Host: "node-1", Port: 9093}
	local := []net.IP{net.ParseIP("10.0.0.5"), net.ParseIP("127.0.0.1")}
	for _, c := range []struct {
		addr   string
		ctrl   Listener
		hasAdv bool
		want   bool
	}{
		{"node-1:9093", wildcard, true, true},
		{"NODE-1:9093", wildcard, true, true},
		{"node-1:9094", wildcard, true, false},
		{"node-2:9093", wildcard, true, false},
		{"node-1:9093", wildcard, false, false}, // a name, without DNS
		{"localhost:9093", wildcard, false, true},
		{"10.0.0.5:9093", wildcard, false, true},
		{"10.0.0.6:9093", wildcard, false, false},
		{"10.0.0.5:9093", specific, false, true},
		{"localhost:9093", specific, false, false},
		{"localhost:9093", loopback, false, true},
		{"127.0.0.2:9093", loopback, false, true},
		{"10.0.0.5:9093", loopback, false, false},
	} {
		if got := namesThisNode(c.addr, c.ctrl, adv, c.hasAdv, local); got != c.want {
			t.Errorf("namesThisNode(%s, %+v, advertised %v) = %v, want %v", c.addr, c.ctrl, c.hasAdv, got, c.want)
		}
	}
}

func TestMetadataLogDir(t *testing.T) {
	cases := []struct {
		flags map[string]string
		want  string
	}{
		{map[string]string{"log.dirs": "/d1"}, "/d1/__metadata"},
		{map[string]string{"log.dirs": "/d1", "metadata.log.dir": "/meta"}, "/meta/__metadata"},
		{map[string]string{"log.dirs": "/d1", "metadata.log.dir": "/meta", "strata.metadata.dir": "/exact"}, "/exact"},
	}
	for _, c := range cases {
		if got := mustLoad(t, "", nil, c.flags).MetadataDir; got != c.want {
			t.Errorf("%v: MetadataDir = %s, want %s", c.flags, got, c.want)
		}
	}
}

func TestParsePerIPOverrides(t *testing.T) {
	cases := []struct {
		in   string
		want []HostLimit
		err  bool
	}{
		{"", []HostLimit{}, false},
		{"127.0.0.1:200", []HostLimit{{"127.0.0.1", 200}}, false},
		{"hostA:100, 10.0.0.1:0", []HostLimit{{"hostA", 100}, {"10.0.0.1", 0}}, false},
		{"::1:50", []HostLimit{{"::1", 50}}, false},
		{"[::1]:50", []HostLimit{{"::1", 50}}, false},
		{"hostA", nil, true},
		{":5", nil, true},
		{"hostA:-1", nil, true},
		{"hostA:x", nil, true},
		{"hostA:1,HOSTA:2", nil, true},
		{"hostA:99999999999", nil, true},
	}
	for _, c := range cases {
		got, err := parsePerIPOverrides(c.in)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("parsePerIPOverrides(%q) = %v, %v; want %v, err %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestConnectionSettings(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"connections.max.idle.ms": "1500", "max.connections": "7",
		"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:3"})
	want := Connections{SendBufferBytes: -1, ReceiveBufferBytes: -1, MaxIdle: 1500 * time.Millisecond,
		ConnectionLimits: ConnectionLimits{Max: 7, MaxPerIP: 0, MaxCreationRate: 1<<31 - 1, PerIPOverrides: []HostLimit{{"127.0.0.1", 3}}}}
	if !reflect.DeepEqual(b.Connections, want) {
		t.Errorf("Connections = %+v, want %+v", b.Connections, want)
	}
	for _, flags := range []map[string]string{
		{"max.connections.per.ip": "0"},
		{"socket.send.buffer.bytes": "-2"},
		{"connections.max.idle.ms": "0"},
		{"max.connections": "0"},
		{"connections.max.idle.ms": "100"}, // connection.failed.authentication.delay.ms is 100
	} {
		if _, err := LoadBroker("", nil, flags); err == nil {
			t.Errorf("%v: loaded", flags)
		}
	}
}

// TestDynamicConnectionLimits checks that the connection limits are dynamic
// and layered as every dynamic config (this broker's over the cluster-wide
// over the static), and that a set of dynamic values breaking the rule
// between the per-IP keys is an error where each value alone is valid.
func TestDynamicConnectionLimits(t *testing.T) {
	static := mustLoad(t, "", nil, map[string]string{"max.connections": "50", "max.connections.per.ip.overrides": "10.0.0.1:4"})
	for _, k := range []string{"max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate"} {
		if !IsDynamic(k) {
			t.Errorf("%s is not dynamic", k)
		}
	}
	cases := []struct {
		name     string
		dyn      Dynamic
		want     ConnectionLimits
		wantErrs bool
	}{
		{"static", Dynamic{}, ConnectionLimits{Max: 50, MaxPerIP: 1<<31 - 1, MaxCreationRate: 1<<31 - 1, PerIPOverrides: []HostLimit{{"10.0.0.1", 4}}}, false},
		{"cluster-wide", Dynamic{Default: map[string]string{"max.connections": "20", "max.connections.per.ip": "5", "max.connection.creation.rate": "100"}},
			ConnectionLimits{Max: 20, MaxPerIP: 5, MaxCreationRate: 100, PerIPOverrides: []HostLimit{{"10.0.0.1", 4}}}, false},
		{"own over cluster-wide", Dynamic{Default: map[string]string{"max.connections": "20"}, Node: map[string]string{"max.connections": "30", "max.connections.per.ip.overrides": ""}},
			ConnectionLimits{Max: 30, MaxPerIP: 1<<31 - 1, MaxCreationRate: 1<<31 - 1, PerIPOverrides: []HostLimit{}}, false},
		{"per-IP 0 with the static overrides", Dynamic{Node: map[string]string{"max.connections.per.ip": "0"}},
			ConnectionLimits{Max: 50, MaxPerIP: 0, MaxCreationRate: 1<<31 - 1, PerIPOverrides: []HostLimit{{"10.0.0.1", 4}}}, false},
		{"per-IP 0 without overrides", Dynamic{Node: map[string]string{"max.connections.per.ip": "0", "max.connections.per.ip.overrides": ""}},
			ConnectionLimits{}, true},
	}
	for _, c := range cases {
		got, err := static.WithDynamic(c.dyn).ConnectionLimits()
		if (err != nil) != c.wantErrs {
			t.Errorf("%s: error %v, want one: %v", c.name, err, c.wantErrs)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if _, err := ValidateDynamic(map[string]string{"max.connections": "0"}); err == nil {
		t.Error("ValidateDynamic took max.connections=0")
	}
	if _, err := ValidateDynamic(map[string]string{"max.connections.per.ip.overrides": "10.0.0.1"}); err == nil {
		t.Error("ValidateDynamic took an override without a count")
	}
}

// A production server.properties (the tuning, metrics and security keys
// deployment tools write) runs unchanged; the keys that change nothing in
// Strata are listed, those that do change something apply.
func TestKafkaProductionPropertiesLoad(t *testing.T) {
	b := mustLoad(t, filepath.Join("testdata", "kafka-production.properties"), nil, nil)
	if got := b.Connections.PerListener["PLAINTEXT"]; got.Max != 8000 || b.Connections.MaxCreationRate != 200 {
		t.Errorf("PLAINTEXT's own limit %+v, max.connection.creation.rate %d", got, b.Connections.MaxCreationRate)
	}
	if b.InterBrokerListener != "PLAINTEXT" || b.FetchMaxBytes != 57671680 || b.HWCheckpointInterval != 5*time.Second || b.ReplicaFetch.Fetchers != 4 {
		t.Errorf("inter-broker %q, fetch.max.bytes %d, hw checkpoint %v, fetchers %d",
			b.InterBrokerListener, b.FetchMaxBytes, b.HWCheckpointInterval, b.ReplicaFetch.Fetchers)
	}
	for _, want := range []string{"early.start.listeners=CONTROLLER", "group.coordinator.threads=8", "metrics.num.samples=2",
		"request.timeout.ms=30000", "controller.quorum.election.timeout.ms=2000", "sasl.kerberos.service.name=kafka"} {
		if !slices.Contains(b.NoEffectSettings(), want) {
			t.Errorf("NoEffectSettings %v lacks %s", b.NoEffectSettings(), want)
		}
	}
	withSecret := mustLoad(t, "", nil, map[string]string{"password.encoder.secret": "s3cret"})
	if got := withSecret.NoEffectSettings(); !slices.Equal(got, []string{"password.encoder.secret=" + hiddenValue}) {
		t.Errorf("NoEffectSettings shows a password: %v", got)
	}
}

// The Kafka keys whose only accepted value is the default say why and what
// to do instead, naming the key.
func TestOnlyDefaultKeysRefuseOtherValues(t *testing.T) {
	for key, value := range map[string]string{
		"create.topic.policy.class.name":  "com.example.Policy",
		"alter.config.policy.class.name":  "com.example.Policy",
		"client.quota.callback.class":     "com.example.Callback",
		"metric.reporters":                "io.confluent.metrics.reporter.ConfluentMetricsReporter",
		"kafka.metrics.reporters":         "com.example.Reporter",
		"eligible.leader.replicas.enable": "true",
	} {
		_, err := LoadBroker("", nil, map[string]string{key: value})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != key || !strings.Contains(err.Error(), "Strata") {
			t.Errorf("%s=%s: %v, want an error naming the key and what Strata does", key, value, err)
		}
	}
	// As in Kafka, the classic group protocol cannot be turned off; streams
	// groups are not served (share groups always are: "share" changes
	// nothing, as group.share.enable).
	for value, want := range map[string]string{"consumer": "classic", "classic,consumer,streams": "streams groups"} {
		if _, err := LoadBroker("", nil, map[string]string{"group.coordinator.rebalance.protocols": value}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("group.coordinator.rebalance.protocols=%s: %v, want an error saying %q", value, err, want)
		}
	}
	for value, want := range map[string]bool{"classic": false, "classic,consumer": true} {
		b, err := LoadBroker("", nil, map[string]string{"group.coordinator.rebalance.protocols": value})
		if err != nil || b.GroupConsumerProtocol != want {
			t.Errorf("group.coordinator.rebalance.protocols=%s: consumer protocol %v (%v), want %v", value, b != nil && b.GroupConsumerProtocol, err, want)
		}
	}
}

// security.inter.broker.protocol picks the listener named after it, as in
// Kafka; with inter.broker.listener.name too, or naming no listener, it is
// refused.
func TestSecurityInterBrokerProtocol(t *testing.T) {
	listeners := "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093"
	tls := map[string]string{"listeners": listeners, "ssl.keystore.location": "/ks.pem"}
	with := func(kv ...string) map[string]string { return withKeys(tls, kv...) }
	if b := mustLoad(t, "", nil, with("security.inter.broker.protocol", "SSL")); b.InterBrokerListener != "SSL" {
		t.Errorf("security.inter.broker.protocol=SSL: inter-broker listener %q", b.InterBrokerListener)
	}
	for _, flags := range []map[string]string{
		with("security.inter.broker.protocol", "SSL", "inter.broker.listener.name", "SSL"),
		with("security.inter.broker.protocol", "SASL_SSL"),
		with("security.inter.broker.protocol", "TLS"),
	} {
		_, err := LoadBroker("", nil, flags)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "security.inter.broker.protocol" {
			t.Errorf("%v: %v, want an error naming security.inter.broker.protocol", flags, err)
		}
	}
}

// The listener-level connection limits: listener.name.<listener>.max.connections
// and ....max.connection.creation.rate, from a file, flags or the
// environment, on any listener (TLS or not); a listener that does not exist
// or a bad value is refused. They are dynamic too: a broker's own value
// wins over the cluster-wide one, which wins over the static one; a
// dynamic one naming a listener the broker lacks is refused; a TLS key of
// a listener stays static.
func TestListenerConnectionLimits(t *testing.T) {
	listeners := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"}
	with := func(kv ...string) map[string]string { return withKeys(listeners, kv...) }
	b := mustLoad(t, "", []string{"STRATA_LISTENER_NAME_INTERNAL_MAX_CONNECTION_CREATION_RATE=20"},
		with("listener.name.internal.max.connections", "100"))
	want := map[string]ListenerLimits{"INTERNAL": {Max: 100, MaxCreationRate: 20}}
	if !reflect.DeepEqual(b.Connections.PerListener, want) {
		t.Errorf("PerListener = %+v, want %+v", b.Connections.PerListener, want)
	}
	if c, err := b.ConnectionLimits(); err != nil || !reflect.DeepEqual(c.PerListener, want) {
		t.Errorf("ConnectionLimits().PerListener = %+v, %v; want %+v", c.PerListener, err, want)
	}
	for _, flags := range []map[string]string{
		with("listener.name.external.max.connections", "10"),
		with("listener.name.internal.max.connections", "0"),
		with("listener.name.internal.max.connection.creation.rate", "fast"),
	} {
		if _, err := LoadBroker("", nil, flags); err == nil {
			t.Errorf("%v: loaded", flags)
		}
	}
	dyn, err := ValidateDynamic(map[string]string{"listener.name.internal.max.connections": " 10 ", "listener.name.plaintext.max.connection.creation.rate": "5"})
	if err != nil {
		t.Fatalf("ValidateDynamic of listener-level limits: %v", err)
	}
	for _, bad := range []map[string]string{
		{"listener.name.internal.max.connections": "0"},
		{"listener.name.internal.ssl.client.auth": "required"},
	} {
		if _, err := ValidateDynamic(bad); err == nil {
			t.Errorf("ValidateDynamic(%v) accepted", bad)
		}
	}
	cluster := map[string]string{"listener.name.internal.max.connections": "50", "listener.name.internal.max.connection.creation.rate": "7"}
	c, err := b.WithDynamic(Dynamic{Default: cluster, Node: dyn}).ConnectionLimits()
	want = map[string]ListenerLimits{"INTERNAL": {Max: 10, MaxCreationRate: 7}, "PLAINTEXT": {MaxCreationRate: 5}}
	if err != nil || !reflect.DeepEqual(c.PerListener, want) {
		t.Errorf("with dynamic configs: PerListener = %+v, %v; want %+v", c.PerListener, err, want)
	}
	entries := DescribeBroker(b.WithDynamic(Dynamic{Node: dyn}))
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == "listener.name.plaintext.max.connection.creation.rate" })
	if i < 0 || entries[i].Value != "5" || entries[i].Source != DynamicBroker || entries[i].ReadOnly {
		t.Errorf("a dynamic listener-level limit is not described as one: %+v", entries[max(i, 0)])
	}
	_, err = b.WithDynamic(Dynamic{Default: map[string]string{"listener.name.external.max.connections": "3"}}).ConnectionLimits()
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "listener.name.external.max.connections" {
		t.Errorf("a dynamic limit of a listener the broker lacks: %v, want an error naming the key", err)
	}
}

// message.format.version, which Kafka 3 describes on every topic and
// ignores in KRaft, is accepted on topics and as a broker default, and a
// value that is no Kafka version is refused naming the key.
func TestMessageFormatVersionAccepted(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"log.message.format.version": "2.8"})
	for _, v := range []string{"0.10.2", "2.8", "3.0-IV1"} {
		if _, err := ResolveTopic(map[string]string{"message.format.version": v}, b); err != nil {
			t.Errorf("message.format.version=%s: %v", v, err)
		}
	}
	_, err := ResolveTopic(map[string]string{"message.format.version": "latest"}, b)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "message.format.version" {
		t.Errorf("message.format.version=latest: %v, want an error naming the key", err)
	}
}

// A broker configured for OAuth 2 / OIDC clients as Kafka's KIP-768
// documents it loads unchanged: the validator's keys apply, the broker's
// own login keys change nothing and are listed.
func TestKafkaOIDCPropertiesLoad(t *testing.T) {
	b := mustLoad(t, filepath.Join("testdata", "kafka-oidc.properties"), nil, nil)
	got := b.OAuth["SASL_PLAINTEXT"]
	if !got.Secured || got.JWKSURL != "https://idp.example.com/oauth2/v1/keys" || got.PrincipalClaim != "client_id" ||
		got.JWKSRefresh != 15*time.Minute || !slices.Equal(got.ExpectedAudience, []string{"api://kafka"}) {
		t.Errorf("OAuth of SASL_PLAINTEXT: %+v", got)
	}
	for _, want := range []string{"sasl.login.connect.timeout.ms=15000", "sasl.oauthbearer.token.endpoint.url=https://idp.example.com/oauth2/v1/token"} {
		if !slices.Contains(b.NoEffectSettings(), want) {
			t.Errorf("NoEffectSettings %v lacks %s", b.NoEffectSettings(), want)
		}
	}
}
