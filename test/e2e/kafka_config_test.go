package e2e

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startKafka4Node starts node id from Kafka 4's own
// config/server.properties (a combined broker and controller node), its
// ports and data directory moved to the test's, finding its controllers
// at bootstrap (controller.quorum.bootstrap.servers); "" names the node's
// own controller listener: the first voter of a standalone quorum, as
// Kafka's file has it.
func startKafka4Node(t *testing.T, id int, bootstrap string) *Broker {
	t.Helper()
	return startKafka4NodeIn(t, t.TempDir(), id, bootstrap)
}

// startKafka4NodeIn is startKafka4Node with its log dir at dir.
func startKafka4NodeIn(t *testing.T, dir string, id int, bootstrap string) *Broker {
	t.Helper()
	file := filepath.Join(t.TempDir(), "server.properties")
	return startBrokerListenersConfig(t, dir, []string{"PLAINTEXT", controllerListener}, func(b *Broker) string {
		boot := bootstrap
		if boot == "" {
			boot = advertisedController(b)
		}
		props := kafka4NodeProperties(id, boot, b.Listeners["PLAINTEXT"], b.Listeners[controllerListener], dir)
		if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	})
}

// advertisedController is b's controller listener as its Kafka 4
// server.properties advertises it.
func advertisedController(b *Broker) string {
	_, port, _ := net.SplitHostPort(b.Listeners[controllerListener])
	return "localhost:" + port
}

// waitObserver waits for node to be an observer of the metadata quorum and
// returns its state there.
func waitObserver(t *testing.T, cl kmsg.Requestor, node int32) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	t.Helper()
	var observer kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	waitFor(t, clusterSettleTimeout, fmt.Sprintf("node %d to join the quorum as an observer", node), func() bool {
		_, q := mustDescribeQuorum(t, cl)
		i := slices.IndexFunc(q.Observers, func(r kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool { return r.ReplicaID == node })
		if i >= 0 {
			observer = q.Observers[i]
		}
		return i >= 0
	})
	return observer
}

// kafka4NodeProperties is Kafka 4's config/server.properties for node id,
// which finds its controllers at bootstrap.
func kafka4NodeProperties(id int, bootstrap, plaintext, controller, dir string) string {
	_, cport, _ := net.SplitHostPort(controller)
	return fmt.Sprintf(`process.roles=broker,controller
node.id=%[5]d
controller.quorum.bootstrap.servers=%[6]s
listeners=PLAINTEXT://%[1]s,CONTROLLER://%[3]s
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://%[1]s,CONTROLLER://localhost:%[2]s
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=%[4]s
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`, plaintext, cport, controller, dir, id, bootstrap)
}

// A Kafka operator's first try: Strata started with Kafka 4's own
// server.properties serves clients, says which settings change nothing,
// and is the first voter of a quorum (Kafka's standalone quorum) that a
// second node, its controller.quorum.bootstrap.servers naming the first's
// controller listener, joins, and AddRaftVoter makes a voter: Kafka 4's
// way to grow a cluster, with Kafka's own files.
func TestKafka4ServerPropertiesServe(t *testing.T) {
	b := startKafka4Node(t, 1, "")
	out := b.output.String()
	for _, want := range []string{"num.io.threads=8", "num.network.threads=3", "change nothing", "first voter of a quorum"} {
		if !strings.Contains(out, want) {
			t.Errorf("broker output lacks %q:\n%s", want, out)
		}
	}

	const topic, n = "kafka4-config", 200
	cl := newClient(t, b.Addr, kgo.AllowAutoTopicCreation())
	records := make([]*kgo.Record, n)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(strings.Repeat("v", i))}
	}
	produceSync(t, cl, records...)
	got := consumeAll(t, b.Addr, topic)
	if len(got) != 1 || len(got[0]) != n {
		t.Fatalf("consumed %d partitions, %d records in partition 0; want 1 partition (num.partitions=1) with %d", len(got), len(got[0]), n)
	}
	for i, r := range got[0] {
		if string(r.Key) != fmt.Sprint(i) || len(r.Value) != i {
			t.Fatalf("record %d: key %q, %d value bytes", i, r.Key, len(r.Value))
		}
	}
	b.Stop()
	b.Restart()
	// A cluster broker is ready once the controller has unfenced it (as
	// Kafka's): the quorum's one voter leads its partition from its ready
	// line on.
	if ps, err := partitions(t, newAdmin(t, b.Addr), topic); err != nil || ps[0].Leader != 1 || ps[0].Err != nil {
		t.Fatalf("right after the restart's ready line: %v, %v; want the partition led by node 1", ps, err)
	}
	if again := consumeAll(t, b.Addr, topic); len(again[0]) != n {
		t.Fatalf("after a restart: %d records, want %d", len(again[0]), n)
	}

	second := startKafka4Node(t, 2, advertisedController(b))
	admin := newClient(t, second.Addr)
	observer := waitObserver(t, admin, 2)
	waitAddRaftVoter(t, admin, nil, 2, observer.ReplicaDirectoryID, advertisedController(second))
	if _, q := mustDescribeQuorum(t, newClient(t, b.Addr)); !slices.Equal(sorted(replicaIDs(q.CurrentVoters)), []int32{1, 2}) {
		t.Fatalf("voters %v, want 1 and 2", replicaIDs(q.CurrentVoters))
	}
	if again := consumeAll(t, second.Addr, topic); len(again[0]) != n {
		t.Fatalf("through node 2: %d records, want %d", len(again[0]), n)
	}
}

// max.connections.per.ip closes a connection over its address's limit as it
// is accepted, the others keep being served, and the metrics count both;
// connections.max.idle.ms closes a connection that sends nothing, and its
// slot goes with it.
func TestConnectionLimits(t *testing.T) {
	b := startBroker(t, t.TempDir(), "max.connections.per.ip=2", "connections.max.idle.ms=1500",
		"socket.send.buffer.bytes=65536", "socket.receive.buffer.bytes=65536", "strata.metrics.listener=127.0.0.1:0")
	metricsURL := metricsBase(t, b) + "/metrics"
	busy, idle := dialRaw(t, b.Addr), dialRaw(t, b.Addr)
	rawAPIVersions(t, busy, 1)
	over := dialRaw(t, b.Addr)
	requireClosed(t, over)
	rawAPIVersions(t, busy, 2)
	m := scrape(t, metricsURL)
	if m["strata_connections_refused_total"] != 1 || m["strata_connections"] != 2 {
		t.Errorf("strata_connections_refused_total = %v, strata_connections = %v; want 1, 2",
			m["strata_connections_refused_total"], m["strata_connections"])
	}

	start := time.Now()
	requireClosed(t, idle)
	if d := time.Since(start); d < time.Second/2 {
		t.Errorf("the idle connection was closed after %v, before its 1.5 s", d)
	}
	// busy is idle too now, and goes the same way; then both slots are free.
	requireClosed(t, busy)
	for i := range 2 {
		rawAPIVersions(t, dialRaw(t, b.Addr), int32(10+i))
	}
}

// rawAPIVersions sends ApiVersions v0 on c and reads its answer, checking
// the correlation id.
func rawAPIVersions(t *testing.T, c net.Conn, correlationID int32) {
	t.Helper()
	writeAll(t, c, apiVersionsV0(correlationID))
	resp := readFrame(t, c)
	if len(resp) < 6 || int32(binary.BigEndian.Uint32(resp)) != correlationID || binary.BigEndian.Uint16(resp[4:]) != 0 {
		t.Fatalf("ApiVersions answer %x: want correlation id %d and no error", resp[:min(len(resp), 6)], correlationID)
	}
}

// apiVersionsV0 is an ApiVersions v0 request frame with a null client id.
func apiVersionsV0(correlationID int32) []byte {
	req := binary.BigEndian.AppendUint32(nil, 10) // size: key, version, correlation id, null client id
	req = binary.BigEndian.AppendUint16(req, 18)
	req = binary.BigEndian.AppendUint16(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(correlationID))
	return binary.BigEndian.AppendUint16(req, 0xffff)
}

// max.connections holds a connection over the limit unanswered until another
// closes (a broker of one listener has no inter-broker exemption); so does a
// listener's own limit, listener.name.<listener>.max.connections.
func TestMaxConnectionsHoldsTheNextConnection(t *testing.T) {
	for _, limit := range []string{"max.connections=2", "listener.name.plaintext.max.connections=2"} {
		t.Run(limit, func(t *testing.T) {
			b := startBroker(t, t.TempDir(), limit)
			first, second := dialRaw(t, b.Addr), dialRaw(t, b.Addr)
			rawAPIVersions(t, first, 1)
			rawAPIVersions(t, second, 2)
			third := dialRaw(t, b.Addr) // the kernel completes the handshake; the broker does not accept it yet
			writeAll(t, third, apiVersionsV0(3))
			_ = third.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			var buf [1]byte
			if n, err := third.Read(buf[:]); n > 0 || err == nil {
				t.Fatalf("the third connection was answered while two were open (read %d, %v)", n, err)
			}
			first.Close()
			resp := readFrame(t, third)
			if int32(binary.BigEndian.Uint32(resp)) != 3 {
				t.Fatalf("the third connection's answer: %x", resp[:min(len(resp), 8)])
			}
		})
	}
}
