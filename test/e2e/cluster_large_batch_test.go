package e2e

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterLargeBatchReplicates: a batch larger than the broker's
// message.max.bytes plus replica.fetch.response.max.bytes, which a topic's
// own max.message.bytes allows, replicates to every in-sync replica (the
// followers read a fetch response that size) and is acknowledged with
// acks=all.
func TestClusterLargeBatchReplicates(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := newAdmin(t, c.Node(1).Addr)
	const topic, size = "large-batch", 14 << 20 // over 1 MiB + 10 MiB + 1 MiB
	c.createTopic(adm, topic, 1, 3, map[string]*string{"max.message.bytes": kadm.StringPtr("20000000")})
	c.waitISR(adm, topic, 3)
	value := make([]byte, size)
	rand.Read(value) // incompressible: the batch stays this large
	producer := newClient(t, c.Node(1).Addr, kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchMaxBytes(20_000_000), kgo.MaxBufferedBytes(64<<20))
	produceSync(t, producer, &kgo.Record{Value: value})
	got := consumeAll(t, c.Node(2).Addr, topic)[0]
	if len(got) != 1 || !bytes.Equal(got[0].Value, value) {
		t.Fatalf("read back %d records, want the one of %d bytes", len(got), size)
	}
}
