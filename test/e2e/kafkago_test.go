package e2e

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

var kafkaGoCodecs = []struct {
	name  string
	codec kafka.Compression
}{
	{"none", 0},
	{"gzip", kafka.Gzip},
	{"snappy", kafka.Snappy},
	{"lz4", kafka.Lz4},
	{"zstd", kafka.Zstd},
}

// TestKafkaGoRoundTrip writes with a segmentio/kafka-go Writer (acks=all,
// every codec) and reads back with a partition Reader from the first offset.
func TestKafkaGoRoundTrip(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)

	for _, cc := range kafkaGoCodecs {
		t.Run(cc.name, func(t *testing.T) {
			t.Parallel()
			topic := "kafkago-" + cc.name
			createTopic(t, adm, topic, 1, nil)

			transport := &kafka.Transport{
				DialTimeout: clientDialTimeout,
				IdleTimeout: 5 * time.Second,
				ClientID:    "strata-e2e-kafkago",
			}
			defer transport.CloseIdleConnections()
			w := &kafka.Writer{
				Addr:         kafka.TCP(b.Addr),
				Topic:        topic,
				Balancer:     &kafka.RoundRobin{},
				RequiredAcks: kafka.RequireAll,
				Compression:  cc.codec,
				BatchSize:    100,
				BatchTimeout: 10 * time.Millisecond,
				ReadTimeout:  15 * time.Second,
				WriteTimeout: 15 * time.Second,
				MaxAttempts:  5,
				Transport:    transport,
			}
			const n = 300
			base := pastBase()
			msgs := make([]kafka.Message, n)
			for i := range msgs {
				msgs[i] = kafka.Message{
					Key:     fmt.Appendf(nil, "key-%d", i),
					Value:   []byte(value(topic, i) + " kafka-go payload kafka-go payload"),
					Headers: []kafka.Header{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}},
					Time:    base.Add(time.Duration(i) * time.Millisecond),
				}
			}
			ctx := testContext(t, 45*time.Second)
			for start := 0; start < n; start += 100 {
				if err := w.WriteMessages(ctx, msgs[start:start+100]...); err != nil {
					t.Fatalf("kafka-go WriteMessages: %v", err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatalf("closing kafka-go writer: %v", err)
			}

			r := newKafkaGoReader(b.Addr, topic)
			defer r.Close()
			if err := r.SetOffset(kafka.FirstOffset); err != nil {
				t.Fatal(err)
			}
			for i, want := range msgs {
				got, err := r.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("kafka-go ReadMessage after %d messages: %v", i, err)
				}
				if got.Offset != int64(i) {
					t.Fatalf("message %d has offset %d", i, got.Offset)
				}
				if !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) {
					t.Fatalf("message %d is %q=%q, want %q=%q", i, got.Key, got.Value, want.Key, want.Value)
				}
				if len(got.Headers) != 1 || got.Headers[0].Key != "i" || !bytes.Equal(got.Headers[0].Value, want.Headers[0].Value) {
					t.Fatalf("message %d headers %v, want %v", i, got.Headers, want.Headers)
				}
				if got.Time.UnixMilli() != want.Time.UnixMilli() {
					t.Fatalf("message %d timestamp %d, want %d", i, got.Time.UnixMilli(), want.Time.UnixMilli())
				}
			}
		})
	}
}

// newKafkaGoReader returns a kafka-go Reader of partition 0 of topic that
// returns as soon as a record is there (MinBytes 1, MaxWait 250 ms);
// edits change its configuration.
func newKafkaGoReader(addr, topic string, edits ...func(*kafka.ReaderConfig)) *kafka.Reader {
	cfg := kafka.ReaderConfig{
		Brokers:   []string{addr},
		Topic:     topic,
		Partition: 0,
		MinBytes:  1,
		MaxBytes:  1 << 20,
		MaxWait:   250 * time.Millisecond,
		Dialer:    &kafka.Dialer{Timeout: clientDialTimeout, ClientID: "strata-e2e-kafkago"},
	}
	for _, edit := range edits {
		edit(&cfg)
	}
	return kafka.NewReader(cfg)
}

// TestKafkaGoClientFetch reads with kafka-go's Client.Fetch, which sends
// session id -1 with epoch -1: a full fetch outside any session.
func TestKafkaGoClientFetch(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic = "kafkago-client-fetch"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)
	cl := newClient(t, b.Addr)
	for i := range 3 {
		produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte(value("f", i))})
	}
	transport := &kafka.Transport{DialTimeout: clientDialTimeout, IdleTimeout: 5 * time.Second, ClientID: "strata-e2e-kafkago"}
	defer transport.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(b.Addr), Timeout: 10 * time.Second, Transport: transport}
	resp, err := c.Fetch(testContext(t, 10*time.Second), &kafka.FetchRequest{Topic: topic, Partition: 0, Offset: 1, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil || resp.HighWatermark != 3 {
		t.Fatalf("Fetch: error %v, high watermark %d", resp.Error, resp.HighWatermark)
	}
	for i := 1; i < 3; i++ {
		r, err := resp.Records.ReadRecord()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		v, _ := io.ReadAll(r.Value)
		if r.Offset != int64(i) || string(v) != value("f", i) {
			t.Fatalf("record at offset %d is %q, want %q at %d", r.Offset, v, value("f", i), i)
		}
	}
}
