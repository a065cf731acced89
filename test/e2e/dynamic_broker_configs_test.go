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
	ctx := testContext(t, clientDeliveryTimeout)
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
		resp, err := adm.AlterBrokerConfigs(ctx, configs, brokers...)
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
	ctx = testContext(t, clientDeliveryTimeout)
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

// brokerNodeID is the node id of the only broker adm talks to.
func brokerNodeID(t *testing.T, adm *kadm.Client) int32 {
	t.Helper()
	meta, err := adm.BrokerMetadata(testContext(t, clientDeliveryTimeout))
	if err != nil || len(meta.Brokers) != 1 {
		t.Fatalf("broker metadata: %+v, %v", meta.Brokers, err)
	}
	return meta.Brokers[0].NodeID
}
