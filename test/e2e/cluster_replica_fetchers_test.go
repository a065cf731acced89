package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterReplicaFetchersChangeAtRunTime: num.replica.fetchers is a
// dynamic broker config, as in Kafka: set cluster-wide on a running
// three-node cluster, every node moves its followed partitions to their
// new fetchers, and every acks=all record produced before and after the
// change is there once, in order; a change over double the running count
// is refused.
func TestClusterReplicaFetchersChangeAtRunTime(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, partitions = "dyn-fetchers", 6
	c.createTopic(adm, topic, partitions, 3, nil)
	c.waitISR(adm, topic, 3)
	producer := c.newClient(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produced := 0
	produceRound := func() {
		t.Helper()
		var records []*kgo.Record
		for p := range int32(partitions) {
			records = append(records, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, produced))})
		}
		produceSync(t, producer, records...)
		produced++
	}
	for range 5 {
		produceRound()
	}
	set := func(v string) error {
		return alterBrokerConfigs(t, adm, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "num.replica.fetchers", Value: kadm.StringPtr(v)}})
	}
	if err := set("2"); err != nil {
		t.Fatalf("num.replica.fetchers=2 cluster-wide: %v", err)
	}
	for _, id := range c.ids() {
		waitFor(t, 30*time.Second, fmt.Sprintf("node %d to take 2 replica fetchers", id), func() bool {
			return strings.Contains(c.Node(id).output.String(), "changed replica fetchers")
		})
	}
	for range 5 {
		produceRound()
	}
	c.waitISR(adm, topic, 3)
	if err := set("5"); err == nil {
		t.Fatal("5 replica fetchers over 2 running was taken")
	}
	for p, rs := range consumeAll(t, c.Node(1).Addr, topic) {
		if len(rs) != produced {
			t.Fatalf("partition %d holds %d records, want %d", p, len(rs), produced)
		}
		for i, r := range rs {
			if want := fmt.Sprintf("%d-%d", p, i); string(r.Value) != want {
				t.Fatalf("partition %d offset %d is %q, want %q", p, i, r.Value, want)
			}
		}
	}
}
