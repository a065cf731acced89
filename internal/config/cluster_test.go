package config

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

// threeVoters is the quorum of the cluster tests: nodes 1-3 are voters.
const threeVoters = "1@ctrl-1:9093,2@ctrl-2:9093,3@ctrl-3:9093"

// clusterFlags are the keys of a node of the three-voter cluster, with
// extra added (a "" value deletes the key).
func clusterFlags(node string, extra map[string]string) map[string]string {
	return withFlags(map[string]string{
		"node.id":                  node,
		"controller.quorum.voters": threeVoters,
		"listeners":                "PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093",
		"advertised.listeners":     "PLAINTEXT://broker-" + node + ":9092",
	}, extra)
}

// withFlags is a copy of flags with extra added (a "" value deletes the key).
func withFlags(flags, extra map[string]string) map[string]string {
	out := maps.Clone(flags)
	for k, v := range extra {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// A single node (no voters) is what it was before clusters: no controller
// listener, its listeners unchanged, and both roles.
func TestClusterSingleNodeDefaults(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	want := []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, Protocol: ProtocolPlaintext}}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Clustered", b.Clustered(), false},
		{"QuorumVoters", b.QuorumVoters == nil, true},
		{"ProcessRoles", strings.Join(b.ProcessRoles, ","), "broker,controller"},
		{"ControllerListenerName", b.ControllerListenerName, "CONTROLLER"},
		{"ControllerListener", b.ControllerListener, Listener{}},
		{"ControllerAdvertised", b.ControllerAdvertised, ""},
		{"Listeners", reflect.DeepEqual(b.Listeners, want), true},
		{"AdvertisedListeners", reflect.DeepEqual(b.AdvertisedListeners, want), true},
		{"InterBrokerListener", b.InterBrokerListener, "PLAINTEXT"},
		{"BrokerRack", b.BrokerRack, ""},
		{"BrokerSessionTimeout", b.BrokerSessionTimeout, 9 * time.Second},
		{"BrokerHeartbeatInterval", b.BrokerHeartbeatInterval, 2 * time.Second},
		{"ReplicaFetch", b.ReplicaFetch, ReplicaFetch{
			MaxBytes: 1048576, ResponseMaxBytes: 10485760, MinBytes: 1,
			MaxWait: 500 * time.Millisecond, Backoff: time.Second, SocketTimeout: 30 * time.Second, Fetchers: 1,
		}},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// Node 2 of three voters: the controller listener leaves the Kafka
// listeners, and the node advertises its voter entry for it.
func TestClusterVoter(t *testing.T) {
	b := mustLoad(t, "", nil, clusterFlags("2", map[string]string{"broker.rack": "rack-b"}))
	if !b.Clustered() {
		t.Fatal("Clustered() = false with controller.quorum.voters set")
	}
	wantVoters := map[int32]string{1: "ctrl-1:9093", 2: "ctrl-2:9093", 3: "ctrl-3:9093"}
	if !maps.Equal(b.QuorumVoters, wantVoters) {
		t.Errorf("QuorumVoters = %v, want %v", b.QuorumVoters, wantVoters)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ControllerListener", b.ControllerListener, Listener{Name: "CONTROLLER", Host: "0.0.0.0", Port: 9093, Protocol: ProtocolPlaintext}},
		{"ControllerAdvertised", b.ControllerAdvertised, "ctrl-2:9093"},
		{"Listeners", listenersString(b.Listeners), "PLAINTEXT://0.0.0.0:9092"},
		{"AdvertisedListeners", listenersString(b.AdvertisedListeners), "PLAINTEXT://broker-2:9092"},
		{"InterBrokerListener", b.InterBrokerListener, "PLAINTEXT"},
		{"BrokerRack", b.BrokerRack, "rack-b"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := b.Advertised("CONTROLLER"); ok {
		t.Error("Advertised(CONTROLLER) found the controller listener, which clients must not be given")
	}
}

// The ways a cluster node's listeners may be written, and what they give.
func TestClusterListeners(t *testing.T) {
	tests := []struct {
		name                 string
		node                 string
		extra                map[string]string
		listeners            string // Listeners
		advertised           string // AdvertisedListeners
		controller           string // ControllerListener
		controllerAdvertised string
		interBroker          string
	}{
		{
			name: "non-voter advertises its controller address",
			node: "4",
			extra: map[string]string{"process.roles": "broker",
				"advertised.listeners": "PLAINTEXT://broker-4:9092,CONTROLLER://broker-4:9093"},
			listeners: "PLAINTEXT://0.0.0.0:9092", advertised: "PLAINTEXT://broker-4:9092",
			controller: "CONTROLLER://0.0.0.0:9093", controllerAdvertised: "broker-4:9093", interBroker: "PLAINTEXT",
		},
		{
			name: "a controller outside the voters joins as a non-voter (add-controller makes it one)",
			node: "4",
			extra: map[string]string{"process.roles": "broker,controller",
				"advertised.listeners": "PLAINTEXT://broker-4:9092,CONTROLLER://broker-4:9093"},
			listeners: "PLAINTEXT://0.0.0.0:9092", advertised: "PLAINTEXT://broker-4:9092",
			controller: "CONTROLLER://0.0.0.0:9093", controllerAdvertised: "broker-4:9093", interBroker: "PLAINTEXT",
		},
		{
			name: "non-voter listens on a specific host",
			node: "4",
			extra: map[string]string{"process.roles": "broker", "advertised.listeners": "",
				"listeners": "PLAINTEXT://10.0.0.4:9092,CONTROLLER://10.0.0.4:9093"},
			listeners: "PLAINTEXT://10.0.0.4:9092", advertised: "PLAINTEXT://10.0.0.4:9092",
			controller: "CONTROLLER://10.0.0.4:9093", controllerAdvertised: "10.0.0.4:9093", interBroker: "PLAINTEXT",
		},
		{
			name:      "voter advertises its voter entry, in another case",
			node:      "1",
			extra:     map[string]string{"advertised.listeners": "PLAINTEXT://broker-1:9092,CONTROLLER://CTRL-1:9093"},
			listeners: "PLAINTEXT://0.0.0.0:9092", advertised: "PLAINTEXT://broker-1:9092",
			controller: "CONTROLLER://0.0.0.0:9093", controllerAdvertised: "ctrl-1:9093", interBroker: "PLAINTEXT",
		},
		{
			name:      "advertised.listeners names only the controller listener",
			node:      "3",
			extra:     map[string]string{"advertised.listeners": "CONTROLLER://ctrl-3:9093"},
			listeners: "PLAINTEXT://0.0.0.0:9092", advertised: "PLAINTEXT://0.0.0.0:9092",
			controller: "CONTROLLER://0.0.0.0:9093", controllerAdvertised: "ctrl-3:9093", interBroker: "PLAINTEXT",
		},
		{
			name: "controller listener mapped to PLAINTEXT, first in listeners",
			node: "1",
			extra: map[string]string{"listeners": "CONTROLLER://:9093,PLAINTEXT://:9092",
				"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"},
			listeners: "PLAINTEXT://:9092", advertised: "PLAINTEXT://broker-1:9092",
			controller: "CONTROLLER://:9093", controllerAdvertised: "ctrl-1:9093", interBroker: "PLAINTEXT",
		},
		{
			name: "several controller listener names: the first is used",
			node: "2",
			extra: map[string]string{"controller.listener.names": "RAFT,CONTROLLER",
				"listeners": "PLAINTEXT://:9092,RAFT://:9093"},
			listeners: "PLAINTEXT://:9092", advertised: "PLAINTEXT://broker-2:9092",
			controller: "RAFT://:9093", controllerAdvertised: "ctrl-2:9093", interBroker: "PLAINTEXT",
		},
		{
			name: "inter.broker.listener.name picks the second listener",
			node: "2",
			extra: map[string]string{"inter.broker.listener.name": "INTERNAL",
				"listeners":                      "EXTERNAL://:9092,INTERNAL://:9094,CONTROLLER://:9093",
				"advertised.listeners":           "EXTERNAL://broker-2:9092,INTERNAL://broker-2.internal:9094",
				"listener.security.protocol.map": "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT"},
			listeners: "EXTERNAL://:9092,INTERNAL://:9094", advertised: "EXTERNAL://broker-2:9092,INTERNAL://broker-2.internal:9094",
			controller: "CONTROLLER://:9093", controllerAdvertised: "ctrl-2:9093", interBroker: "INTERNAL",
		},
		{
			name: "TLS client listener beside the controller listener",
			node: "3",
			extra: map[string]string{"listeners": "SSL://:9094,CONTROLLER://:9093", "advertised.listeners": "",
				"ssl.keystore.location": "/etc/strata/ks.pem"},
			listeners: "SSL://:9094", advertised: "SSL://:9094",
			controller: "CONTROLLER://:9093", controllerAdvertised: "ctrl-3:9093", interBroker: "SSL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustLoad(t, "", nil, clusterFlags(tt.node, tt.extra))
			checks := []struct {
				name      string
				got, want string
			}{
				{"Listeners", listenersString(b.Listeners), tt.listeners},
				{"AdvertisedListeners", listenersString(b.AdvertisedListeners), tt.advertised},
				{"ControllerListener", b.ControllerListener.String(), tt.controller},
				{"ControllerListener.Protocol", b.ControllerListener.Protocol, ProtocolPlaintext},
				{"ControllerAdvertised", b.ControllerAdvertised, tt.controllerAdvertised},
				{"InterBrokerListener", b.InterBrokerListener, tt.interBroker},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
				}
			}
		})
	}
}

// controller.quorum.voters in Kafka's form: ids with addresses that other
// nodes dial, IPv6 in brackets, spaces and leading zeros of ports dropped.
func TestClusterVotersParse(t *testing.T) {
	b := mustLoad(t, "", nil, clusterFlags("0", map[string]string{
		"controller.quorum.voters": " 0@[::1]:09093 , 7@ctrl-7:9093",
		"listeners":                "PLAINTEXT://[::1]:9092,CONTROLLER://[::1]:9093",
		"advertised.listeners":     "",
	}))
	want := map[int32]string{0: "[::1]:9093", 7: "ctrl-7:9093"}
	if !maps.Equal(b.QuorumVoters, want) {
		t.Errorf("QuorumVoters = %v, want %v", b.QuorumVoters, want)
	}
	if b.ControllerAdvertised != "[::1]:9093" {
		t.Errorf("ControllerAdvertised = %q, want [::1]:9093", b.ControllerAdvertised)
	}
}

// STRATA_CONTROLLER_QUORUM_VOTERS and the other cluster keys are set by
// their environment variables like every broker key.
func TestClusterFromEnvironment(t *testing.T) {
	env := []string{
		"STRATA_CONTROLLER_QUORUM_VOTERS=" + threeVoters,
		"STRATA_NODE_ID=3",
		"STRATA_LISTENERS=PLAINTEXT://broker-3:9092,CONTROLLER://ctrl-3:9093",
		"STRATA_PROCESS_ROLES=broker,controller",
		"STRATA_BROKER_RACK=r3",
		"STRATA_REPLICA_FETCH_WAIT_MAX_MS=250",
	}
	b := mustLoad(t, "", env, nil)
	if !b.Clustered() || len(b.QuorumVoters) != 3 || b.ControllerAdvertised != "ctrl-3:9093" ||
		b.BrokerRack != "r3" || b.ReplicaFetch.MaxWait != 250*time.Millisecond {
		t.Errorf("from the environment: voters %v, controller advertised %q, rack %q, fetch wait %v",
			b.QuorumVoters, b.ControllerAdvertised, b.BrokerRack, b.ReplicaFetch.MaxWait)
	}
	if got := b.Origin["controller.quorum.voters"]; got != "STRATA_CONTROLLER_QUORUM_VOTERS" {
		t.Errorf("origin of controller.quorum.voters = %q", got)
	}
}

// The replica fetch and heartbeat rules between keys accept their bounds.
func TestClusterTimeoutBounds(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"replica.fetch.wait.max.ms": "1000", "replica.socket.timeout.ms": "1000", "replica.lag.time.max.ms": "1000",
		"broker.heartbeat.interval.ms": "1", "broker.session.timeout.ms": "2",
		"replica.fetch.max.bytes": "1", "replica.fetch.response.max.bytes": "1", "replica.fetch.min.bytes": "1",
		"replica.fetch.backoff.ms": "0", "num.replica.fetchers": "4",
	})
	want := ReplicaFetch{MaxBytes: 1, ResponseMaxBytes: 1, MinBytes: 1, MaxWait: time.Second, SocketTimeout: time.Second, Fetchers: 4}
	if b.ReplicaFetch != want {
		t.Errorf("ReplicaFetch = %+v, want %+v", b.ReplicaFetch, want)
	}
	if b.BrokerHeartbeatInterval != time.Millisecond || b.BrokerSessionTimeout != 2*time.Millisecond {
		t.Errorf("heartbeat %v, session %v", b.BrokerHeartbeatInterval, b.BrokerSessionTimeout)
	}
}

// Every broken rule is one *Error naming the key to change.
func TestClusterErrors(t *testing.T) {
	single := func(flags map[string]string) func() map[string]string {
		return func() map[string]string { return flags }
	}
	node := func(id string, extra map[string]string) func() map[string]string {
		return func() map[string]string { return clusterFlags(id, extra) }
	}
	tests := []struct {
		name  string
		flags func() map[string]string
		key   string
		msg   string // a part of the message
	}{
		// controller.quorum.voters on its own.
		{"voter without @", node("1", map[string]string{"controller.quorum.voters": "1:ctrl-1:9093"}), "controller.quorum.voters", "id@host:port"},
		{"voter without port", node("1", map[string]string{"controller.quorum.voters": "1@ctrl-1"}), "controller.quorum.voters", "id@host:port"},
		{"voter id not a number", node("1", map[string]string{"controller.quorum.voters": "one@ctrl-1:9093"}), "controller.quorum.voters", "id@host:port"},
		{"empty voter", node("1", map[string]string{"controller.quorum.voters": "1@ctrl-1:9093,,2@ctrl-2:9093"}), "controller.quorum.voters", "without empty elements"},
		{"negative voter id", node("1", map[string]string{"controller.quorum.voters": "-1@ctrl-1:9093"}), "controller.quorum.voters", "at least 0"},
		{"voter twice", node("1", map[string]string{"controller.quorum.voters": "1@ctrl-1:9093,1@ctrl-2:9093"}), "controller.quorum.voters", "given twice"},
		{"voter without host", node("1", map[string]string{"controller.quorum.voters": "1@:9093"}), "controller.quorum.voters", "host"},
		{"voter on 0.0.0.0", node("1", map[string]string{"controller.quorum.voters": "1@0.0.0.0:9093"}), "controller.quorum.voters", "wildcard"},
		{"voter on ::", node("1", map[string]string{"controller.quorum.voters": "1@[::]:9093"}), "controller.quorum.voters", "wildcard"},
		{"voter on port 0", node("1", map[string]string{"controller.quorum.voters": "1@ctrl-1:0"}), "controller.quorum.voters", "port"},
		{"voter port too large", node("1", map[string]string{"controller.quorum.voters": "1@ctrl-1:65536"}), "controller.quorum.voters", "port"},
		{"two voters at one address", node("1", map[string]string{"controller.quorum.voters": "1@ctrl:9093,2@CTRL:9093"}), "controller.quorum.voters", "own address"},

		// process.roles.
		{"controller-only node", node("1", map[string]string{"process.roles": "controller"}), "process.roles", "no controller-only nodes"},
		{"unknown role", node("1", map[string]string{"process.roles": "broker,worker"}), "process.roles", "broker, controller"},
		{"role twice", node("1", map[string]string{"process.roles": "broker,broker"}), "process.roles", "broker, controller"},
		{"broker-only single node", single(map[string]string{"process.roles": "broker"}), "process.roles", "controller.quorum.voters"},
		{"voter without the controller role", node("2", map[string]string{"process.roles": "broker"}), "process.roles", "remove 2 from controller.quorum.voters"},

		// controller.listener.names and the controller listener.
		{"no controller listener name", node("1", map[string]string{"controller.listener.names": ","}), "controller.listener.names", "upper-case"},
		{"lower-case controller listener name", node("1", map[string]string{"controller.listener.names": "controller"}), "controller.listener.names", "upper-case"},
		{"controller listener name twice", node("1", map[string]string{"controller.listener.names": "CONTROLLER,CONTROLLER"}), "controller.listener.names", "distinct"},
		{"cluster without controller listener", node("1", map[string]string{"listeners": "PLAINTEXT://:9092"}), "listeners", "CONTROLLER://<host>:9093"},
		{"cluster with only the controller listener", node("1", map[string]string{"listeners": "CONTROLLER://:9093", "advertised.listeners": ""}), "listeners", "PLAINTEXT://<host>:9092"},
		{"controller listener over TLS", node("1", map[string]string{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL"}), "listener.security.protocol.map", "PLAINTEXT only"},
		{"second controller listener name in listeners", node("1", map[string]string{"controller.listener.names": "CONTROLLER,RAFT",
			"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093,RAFT://:9094", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,RAFT:PLAINTEXT"}), "listeners", "only the first"},
		{"controller listener on a single node", single(map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093"}), "listeners", "set controller.quorum.voters or controller.quorum.bootstrap.servers, or remove it from listeners"},
		{"client listener without protocol in a cluster", node("1", map[string]string{"listeners": "CLIENT://:9092,CONTROLLER://:9093", "advertised.listeners": ""}), "listener.security.protocol.map", "no protocol for listener CLIENT"},
		{"TLS client listener without keystore in a cluster", node("1", map[string]string{"listeners": "SSL://:9094,CONTROLLER://:9093", "advertised.listeners": ""}), "ssl.keystore.location", "SSL"},

		// Where other nodes dial the controller listener.
		{"voter advertises another controller address", node("2", map[string]string{"advertised.listeners": "PLAINTEXT://broker-2:9092,CONTROLLER://broker-2:9093"}), "advertised.listeners", "2@ctrl-2:9093"},
		{"voter advertises a wildcard controller address", node("2", map[string]string{"advertised.listeners": "PLAINTEXT://broker-2:9092,CONTROLLER://0.0.0.0:9093"}), "advertised.listeners", "other nodes can reach"},
		{"non-voter controller listener on every interface", node("4", map[string]string{"process.roles": "broker"}), "advertised.listeners", "add CONTROLLER://<host>:<port>"},
		{"non-voter controller listener on port 0", node("4", map[string]string{"process.roles": "broker", "advertised.listeners": "",
			"listeners": "PLAINTEXT://10.0.0.4:9092,CONTROLLER://10.0.0.4:0"}), "advertised.listeners", "CONTROLLER://10.0.0.4:0 in listeners"},
		{"non-voter advertises a voter's address", node("4", map[string]string{"process.roles": "broker",
			"advertised.listeners": "PLAINTEXT://broker-4:9092,CONTROLLER://ctrl-1:9093"}), "advertised.listeners", "voter 1's"},
		{"advertised controller listener on a single node", single(map[string]string{"advertised.listeners": "CONTROLLER://h:9093"}), "advertised.listeners", "does not have"},

		// inter.broker.listener.name.
		{"inter-broker listener unknown", node("1", map[string]string{"inter.broker.listener.name": "INTERNAL"}), "inter.broker.listener.name", "name one of: PLAINTEXT"},
		{"inter-broker listener is the controller listener", node("1", map[string]string{"inter.broker.listener.name": "CONTROLLER"}), "inter.broker.listener.name", "controller listener"},
		{"inter-broker listener unknown on a single node", single(map[string]string{"inter.broker.listener.name": "SSL"}), "inter.broker.listener.name", "name one of: PLAINTEXT"},
		{"inter-broker listener empty", single(map[string]string{"inter.broker.listener.name": ""}), "inter.broker.listener.name", "empty"},

		// broker.rack.
		{"rack too long", single(map[string]string{"broker.rack": strings.Repeat("r", 256)}), "broker.rack", "255"},

		// Heartbeats.
		{"heartbeat as long as the session", single(map[string]string{"broker.heartbeat.interval.ms": "9000"}), "broker.heartbeat.interval.ms", "broker.session.timeout.ms"},
		{"session shorter than the heartbeat", single(map[string]string{"broker.session.timeout.ms": "1000"}), "broker.heartbeat.interval.ms", "broker.session.timeout.ms (1000)"},
		{"heartbeat of 0", single(map[string]string{"broker.heartbeat.interval.ms": "0"}), "broker.heartbeat.interval.ms", "at least 1"},
		{"session of 0", single(map[string]string{"broker.session.timeout.ms": "0"}), "broker.session.timeout.ms", "at least 1"},

		// Replica fetches.
		{"fetch wait beyond the socket timeout", single(map[string]string{"replica.fetch.wait.max.ms": "30001"}), "replica.fetch.wait.max.ms", "replica.socket.timeout.ms"},
		{"fetch wait beyond the ISR lag", single(map[string]string{"replica.fetch.wait.max.ms": "2000", "replica.lag.time.max.ms": "1999"}), "replica.fetch.wait.max.ms", "replica.lag.time.max.ms"},
		{"negative fetch wait", single(map[string]string{"replica.fetch.wait.max.ms": "-1"}), "replica.fetch.wait.max.ms", "at least 0"},
		{"fetch max bytes 0", single(map[string]string{"replica.fetch.max.bytes": "0"}), "replica.fetch.max.bytes", "at least 1"},
		{"fetch response max bytes 0", single(map[string]string{"replica.fetch.response.max.bytes": "0"}), "replica.fetch.response.max.bytes", "at least 1"},
		{"fetch min bytes 0", single(map[string]string{"replica.fetch.min.bytes": "0"}), "replica.fetch.min.bytes", "at least 1"},
		{"negative fetch backoff", single(map[string]string{"replica.fetch.backoff.ms": "-1"}), "replica.fetch.backoff.ms", "at least 0"},
		{"socket timeout 0", single(map[string]string{"replica.socket.timeout.ms": "0"}), "replica.socket.timeout.ms", "at least 1"},
		{"fetch max bytes beyond an Int", single(map[string]string{"replica.fetch.max.bytes": "2147483648"}), "replica.fetch.max.bytes", "32-bit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tt.flags())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error for %s", err, tt.key)
			}
			if e.Key != tt.key || !strings.Contains(e.Msg, tt.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v; want one line on %s containing %q", err, tt.key, tt.msg)
			}
		})
	}
}

// The cluster keys are described like every broker key: read-only, with
// Kafka's names, and the defaults Strata gives them.
func TestClusterDescribed(t *testing.T) {
	entries := DescribeBroker(mustLoad(t, "", nil, map[string]string{"broker.rack": "r1"}))
	tests := []struct {
		name   string
		value  string
		null   bool
		source Source
		typ    Type
	}{
		{"controller.quorum.voters", "", false, Default, List},
		{"process.roles", "broker,controller", false, Default, List},
		{"controller.listener.names", "CONTROLLER", false, Default, List},
		{"inter.broker.listener.name", "", true, Default, String},
		{"broker.rack", "r1", false, StaticBroker, String},
		{"broker.session.timeout.ms", "9000", false, Default, Int},
		{"broker.heartbeat.interval.ms", "2000", false, Default, Int},
		{"replica.fetch.max.bytes", "1048576", false, Default, Int},
		{"replica.fetch.response.max.bytes", "10485760", false, Default, Int},
		{"replica.fetch.min.bytes", "1", false, Default, Int},
		{"replica.fetch.wait.max.ms", "500", false, Default, Int},
		{"replica.fetch.backoff.ms", "1000", false, Default, Int},
		{"replica.socket.timeout.ms", "30000", false, Default, Int},
	}
	for _, tt := range tests {
		e := find(t, entries, tt.name)
		if e.Value != tt.value || e.IsNull != tt.null || e.Source != tt.source || e.Type != tt.typ || !e.ReadOnly || e.Doc == "" {
			t.Errorf("%s = %q null=%v from %v type %v read-only=%v; want %q null=%v from %v type %v read-only",
				tt.name, e.Value, e.IsNull, e.Source, e.Type, e.ReadOnly, tt.value, tt.null, tt.source, tt.typ)
		}
	}
}
