package e2e

import (
	"bytes"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
)

// The tiered tests read a topic back with every Go client, not only
// franz-go: each has its own fetch loop (sizes, retries, how it treats a
// batch that starts before the offset it asked for), and each must read
// across the local/remote seam without noticing it.

// checkAllClients reads partition 0 of topic from its earliest offset with
// franz-go, sarama and kafka-go, and compares each record, byte for byte
// and offset for offset, with want.
func checkAllClients(t *testing.T, addr, topic string, want [][]byte) {
	t.Helper()
	checkAll(t, addr, topic, want)
	checkAllSarama(t, addr, topic, want)
	checkAllKafkaGo(t, addr, topic, want)
}

// checkAllSarama is checkAll with a sarama partition consumer.
func checkAllSarama(t *testing.T, addr, topic string, want [][]byte) {
	t.Helper()
	pc := saramaFromOldest(t, addr, topic)
	deadline := time.After(consumeTimeout)
	for i := range want {
		select {
		case got := <-pc.Messages():
			requireTieredRecord(t, "sarama", i, got.Offset, got.Value, want[i])
		case err := <-pc.Errors():
			t.Fatalf("sarama consumer after %d records: %v", i, err)
		case <-deadline:
			t.Fatalf("sarama consumer read %d of %d records in %v", i, len(want), consumeTimeout)
		}
	}
}

// saramaFromOldest consumes partition 0 of topic from its oldest offset;
// the test's cleanup closes the consumer.
func saramaFromOldest(t *testing.T, addr, topic string) sarama.PartitionConsumer {
	t.Helper()
	consumer, err := sarama.NewConsumer([]string{addr}, saramaConfig())
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	t.Cleanup(func() { consumer.Close() })
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("sarama ConsumePartition: %v", err)
	}
	t.Cleanup(pc.AsyncClose)
	return pc
}

// checkAllKafkaGo is checkAll with a kafka-go partition Reader.
func checkAllKafkaGo(t *testing.T, addr, topic string, want [][]byte) {
	t.Helper()
	r := newKafkaGoReader(addr, topic)
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, consumeTimeout)
	for i := range want {
		got, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("kafka-go ReadMessage after %d records: %v", i, err)
		}
		requireTieredRecord(t, "kafka-go", i, got.Offset, got.Value, want[i])
	}
}

func requireTieredRecord(t *testing.T, client string, i int, offset int64, got, want []byte) {
	t.Helper()
	if offset != int64(i) || !bytes.Equal(got, want) {
		t.Fatalf("%s: record %d at offset %d, value equal %v", client, i, offset, bytes.Equal(got, want))
	}
}
