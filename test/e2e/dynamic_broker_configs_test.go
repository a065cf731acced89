package e2e

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDynamicBrokerConfigs: a broker config that is a topic default,
// changed at run time through kadm (kafka-configs --entity-type brokers),
// applies to the running partitions at once: the cluster-wide default,
// then this broker's own value over it, both kept across a restart; a
// static config is refused with INVALID_REQUEST.
func TestDynamicBrokerConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "dyn", 1, nil)
	node := brokerNodeID(t, adm)
	stamp := time.Now().Add(-48 * time.Hour).Truncate(time.Millisecond)

	// produceAndRead produces one record stamped two days ago and says
	// whether it reads back with that stamp (CreateTime) or a new one
	// (LogAppendTime).
	produceAndRead := func(what string) (logAppendTime bool) {
		t.Helper()
		cl := newClient(t, b.Addr, kgo.DefaultProduceTopic("dyn"),
			kgo.RecordDeliveryTimeout(72*time.Hour)) // kgo times a record from its timestamp
		produceSync(t, cl, &kgo.Record{Value: []byte(what), Timestamp: stamp})
		records := consumeAll(t, b.Addr, "dyn")[0]
		last := records[len(records)-1]
		if string(last.Value) != what {
			t.Fatalf("%s: read %q last", what, last.Value)
		}
		return !last.Timestamp.Equal(stamp)
	}
	alter := func(brokers []int32, configs ...kadm.AlterConfig) error {
		t.Helper()
		return alterBrokerConfigs(t, adm, configs, brokers...)
	}
	set := func(k, v string) kadm.AlterConfig {
		return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(v)}
	}

	if produceAndRead("static") {
		t.Fatal("a record got LogAppendTime before any dynamic config")
	}
	if err := alter(nil, set("log.message.timestamp.type", "LogAppendTime")); err != nil {
		t.Fatalf("cluster-wide LogAppendTime: %v", err)
	}
	if !produceAndRead("cluster-wide") {
		t.Fatal("the cluster-wide log.message.timestamp.type=LogAppendTime did not apply to the running topic")
	}
	if err := alter([]int32{node}, set("log.message.timestamp.type", "CreateTime")); err != nil {
		t.Fatalf("this broker's CreateTime: %v", err)
	}
	if produceAndRead("this broker's") {
		t.Fatal("this broker's log.message.timestamp.type=CreateTime did not win over the cluster-wide default")
	}

	b.Stop()
	b.Restart()
	adm = newAdmin(t, b.Addr)
	ctx := testContext(t, clientDeliveryTimeout)
	if produceAndRead("after a restart") {
		t.Fatal("after a restart, this broker's CreateTime no longer wins")
	}
	configs, err := adm.DescribeBrokerConfigs(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := configs.On(strconv.Itoa(int(node)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var described kadm.Config
	for _, c := range rc.Configs {
		if c.Key == "log.message.timestamp.type" {
			described = c
		}
	}
	if described.MaybeValue() != "CreateTime" || described.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("log.message.timestamp.type described as %q from %v, want CreateTime from DYNAMIC_BROKER_CONFIG", described.MaybeValue(), described.Source)
	}
	if err := alter([]int32{node}, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "log.message.timestamp.type"}); err != nil {
		t.Fatalf("deleting this broker's value: %v", err)
	}
	if !produceAndRead("cluster-wide again") {
		t.Fatal("with this broker's value deleted, the cluster-wide LogAppendTime did not apply")
	}

	if err := alter(nil, set("num.partitions", "3")); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("num.partitions set at run time: %v, want INVALID_REQUEST", err)
	}
}

// alterBrokerConfigs applies configs to the dynamic configs of brokers
// (none: the cluster-wide resource) with IncrementalAlterConfigs, and
// returns the first error.
func alterBrokerConfigs(t *testing.T, adm *kadm.Client, configs []kadm.AlterConfig, brokers ...int32) error {
	t.Helper()
	resp, err := adm.AlterBrokerConfigs(testContext(t, clientDeliveryTimeout), configs, brokers...)
	if err != nil {
		return err
	}
	for _, r := range resp {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// brokerNodeID is the node id of the only broker adm talks to.
func brokerNodeID(t *testing.T, adm *kadm.Client) int32 {
	t.Helper()
	meta, err := adm.BrokerMetadata(testContext(t, clientDeliveryTimeout))
	if err != nil || len(meta.Brokers) != 1 {
		t.Fatalf("broker metadata: %+v, %v", meta.Brokers, err)
	}
	return meta.Brokers[0].NodeID
}

// TestClusterDynamicBrokerConfigs: a cluster-wide default set through one
// node reaches the partitions every node leads, and a broker's own value,
// set through that broker, only its own.
func TestClusterDynamicBrokerConfigs(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := newAdmin(t, c.Node(1).Addr)
	const topic, count = "dyn-cluster", 6
	c.createTopic(adm, topic, count, 1, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
	leaders := c.waitPartitions(adm, topic, "led", func(p partitionState) bool { return p.Leader > 0 })
	stamp := time.Now().Add(-48 * time.Hour).Truncate(time.Millisecond)
	producer := newClient(t, c.Node(3).Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(72*time.Hour)) // kgo times a record from its timestamp

	// logAppendTimeOn produces one record stamped two days ago to every
	// partition and returns, by partition, whether the last record read
	// back got a new (LogAppendTime) stamp.
	logAppendTimeOn := func() map[int32]bool {
		t.Helper()
		var records []*kgo.Record
		for p := range int32(count) {
			records = append(records, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v"), Timestamp: stamp})
		}
		produceSync(t, producer, records...)
		out := map[int32]bool{}
		for p, rs := range consumeAll(t, c.Node(2).Addr, topic) {
			out[p] = !rs[len(rs)-1].Timestamp.Equal(stamp)
		}
		return out
	}
	alter := func(via *kadm.Client, v string, brokers ...int32) {
		t.Helper()
		set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.message.timestamp.type", Value: kadm.StringPtr(v)}}
		if err := alterBrokerConfigs(t, via, set, brokers...); err != nil {
			t.Fatalf("log.message.timestamp.type=%s on %v: %v", v, brokers, err)
		}
	}

	// Each node applies a change when its metadata image has it: every
	// partition shows the change eventually, not at once.
	eventually := func(what string, want func(leader int32) bool) {
		t.Helper()
		var last map[int32]bool
		deadline := time.Now().Add(30 * time.Second)
		for {
			last = logAppendTimeOn()
			wrong := 0
			for p, lat := range last {
				if lat != want(leaders[p].Leader) {
					wrong++
				}
			}
			if wrong == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: LogAppendTime by partition %v (leaders %v), still wrong after 30 s", what, last, leaders)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	alter(adm, "LogAppendTime")
	eventually("the cluster-wide change", func(int32) bool { return true })
	alter(newAdmin(t, c.Node(2).Addr), "CreateTime", 2)
	onTwo := 0
	for _, p := range leaders {
		if p.Leader == 2 {
			onTwo++
		}
	}
	if onTwo == 0 || onTwo == count {
		t.Fatalf("%d of %d partitions are led by broker 2; the test needs some on it and some elsewhere", onTwo, count)
	}
	eventually("broker 2's own CreateTime", func(leader int32) bool { return leader != 2 })
}

// TestReplicationThrottleConfigs: the four configs kafka-reassign-partitions
// --throttle sets (KIP-73), through kadm as the tool does: the two rates on
// the broker, dynamically, and the two replica lists on the topic; both
// describe back; a malformed list is INVALID_CONFIG.
func TestReplicationThrottleConfigs(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	ctx := testContext(t, 30*time.Second)
	createTopic(t, adm, "moving", 2, nil)
	node := brokerNodeID(t, adm)
	rate := "10485760"
	if err := alterBrokerConfigs(t, adm, []kadm.AlterConfig{
		{Name: "leader.replication.throttled.rate", Value: &rate},
		{Name: "follower.replication.throttled.rate", Value: &rate},
	}, node); err != nil {
		t.Fatalf("setting the throttle rates: %v", err)
	}
	lists := "0:1,1:1"
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Name: "leader.replication.throttled.replicas", Value: &lists},
		{Name: "follower.replication.throttled.replicas", Value: &lists},
	}, "moving")
	if err == nil {
		err = topicAlterErr(resp, "moving")
	}
	if err != nil {
		t.Fatalf("setting the throttled replica lists: %v", err)
	}
	described, err := adm.DescribeBrokerConfigs(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range described {
		for _, c := range rc.Configs {
			if c.Key == "leader.replication.throttled.rate" && (c.Value == nil || *c.Value != rate) {
				t.Errorf("leader.replication.throttled.rate describes as %v", c.MaybeValue())
			}
		}
	}
	topics, err := adm.DescribeTopicConfigs(ctx, "moving")
	if err != nil {
		t.Fatal(err)
	}
	got, err := topics.On("moving", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range got.Configs {
		if c.Key == "follower.replication.throttled.replicas" {
			found = c.MaybeValue() == lists
		}
	}
	if !found {
		t.Errorf("follower.replication.throttled.replicas does not describe as %s: %+v", lists, got.Configs)
	}
	bad := "0-1"
	resp, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "leader.replication.throttled.replicas", Value: &bad}}, "moving")
	if err == nil {
		err = topicAlterErr(resp, "moving")
	}
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("a malformed replica list: %v, want INVALID_CONFIG", err)
	}
}

// topicAlterErr is the error AlterTopicConfigs got for topic.
func topicAlterErr(resp kadm.AlterConfigsResponses, topic string) error {
	r, err := resp.On(topic, nil)
	if err != nil {
		return err
	}
	return r.Err
}
