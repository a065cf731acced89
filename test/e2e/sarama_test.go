package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

var saramaCodecs = []struct {
	name  string
	codec sarama.CompressionCodec
}{
	{"none", sarama.CompressionNone},
	{"gzip", sarama.CompressionGZIP},
	{"snappy", sarama.CompressionSnappy},
	{"lz4", sarama.CompressionLZ4},
	{"zstd", sarama.CompressionZSTD},
}

// TestSaramaRoundTrip produces with a sarama SyncProducer (acks=all, with and
// without idempotence, every codec) into auto-created topics and reads back
// with a sarama partition consumer from the oldest offset.
func TestSaramaRoundTrip(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())

	for _, idempotent := range []bool{false, true} {
		for _, cc := range saramaCodecs {
			name := fmt.Sprintf("%s/idempotent=%v", cc.name, idempotent)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				topic := fmt.Sprintf("sarama-%s-idem-%v", cc.name, idempotent)
				cfg := saramaConfig()
				cfg.Producer.Compression = cc.codec
				cfg.Producer.Idempotent = idempotent
				if idempotent {
					cfg.Net.MaxOpenRequests = 1
				}
				saramaRoundTrip(t, b.Addr, topic, cfg)
			})
		}
	}
}

func saramaRoundTrip(t *testing.T, addr, topic string, cfg *sarama.Config) {
	producer, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer func() {
		if err := producer.Close(); err != nil {
			t.Errorf("closing sarama producer: %v", err)
		}
	}()

	const n = 200
	base := pastBase()
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{
			Topic:     topic,
			Partition: 0,
			Key:       sarama.StringEncoder(fmt.Sprintf("key-%d", i)),
			Value:     sarama.StringEncoder(value(topic, i) + " sarama payload sarama payload"),
			Headers: []sarama.RecordHeader{
				{Key: []byte("i"), Value: fmt.Appendf(nil, "%d", i)},
				{Key: []byte("codec"), Value: []byte(cfg.Producer.Compression.String())},
			},
			Timestamp: base.Add(time.Duration(i%17) * 100 * time.Millisecond),
		}
	}
	// Two calls, so the partition holds more than one batch.
	for _, part := range [][]*sarama.ProducerMessage{msgs[:n/2], msgs[n/2:]} {
		if err := producer.SendMessages(part); err != nil {
			t.Fatalf("sarama SendMessages: %v", err)
		}
	}
	for i, m := range msgs {
		if m.Partition != 0 || m.Offset != int64(i) {
			t.Fatalf("message %d acknowledged at %d@%d, want 0@%d", i, m.Partition, m.Offset, i)
		}
	}

	consumer, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer func() {
		if err := consumer.Close(); err != nil {
			t.Errorf("closing sarama consumer: %v", err)
		}
	}()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("sarama ConsumePartition: %v", err)
	}
	defer pc.AsyncClose()

	deadline := time.After(consumeTimeout)
	for i := 0; i < n; i++ {
		select {
		case got := <-pc.Messages():
			requireSaramaMessage(t, msgs[i], got, i)
		case err := <-pc.Errors():
			t.Fatalf("sarama consumer after %d messages: %v", i, err)
		case <-deadline:
			t.Fatalf("sarama consumer read %d of %d messages in %v", i, n, consumeTimeout)
		}
	}
}

func requireSaramaMessage(t *testing.T, want *sarama.ProducerMessage, got *sarama.ConsumerMessage, i int) {
	t.Helper()
	wantKey, _ := want.Key.Encode()
	wantValue, _ := want.Value.Encode()
	if got.Offset != int64(i) {
		t.Fatalf("message %d has offset %d", i, got.Offset)
	}
	if !bytes.Equal(got.Key, wantKey) || !bytes.Equal(got.Value, wantValue) {
		t.Fatalf("message %d is %q=%q, want %q=%q", i, got.Key, got.Value, wantKey, wantValue)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Fatalf("message %d has %d headers, want %d", i, len(got.Headers), len(want.Headers))
	}
	for j, h := range want.Headers {
		if !bytes.Equal(got.Headers[j].Key, h.Key) || !bytes.Equal(got.Headers[j].Value, h.Value) {
			t.Fatalf("message %d header %d is %q=%q, want %q=%q", i, j, got.Headers[j].Key, got.Headers[j].Value, h.Key, h.Value)
		}
	}
	if got.Timestamp.UnixMilli() != want.Timestamp.UnixMilli() {
		t.Fatalf("message %d timestamp %d, want %d", i, got.Timestamp.UnixMilli(), want.Timestamp.UnixMilli())
	}
}

// saramaConfig is acks=all with manual partitioning and bounded timeouts.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "strata-e2e-sarama"
	cfg.Net.DialTimeout = clientDialTimeout
	cfg.Net.ReadTimeout = 15 * time.Second
	cfg.Net.WriteTimeout = 15 * time.Second
	cfg.Metadata.Retry.Max = 20
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Metadata.AllowAutoTopicCreation = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Timeout = 10 * time.Second
	cfg.Producer.Retry.Max = 10
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 500 * time.Millisecond
	return cfg
}
