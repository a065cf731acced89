package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/testkraft"
)

// formattedClusterID is a cluster id as `kafka-storage random-uuid` prints
// one.
const formattedClusterID = "MkU3OEVBNTcwNTJENDM2Qg"

// formatLikeKafka lays out dir as Kafka 4's `kafka-storage format
// --standalone -t <id>` leaves a log dir: meta.properties naming the
// cluster, and the bootstrap files Kafka's controller reads (Strata keeps
// its metadata elsewhere and leaves them alone).
func formatLikeKafka(t *testing.T, dir, clusterID string) {
	t.Helper()
	files := map[string]string{
		"meta.properties":      "#\n#Sat Dec 05 14:00:00 UTC 2026\nnode.id=1\ndirectory.id=0SjJ2JvbTJ6vVf2Qv5PZ2g\nversion=1\ncluster.id=" + clusterID + "\n",
		"bootstrap.checkpoint": "kafka's bootstrap records",
		filepath.Join("__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint"): "kafka's voter set",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func clusterIDOf(t *testing.T, addr string) string {
	t.Helper()
	resp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(testContext(t, 10*time.Second), newClient(t, addr))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("DescribeCluster: %v, %+v", err, resp)
	}
	return resp.ClusterID
}

// Kafka 4's quickstart formats the storage before the first start
// (kafka-storage format -t <id>). Strata started on a log dir formatted so
// takes that cluster id, whether it runs as Kafka's standalone quorum or
// as a single node, keeps it across a restart and leaves Kafka's bootstrap
// files alone; a meta.properties whose cluster.id is not one is refused
// with one line naming the file.
func TestKafkaFormattedStorage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	formatLikeKafka(t, dir, formattedClusterID)
	b := startKafka4NodeIn(t, dir, 1, "")
	if got := clusterIDOf(t, b.Addr); got != formattedClusterID {
		t.Fatalf("cluster id %q, want the formatted %q", got, formattedClusterID)
	}
	const topic = "formatted"
	produceSync(t, newClient(t, b.Addr, kgo.AllowAutoTopicCreation()), &kgo.Record{Topic: topic, Value: []byte("v")})
	b.Stop()
	b.Restart()
	if got := clusterIDOf(t, b.Addr); got != formattedClusterID {
		t.Fatalf("after a restart: cluster id %q, want %q", got, formattedClusterID)
	}
	if got := consumeAll(t, b.Addr, topic); len(got[0]) != 1 {
		t.Fatalf("after a restart: %d records, want 1", len(got[0]))
	}
	for _, kept := range []string{"bootstrap.checkpoint", filepath.Join("__cluster_metadata-0", "00000000000000000000-0000000000.checkpoint")} {
		if _, err := os.Stat(filepath.Join(dir, kept)); err != nil {
			t.Errorf("Kafka's %s: %v", kept, err)
		}
	}

	single := t.TempDir()
	formatLikeKafka(t, single, formattedClusterID)
	if got := clusterIDOf(t, startBroker(t, single).Addr); got != formattedClusterID {
		t.Fatalf("single node: cluster id %q, want the formatted %q", got, formattedClusterID)
	}

	bad := t.TempDir()
	formatLikeKafka(t, bad, "not-a-cluster-id")
	out, code := runCLI(t, "serve", "--listen", "127.0.0.1:0", "--data-dir", bad)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code == 0 || !strings.Contains(lines[len(lines)-1], filepath.Join(bad, "meta.properties")) || !strings.Contains(lines[len(lines)-1], "kafka-storage") {
		t.Fatalf("a meta.properties with a bad cluster.id (exit %d):\n%s", code, out)
	}
}

// Kafka 4's way to start a quorum of several controllers: each node's
// storage formatted with `kafka-storage format --initial-controllers`
// (the voters in a bootstrap snapshot of its metadata log dir) and its
// controller.quorum.bootstrap.servers naming them all. The voters
// bootstrap the quorum together, with the formatted cluster id, serve a
// replicated topic, and a restarted one comes back from its metadata.
func TestKafkaInitialControllers(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, &Cluster{voters: 3, quorum: func(addrs []string, b *Broker) string {
		voters := make([]testkraft.Voter, len(addrs))
		for i, a := range addrs {
			host, port, _ := net.SplitHostPort(a)
			p, _ := strconv.Atoi(port)
			voters[i] = testkraft.Voter{ID: int32(i + 1), DirectoryID: [16]byte{byte(i + 1)},
				Endpoints: []testkraft.Endpoint{{Name: controllerListener, Host: host, Port: uint16(p)}}}
		}
		formatLikeKafka(t, b.Dir, formattedClusterID)
		if err := os.WriteFile(filepath.Join(b.Dir, testkraft.SnapshotPath), testkraft.BootstrapSnapshot(voters), 0o644); err != nil {
			t.Fatal(err)
		}
		return "controller.quorum.bootstrap.servers=" + strings.Join(addrs, ",")
	}}, 3)
	c.requireQuorumDescribed(1)
	if got := clusterIDOf(t, c.Node(2).Addr); got != formattedClusterID {
		t.Fatalf("cluster id %q, want the formatted %q", got, formattedClusterID)
	}
	const topic = "initial-controllers"
	c.createTopic(newAdmin(t, c.Node(1).Addr), topic, 1, 3, nil)
	produceSync(t, newClient(t, c.Node(1).Addr, ackedProducerOpts...), &kgo.Record{Topic: topic, Value: []byte("v")})
	c.Node(2).Stop()
	c.Node(2).Restart()
	c.requireQuorumDescribed(2)
	if got := consumeAll(t, c.Node(2).Addr, topic); len(got[0]) != 1 {
		t.Fatalf("%d records through the restarted node, want 1", len(got[0]))
	}
}

// Kafka's docs also grow a quorum from one node formatted with
// `--standalone` while every node's controller.quorum.bootstrap.servers
// names all the controllers. The formatted node starts the quorum as its
// one voter, from its snapshot, though its list names a controller that is
// not running yet.
func TestKafkaStandaloneFormatWithAFullList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "server.properties")
	notYet := net.JoinHostPort("localhost", strconv.Itoa(freePorts(t, 1)[0]))
	b := startBrokerListenersConfig(t, dir, []string{"PLAINTEXT", controllerListener}, func(b *Broker) string {
		own := advertisedController(b)
		host, port, _ := net.SplitHostPort(own)
		p, _ := strconv.Atoi(port)
		formatLikeKafka(t, dir, formattedClusterID)
		self := []testkraft.Voter{{ID: 1, Endpoints: []testkraft.Endpoint{{Name: controllerListener, Host: host, Port: uint16(p)}}}}
		if err := os.WriteFile(filepath.Join(dir, testkraft.SnapshotPath), testkraft.BootstrapSnapshot(self), 0o644); err != nil {
			t.Fatal(err)
		}
		props := kafka4NodeProperties(1, own+","+notYet, b.Listeners["PLAINTEXT"], b.Listeners[controllerListener], dir)
		if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	})
	_, q := mustDescribeQuorum(t, newClient(t, b.Addr))
	if q.LeaderID != 1 || len(q.CurrentVoters) != 1 || q.CurrentVoters[0].ReplicaID != 1 {
		t.Fatalf("leader %d, voters %+v; want node 1 the one voter", q.LeaderID, q.CurrentVoters)
	}
	if got := clusterIDOf(t, b.Addr); got != formattedClusterID {
		t.Fatalf("cluster id %q, want the formatted %q", got, formattedClusterID)
	}
}
