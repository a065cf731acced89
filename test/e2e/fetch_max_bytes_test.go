package e2e

import (
	"crypto/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetch.max.bytes bounds what one consumer fetch answers whatever its
// max_bytes asks (KIP-541), but still sends the first batch whole.
func TestFetchMaxBytesBoundsAConsumerFetch(t *testing.T) {
	t.Parallel()
	const limit = 4096
	b := startBroker(t, t.TempDir(), "fetch.max.bytes=4096")
	adm := newAdmin(t, b.Addr)
	const topic = "fetch-max-bytes"
	createTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for range 10 { // ten batches of about 1.5 KB, incompressible
		v := make([]byte, 1500)
		rand.Read(v)
		produceSync(t, cl, &kgo.Record{Topic: topic, Value: v})
	}
	big := make([]byte, 3*limit)
	rand.Read(big) // incompressible
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: big})

	topics, err := adm.ListTopics(testContext(t, clientDeliveryTimeout), topic)
	if err != nil || topics.Error() != nil {
		t.Fatalf("listing %s: %v / %v", topic, err, topics.Error())
	}
	fetch := func(offset int64) []byte {
		t.Helper()
		req := kmsg.NewPtrFetchRequest() // the client sends its newest version: topic id and name both set
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 100, 1, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topics[topic].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = 0, offset, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(testContext(t, clientDeliveryTimeout), cl.Broker(int(brokerNodeID(t, adm))))
		if err != nil {
			t.Fatalf("fetch at %d: %v", offset, err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("fetch at %d: error %d", offset, p.ErrorCode)
		}
		return p.RecordBatches
	}
	if got := len(fetch(0)); got == 0 || got > limit {
		t.Fatalf("a fetch asking for 1 MiB of 15 KB got %d bytes; fetch.max.bytes is %d", got, limit)
	}
	if got := len(fetch(10)); got <= limit {
		t.Fatalf("a batch of %d bytes over fetch.max.bytes came back as %d bytes; it must come whole", 3*limit, got)
	}
}
