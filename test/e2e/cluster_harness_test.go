package e2e

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerListener is the listener that carries the metadata quorum's Raft
// between the nodes of a cluster (controller.listener.names' default). It is
// not a Kafka listener, so the ready line does not name it.
const controllerListener = "CONTROLLER"

const (
	// clusterReadyTimeout bounds a cluster node's wait for its ready line:
	// it first waits for a quorum leader and catches up with it. A failsafe,
	// not a performance bound: a race-built node on two cores is slow.
	clusterReadyTimeout = 60 * time.Second
	// clusterSettleTimeout bounds waits for the cluster to converge: brokers
	// unfenced, replicas in sync, a leader elected after a crash.
	clusterSettleTimeout = 60 * time.Second
)

// clusterDefaults are the broker configs every cluster node gets before the
// test's own overrides (the last of a repeated key wins). The session and
// heartbeat are short so that a crashed node is fenced within seconds.
var clusterDefaults = []string{
	"default.replication.factor=3",
	"min.insync.replicas=2",
	"offsets.topic.replication.factor=3",
	"transaction.state.log.replication.factor=3",
	"transaction.state.log.min.isr=2",
	"broker.session.timeout.ms=3000",
	"broker.heartbeat.interval.ms=300",
	"replica.lag.time.max.ms=5000",
	"replica.fetch.wait.max.ms=100",
	"group.initial.rebalance.delay.ms=0",
}

// Cluster is n strata processes that are together one cluster: every node is
// a broker and (but for startClusterOfVoters) a voter of the metadata quorum
// (controller.quorum.voters).
// Nodes[i] has node.id i+1; each node keeps its ports and data directory
// across Stop/Kill and Restart.
type Cluster struct {
	Nodes []*Broker
	t     *testing.T
	// voters is how many nodes, from node 1 on, controller.quorum.voters
	// names; the others are controllers outside it, which join as
	// non-voters until AddRaftVoter makes them voters.
	voters int
	// dataDirs are data directories some nodes start on (by node id)
	// instead of new ones.
	dataDirs map[int32]string
	// quorum is the config that makes the nodes one quorum, given the
	// controller addresses of the voters (node i+1 at voters[i]) and each
	// node before its start: controller.quorum.voters unless set.
	quorum func(voters []string, b *Broker) string
}

// startCluster starts n nodes at once (a lone voter never becomes ready: it
// waits for a quorum), waits for each one's ready line and then until each
// node's Metadata lists all n. Each override is
// "key=value", applied to every node after clusterDefaults, with "{node}"
// replaced by the node's id. When the test
// ends, the nodes still running get SIGTERM together and each must exit 0; a
// node that exited without being asked fails the test.
func startCluster(t *testing.T, n int, overrides ...string) *Cluster {
	t.Helper()
	return startClusterOfVoters(t, n, n, overrides...)
}

// startClusterOfVoters is startCluster with only nodes 1..voters in
// controller.quorum.voters; the others start as controllers outside it
// (process.roles=broker,controller), members of the quorum without a vote.
func startClusterOfVoters(t *testing.T, n, voters int, overrides ...string) *Cluster {
	t.Helper()
	return startClusterOn(t, n, voters, nil, overrides...)
}

// startClusterOn is startClusterOfVoters with the nodes of dataDirs (by
// node id) started on those data directories.
func startClusterOn(t *testing.T, n, voters int, dataDirs map[int32]string, overrides ...string) *Cluster {
	t.Helper()
	return startClusterWith(t, &Cluster{voters: voters, dataDirs: dataDirs}, n, overrides...)
}

// startClusterWith starts n nodes of c, its voters, data dirs and quorum
// config as set.
func startClusterWith(t *testing.T, c *Cluster, n int, overrides ...string) *Cluster {
	t.Helper()
	// The data directories live under one made before the cleanups below
	// are registered, so that it is removed only after the nodes stopped.
	parent := t.TempDir()
	c.t, c.Nodes = t, make([]*Broker, n)
	for i := range c.Nodes {
		c.Nodes[i] = &Broker{
			t:            t,
			output:       &syncBuffer{},
			names:        []string{"PLAINTEXT", controllerListener},
			readyTimeout: clusterReadyTimeout,
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, b := range c.Nodes {
				t.Logf("node %d output (%s, %s):\n%s", i+1, b.Addr, b.Dir, b.output.String())
			}
		}
	})
	t.Cleanup(c.stopAll)
	for attempt := 0; ; attempt++ {
		err := c.tryStart(filepath.Join(parent, fmt.Sprintf("attempt%d", attempt)), overrides)
		if err == nil {
			// A node is unfenced a heartbeat or two after its ready line.
			c.waitBrokers(c.ids()...)
			return c
		}
		if !errors.Is(err, errAddrInUse) || attempt >= bindRetries {
			t.Fatalf("starting a %d-node cluster: %v", n, err)
		}
		t.Logf("starting the cluster again on other ports: %v", err)
	}
}

// tryStart starts every node on fresh ports, with data directories under
// dir. If one fails, it kills the others: the voter set names every node's
// port, so a retry moves them all.
func (c *Cluster) tryStart(dir string, overrides []string) error {
	ports := freePorts(c.t, 2*len(c.Nodes))
	voters := make([]string, c.voters)
	addrs := make([]string, c.voters)
	for i := range voters {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])
		voters[i] = fmt.Sprintf("%d@%s", i+1, addrs[i])
	}
	for i, b := range c.Nodes {
		b.Listeners = map[string]string{
			"PLAINTEXT":        net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2*i])),
			controllerListener: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2*i+1])),
		}
		b.Addr = b.Listeners["PLAINTEXT"]
		b.Dir = filepath.Join(dir, fmt.Sprintf("node%d", i+1))
		if d, ok := c.dataDirs[int32(i+1)]; ok {
			b.Dir = d
		}
		if err := os.MkdirAll(b.Dir, 0o755); err != nil {
			c.t.Fatal(err)
		}
		quorum := "controller.quorum.voters=" + strings.Join(voters, ",")
		if c.quorum != nil {
			quorum = c.quorum(addrs, b)
		}
		b.overrides = append([]string{
			"node.id=" + strconv.Itoa(i+1),
			quorum,
		}, append(slices.Clone(clusterDefaults), perNode(overrides, i+1)...)...)
		if i >= c.voters {
			b.overrides = append(b.overrides, "process.roles=broker,controller")
		}
		fmt.Fprintf(b.output, "---- start: node.id %d, %v ----\n", i+1, b.Listeners)
	}

	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	failed := make(chan struct{})
	var failOnce sync.Once
	for i, b := range c.Nodes {
		wg.Go(func() {
			if errs[i] = b.start(); errs[i] != nil {
				failOnce.Do(func() { close(failed) })
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-failed:
		// The others wait for a quorum that may never form; end them
		// until every start has returned (one may not have exec'd yet).
		for {
			for _, b := range c.Nodes {
				b.abort()
			}
			select {
			case <-done:
			case <-time.After(100 * time.Millisecond):
				continue
			}
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		for _, b := range c.Nodes {
			b.abort()
			if _, exited := b.current(); exited != nil {
				<-exited
			}
			b.clear()
		}
		return err
	}
	return nil
}

// perNode is overrides for node id: "{node}" in one becomes the id (as in
// "broker.rack=rack-{node}").
func perNode(overrides []string, id int) []string {
	out := make([]string, len(overrides))
	for i, o := range overrides {
		out[i] = strings.ReplaceAll(o, "{node}", strconv.Itoa(id))
	}
	return out
}

// abort kills the current process, if any, without failing the test: it is
// for tearing down a cluster that did not start.
func (b *Broker) abort() {
	cmd, _ := b.current()
	if cmd == nil {
		return
	}
	b.setStopping()
	_ = cmd.Process.Kill()
}

// stopAll sends SIGTERM to every node still running, all at once (stopping
// them in turn would leave the last ones without a quorum majority), and
// checks each exits 0. A node that exited without being asked is an error.
func (c *Cluster) stopAll() {
	var wg sync.WaitGroup
	for i, b := range c.Nodes {
		if b.running() {
			wg.Go(b.Stop)
			continue
		}
		if cmd, _ := b.current(); cmd != nil && !b.stopRequested() {
			c.t.Errorf("node %d (%s) exited on its own during the test: %v%s", i+1, b.Addr, cmd.ProcessState, b.crashReport())
		}
	}
	wg.Wait()
}

// Node returns the node with the given node.id.
func (c *Cluster) Node(id int32) *Broker {
	c.t.Helper()
	if id < 1 || int(id) > len(c.Nodes) {
		c.t.Fatalf("no node with id %d in a %d-node cluster", id, len(c.Nodes))
	}
	return c.Nodes[id-1]
}

// ids returns every node's id.
func (c *Cluster) ids() []int32 {
	out := make([]int32, len(c.Nodes))
	for i := range c.Nodes {
		out[i] = int32(i + 1)
	}
	return out
}

// Addrs returns every node's Kafka listener address, for seeding a client
// that must survive any one node being down.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, b := range c.Nodes {
		out[i] = b.Addr
	}
	return out
}

// newClient returns a kgo client seeded with every node (see newClient).
func (c *Cluster) newClient(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	return newClient(c.t, c.Nodes[0].Addr, append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, opts...)...)
}

// newAdmin returns a kadm client seeded with every node.
func (c *Cluster) newAdmin() *kadm.Client {
	c.t.Helper()
	adm := kadm.NewClient(c.newClient())
	adm.SetTimeoutMillis(10_000)
	return adm
}

// waitBrokers waits until every running node's own Metadata answer lists
// exactly the nodes with the given ids (the live, unfenced brokers), each at
// its own listener's address. Each node is asked itself: their views of the
// quorum's log converge, but not at once.
func (c *Cluster) waitBrokers(ids ...int32) {
	c.t.Helper()
	want := make(map[int32]string, len(ids))
	for _, id := range ids {
		want[id] = c.Node(id).Addr
	}
	for i, b := range c.Nodes {
		if !b.running() {
			continue
		}
		// A client seeded with this node alone asks it through its seed
		// broker; a plain request could go to any broker it learnt of.
		seed := newClient(c.t, b.Addr).SeedBrokers()[0]
		var got map[int32]string
		var lastErr error
		deadline := time.Now().Add(clusterSettleTimeout)
		for {
			got, lastErr = brokersSeenBy(c.t, seed)
			if lastErr == nil && maps.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("node %d's Metadata lists brokers %v (last error %v) after %v, want %v", i+1, got, lastErr, clusterSettleTimeout, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// brokersSeenBy returns the brokers that one broker's Metadata answer lists:
// node id → host:port.
func brokersSeenBy(t *testing.T, b *kgo.Broker) (map[int32]string, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none: only the brokers
	resp, err := req.RequestWith(testContext(t, 10*time.Second), b)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]string, len(resp.Brokers))
	for _, rb := range resp.Brokers {
		out[rb.NodeID] = net.JoinHostPort(rb.Host, strconv.Itoa(int(rb.Port)))
	}
	return out, nil
}

// createTopic creates topic with the given partitions and replication factor
// and waits until Metadata shows all its partitions.
func (c *Cluster) createTopic(adm *kadm.Client, topic string, partitions int32, replicationFactor int16, configs map[string]*string) {
	c.t.Helper()
	resp, err := adm.CreateTopic(testContext(c.t, 15*time.Second), partitions, replicationFactor, configs, topic)
	if err != nil {
		c.t.Fatalf("creating topic %q: %v (%s)", topic, err, resp.ErrMessage)
	}
	requirePartitionCount(c.t, adm, topic, int(partitions))
}

// partitionState is one partition as a Metadata answer shows it.
type partitionState struct {
	Leader int32
	// Replicas are in the controller's order: the first is the preferred
	// leader.
	Replicas []int32
	ISR      []int32 // sorted
	Err      error
}

func (p partitionState) String() string {
	return fmt.Sprintf("leader %d replicas %v isr %v err %v", p.Leader, p.Replicas, p.ISR, p.Err)
}

// partitions returns every partition of topic as one Metadata answer shows
// it, or an error if that answer has none.
func partitions(t *testing.T, adm *kadm.Client, topic string) (map[int32]partitionState, error) {
	details, err := adm.ListTopicsWithInternal(testContext(t, 10*time.Second), topic)
	if err != nil {
		return nil, err
	}
	d, ok := details[topic]
	if !ok {
		return nil, fmt.Errorf("topic %q is not in the metadata", topic)
	}
	if d.Err != nil {
		return nil, fmt.Errorf("topic %q: %w", topic, d.Err)
	}
	out := make(map[int32]partitionState, len(d.Partitions))
	for p, pd := range d.Partitions {
		out[p] = partitionState{Leader: pd.Leader, Replicas: slices.Clone(pd.Replicas), ISR: sorted(pd.ISR), Err: pd.Err}
	}
	return out, nil
}

func sorted(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// waitPartitions polls Metadata until ok holds for every partition of topic
// at once (and there is at least one), and returns what it last saw; what
// says what ok waits for, for the failure message.
func (c *Cluster) waitPartitions(adm *kadm.Client, topic, what string, ok func(partitionState) bool) map[int32]partitionState {
	c.t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		parts, err := partitions(c.t, adm, topic)
		all := err == nil && len(parts) > 0
		for _, p := range parts {
			all = all && p.Err == nil && ok(p)
		}
		if all {
			return parts
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("topic %q: no %s within %v: %v (error %v)", topic, what, clusterSettleTimeout, parts, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitISR waits until every partition of topic has a leader and want
// replicas in its ISR.
func (c *Cluster) waitISR(adm *kadm.Client, topic string, want int) map[int32]partitionState {
	c.t.Helper()
	return c.waitPartitions(adm, topic, fmt.Sprintf("ISR of %d on every partition", want), func(p partitionState) bool {
		return p.Leader >= 1 && len(p.ISR) == want
	})
}

// leaderOf waits until partition of topic has a leader other than the nodes
// in not (the nodes known to be down), and returns its node id.
func (c *Cluster) leaderOf(adm *kadm.Client, topic string, partition int32, not ...int32) int32 {
	c.t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		parts, err := partitions(c.t, adm, topic)
		p, found := parts[partition]
		if err == nil && found && p.Err == nil && p.Leader >= 1 && !slices.Contains(not, p.Leader) {
			return p.Leader
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s/%d: no leader outside %v within %v: %v (error %v)", topic, partition, not, clusterSettleTimeout, p, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitPreferredLeaders waits until every partition of topic is led by its
// preferred replica (the first) with want replicas in its ISR.
func (c *Cluster) waitPreferredLeaders(adm *kadm.Client, topic string, want int) map[int32]partitionState {
	c.t.Helper()
	return c.waitPartitions(adm, topic, fmt.Sprintf("preferred leader and ISR of %d on every partition", want), func(p partitionState) bool {
		return len(p.Replicas) > 0 && p.Leader == p.Replicas[0] && len(p.ISR) == want
	})
}

// electPreferredLeaders asks for a preferred leader election of every
// partition of topic (ElectLeaders, PREFERRED) until the controller has done
// or needs none for each, then waits until Metadata shows the preferred
// leaders.
func (c *Cluster) electPreferredLeaders(adm *kadm.Client, topic string, want int) map[int32]partitionState {
	c.t.Helper()
	parts, err := partitions(c.t, adm, topic)
	if err != nil {
		c.t.Fatalf("electing preferred leaders of %q: %v", topic, err)
	}
	set := make(kadm.TopicsSet)
	set.Add(topic, slices.Collect(maps.Keys(parts))...)
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		results, err := adm.ElectLeaders(testContext(c.t, 10*time.Second), kadm.ElectPreferredReplica, set)
		var pending []string
		if err != nil {
			pending = append(pending, err.Error())
		}
		for _, r := range results[topic] {
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				pending = append(pending, fmt.Sprintf("%d: %v %s", r.Partition, r.Err, r.ErrMessage))
			}
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("electing preferred leaders of %q: still %v after %v", topic, pending, clusterSettleTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return c.waitPreferredLeaders(adm, topic, want)
}

// waitOffsetsAvailable waits until every partition of topic answers
// ListOffsets latest: a new leader answers OFFSET_NOT_AVAILABLE until its
// high watermark reaches the start of its epoch (as Kafka's does), which
// takes its followers' next fetches.
func (c *Cluster) waitOffsetsAvailable(adm *kadm.Client, topic string) {
	c.t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		ends, err := adm.ListEndOffsets(testContext(c.t, 10*time.Second), topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the end offsets of %q are not available within %v: %v", topic, clusterSettleTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
