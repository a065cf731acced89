package e2e

import (
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterAddAndRemoveControllers: Kafka's dynamic quorum (KIP-853). A
// cluster starts with one voter; the two other nodes are controllers
// outside controller.quorum.voters. AddRaftVoter, sent to a broker that
// does not lead, makes them voters; then the first voter is killed while
// an acks=all producer writes, and the two added voters elect and go on.
// RemoveRaftVoter takes the dead voter out, and an added voter restarted
// is still a voter. Every acknowledged record is there once, in order.
func TestClusterAddAndRemoveControllers(t *testing.T) {
	t.Parallel()
	c := startClusterOfVoters(t, 3, 1)
	cl2, cl3 := newClient(t, c.Node(2).Addr), newClient(t, c.Node(3).Addr)
	_, q := mustDescribeQuorum(t, cl3)
	if ids := replicaIDs(q.CurrentVoters); !slices.Equal(ids, []int32{1}) || !slices.Equal(replicaIDs(q.Observers), []int32{2, 3}) {
		t.Fatalf("voters %v, observers %v; want voter 1, observers 2 and 3", ids, replicaIDs(q.Observers))
	}
	dirs := map[int32][16]byte{}
	for _, r := range slices.Concat(q.CurrentVoters, q.Observers) {
		if r.ReplicaDirectoryID == ([16]byte{}) {
			t.Fatalf("node %d has no directory id in DescribeQuorum", r.ReplicaID)
		}
		dirs[r.ReplicaID] = r.ReplicaDirectoryID
	}
	other := "another-cluster"
	for _, tc := range []struct {
		name      string
		cluster   *string
		dir       [16]byte
		listener  string
		wantError *kerr.Error
	}{
		{"another directory id", nil, [16]byte{9}, c.Node(2).Listeners[controllerListener], kerr.InvalidRequest},
		{"another address", nil, dirs[2], "127.0.0.1:1", kerr.InvalidRequest},
		{"another cluster", &other, dirs[2], c.Node(2).Listeners[controllerListener], kerr.InconsistentClusterID},
	} {
		if code, msg := addRaftVoter(t, cl3, tc.cluster, 2, tc.dir, tc.listener); code != tc.wantError.Code {
			t.Errorf("%s: AddRaftVoter answered %d (%s), want %s", tc.name, code, msg, tc.wantError.Message)
		}
	}
	waitAddRaftVoter(t, cl3, nil, 2, dirs[2], c.Node(2).Listeners[controllerListener])
	if code, msg := addRaftVoter(t, cl3, nil, 2, dirs[2], c.Node(2).Listeners[controllerListener]); code != kerr.DuplicateVoter.Code {
		t.Errorf("AddRaftVoter twice answered %d (%s), want DUPLICATE_VOTER", code, msg)
	}
	adm := c.newAdmin()
	md, err := adm.BrokerMetadata(testContext(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// Node 3 is named as kafka-metadata-quorum add-controller names it:
	// by the directory id of its meta.properties, with the cluster's id.
	if dir := metaPropertiesDirectoryID(t, c.Node(3)); dir != dirs[3] {
		t.Fatalf("node 3's meta.properties names directory %x, DescribeQuorum %x", dir, dirs[3])
	}
	waitAddRaftVoter(t, cl2, &md.Cluster, 3, dirs[3], c.Node(3).Listeners[controllerListener])
	c.requireQuorumDescribed(3)

	const topic, partitions = "added-controllers", 3
	c.createTopic(adm, topic, partitions, 3, nil)
	c.waitISR(adm, topic, 3)
	p := startAckedProducer(t, newClient(t, c.Node(2).Addr, ackedProducerOpts...), topic, partitions)
	p.waitTotalAcked(t, 300)
	c.Node(1).Kill()
	acked := p.totalAcked()
	t.Logf("killed node 1, the only configured voter, with %d records acknowledged", acked)
	p.waitTotalAcked(t, acked+300)

	if code, msg := removeRaftVoter(t, cl2, 1, [16]byte{9}); code != kerr.VoterNotFound.Code {
		t.Errorf("RemoveRaftVoter by another directory id answered %d (%s), want VOTER_NOT_FOUND", code, msg)
	}
	if code, msg := removeRaftVoter(t, cl2, 1, dirs[1]); code != 0 {
		t.Fatalf("RemoveRaftVoter(1) answered %d (%s)", code, msg)
	}
	if code, msg := removeRaftVoter(t, cl3, 1, dirs[1]); code != kerr.VoterNotFound.Code {
		t.Errorf("RemoveRaftVoter twice answered %d (%s), want VOTER_NOT_FOUND", code, msg)
	}

	c.Node(3).Stop()
	c.Node(3).Restart()
	acked = p.totalAcked()
	p.waitTotalAcked(t, acked+300)
	_, q = mustDescribeQuorum(t, cl2)
	if ids := replicaIDs(q.CurrentVoters); !slices.Equal(ids, []int32{2, 3}) {
		t.Fatalf("voters %v after node 3's restart, want 2 and 3", ids)
	}
	p.stop(t)
	p.check(t, consumeAll(t, c.Node(2).Addr, topic))
}

func mustDescribeQuorum(t *testing.T, cl kmsg.Requestor) (*kmsg.DescribeQuorumResponse, kmsg.DescribeQuorumResponseTopicPartition) {
	t.Helper()
	var err error
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		resp, p, err2 := describeQuorum(testContext(t, 10*time.Second), cl)
		if err = err2; err == nil {
			return resp, p
		}
		if time.Now().After(deadline) {
			t.Fatalf("DescribeQuorum: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func replicaIDs(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) []int32 {
	out := make([]int32, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.ReplicaID)
	}
	return out
}

// addRaftVoter asks for node to be made a voter at its controller address
// listener (host:port).
func addRaftVoter(t *testing.T, cl kmsg.Requestor, clusterID *string, node int32, dir [16]byte, listener string) (int16, string) {
	t.Helper()
	host, port, err := net.SplitHostPort(listener)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.ClusterID, req.VoterID, req.VoterDirectoryID, req.TimeoutMillis = clusterID, node, dir, 10_000
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = controllerListener, host, uint16(p)
	req.Listeners = append(req.Listeners, l)
	resp, err := req.RequestWith(testContext(t, 20*time.Second), cl)
	if err != nil {
		t.Fatalf("AddRaftVoter(%d): %v", node, err)
	}
	return resp.ErrorCode, errorMessage(resp.ErrorMessage)
}

// waitAddRaftVoter adds node at its controller listener (host:port),
// asking again while the controller answers that the node is not ready (it
// has not caught up or registered yet).
func waitAddRaftVoter(t *testing.T, cl kmsg.Requestor, clusterID *string, node int32, dir [16]byte, listener string) {
	t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		code, msg := addRaftVoter(t, cl, clusterID, node, dir, listener)
		switch {
		case code == 0:
			return
		case code != kerr.RequestTimedOut.Code && code != kerr.NotController.Code || time.Now().After(deadline):
			t.Fatalf("AddRaftVoter(%d) answered %d (%s)", node, code, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func removeRaftVoter(t *testing.T, cl *kgo.Client, node int32, dir [16]byte) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID = node, dir
	resp, err := req.RequestWith(testContext(t, 40*time.Second), cl)
	if err != nil {
		t.Fatalf("RemoveRaftVoter(%d): %v", node, err)
	}
	return resp.ErrorCode, errorMessage(resp.ErrorMessage)
}

func errorMessage(m *string) string {
	if m == nil {
		return ""
	}
	return *m
}

// metaPropertiesDirectoryID reads the directory.id of b's meta.properties,
// where Kafka's tools look for it.
func metaPropertiesDirectoryID(t *testing.T, b *Broker) [16]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.Dir, "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "directory.id="); ok {
			raw, err := base64.RawURLEncoding.DecodeString(v)
			if err != nil || len(raw) != 16 {
				t.Fatalf("directory.id %q: %v", v, err)
			}
			return [16]byte(raw)
		}
	}
	t.Fatalf("no directory.id in %s:\n%s", b.Dir, data)
	return [16]byte{}
}

// TestSingleNodeGrowsIntoACluster: from `strata serve` alone to a cluster.
// A single node takes acks=all writes and stops; started again with
// controller.quorum.voters naming only itself, it is the one voter of a
// cluster that two new nodes join, and AddRaftVoter makes them voters.
// What the single node acknowledged is all there; with the first node
// killed, the two others elect and serve a three-replica topic.
func TestSingleNodeGrowsIntoACluster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	single := startBroker(t, dir)
	const alone, grown = "written-alone", "written-grown"
	createTopic(t, newAdmin(t, single.Addr), alone, 2, nil)
	p := startAckedProducer(t, newClient(t, single.Addr, ackedProducerOpts...), alone, 2)
	p.waitTotalAcked(t, 400)
	p.stop(t)
	single.Stop()

	c := startClusterOn(t, 3, 1, map[int32]string{1: dir})
	cl3 := newClient(t, c.Node(3).Addr)
	_, q := mustDescribeQuorum(t, cl3)
	dirs := map[int32][16]byte{}
	for _, r := range q.Observers {
		dirs[r.ReplicaID] = r.ReplicaDirectoryID
	}
	waitAddRaftVoter(t, cl3, nil, 2, dirs[2], c.Node(2).Listeners[controllerListener])
	waitAddRaftVoter(t, cl3, nil, 3, dirs[3], c.Node(3).Listeners[controllerListener])
	c.requireQuorumDescribed(2)
	p.check(t, consumeAll(t, c.Node(2).Addr, alone))

	adm := c.newAdmin()
	c.createTopic(adm, grown, 3, 3, nil)
	c.waitISR(adm, grown, 3)
	p = startAckedProducer(t, newClient(t, c.Node(2).Addr, ackedProducerOpts...), grown, 3)
	p.waitTotalAcked(t, 300)
	c.Node(1).Kill()
	acked := p.totalAcked()
	t.Logf("killed node 1, once the single node, with %d records acknowledged", acked)
	p.waitTotalAcked(t, acked+300)
	p.stop(t)
	p.check(t, consumeAll(t, c.Node(3).Addr, grown))
	waitOutput(t, "node 1 (correcting its in-memory address when it took office)", c.Node(1).output.String,
		"this voter's address in the metadata quorum is now its controller listener")
}

// TestClusterVoterComesBackAtAnotherAddress: a voter restarted with its data
// on another controller port (its controller.quorum.voters entry updated on
// it alone) is moved by the controller on the strength of its directory id
// (Kafka's UpdateRaftVoter), and its vote counts from there: with another
// voter killed, it and the third keep an acks=all producer going.
func TestClusterVoterComesBackAtAnotherAddress(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, partitions = "voter-moved", 3
	c.createTopic(adm, topic, partitions, 3, nil)
	c.waitISR(adm, topic, 3)
	p := startAckedProducer(t, c.newClient(ackedProducerOpts...), topic, partitions)
	p.waitTotalAcked(t, 300)

	moved := c.Node(3)
	moved.Stop()
	old := moved.Listeners[controllerListener]
	moved.Listeners[controllerListener] = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePorts(t, 1)[0]))
	for i, o := range moved.overrides {
		if strings.HasPrefix(o, "controller.quorum.voters=") {
			moved.overrides[i] = strings.Replace(o, "3@"+old, "3@"+moved.Listeners[controllerListener], 1)
		}
	}
	moved.Restart()
	c.waitBrokers(1, 2, 3)
	c.waitISR(adm, topic, 3)
	// The controller moves it; had node 3 been elected first, it would
	// have moved its own entry on taking office.
	if out := c.Node(1).output.String() + c.Node(2).output.String(); !strings.Contains(out, "moved a voter of the metadata quorum") &&
		!strings.Contains(moved.output.String(), "this voter's address in the metadata quorum is now its controller listener") {
		t.Fatal("no controller said it moved voter 3")
	}

	acked := p.totalAcked()
	c.Node(1).Kill()
	t.Logf("killed node 1 with %d records acknowledged", acked)
	p.waitTotalAcked(t, acked+300)
	p.stop(t)
	p.check(t, consumeAll(t, moved.Addr, topic))
}
