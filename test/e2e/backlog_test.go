package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLargeBacklogConsume reads a backlog big enough that fetches are
// served from file regions (sendfile), with clients that use flexible
// (franz-go, kcat) and non-flexible (sarama, kafka-go) fetch versions, and
// checks every record.
func TestLargeBacklogConsume(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "log.segment.bytes=1048576")
	const topic, n = "backlog", 6000
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	ctx := testContext(t, time.Minute)
	want := make([][]byte, n)
	for i := range n {
		want[i] = bytes.Repeat([]byte{byte('a' + i%26)}, 700)
		copy(want[i], fmt.Sprintf("%08d", i))
		cl.Produce(ctx, &kgo.Record{Value: want[i]}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("franz-go", func(t *testing.T) {
		got := consumeAll(t, b.Addr, topic)[0]
		requireValues(t, len(got), func(i int) []byte { return got[i].Value }, want)
	})
	t.Run("sarama", func(t *testing.T) {
		cfg := saramaConfig()
		c, err := sarama.NewConsumer([]string{b.Addr}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		got := make([][]byte, 0, n)
		timeout := time.After(time.Minute)
		for len(got) < n {
			select {
			case m := <-pc.Messages():
				got = append(got, m.Value)
			case err := <-pc.Errors():
				t.Fatal(err)
			case <-timeout:
				t.Fatalf("sarama read %d of %d records", len(got), n)
			}
		}
		requireValues(t, len(got), func(i int) []byte { return got[i] }, want)
	})
	t.Run("kafka-go", func(t *testing.T) {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr}, Topic: topic, Partition: 0, MaxBytes: 4 << 20, MaxWait: time.Second})
		defer r.Close()
		rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		got := make([][]byte, 0, n)
		for len(got) < n {
			m, err := r.ReadMessage(rctx)
			if err != nil {
				t.Fatalf("kafka-go read %d of %d: %v", len(got), n, err)
			}
			got = append(got, m.Value)
		}
		requireValues(t, len(got), func(i int) []byte { return got[i] }, want)
	})
	t.Run("kcat", func(t *testing.T) {
		if _, err := exec.LookPath("kcat"); err != nil {
			t.Skip("kcat is not installed (apt-get install kcat)")
		}
		out, err := exec.Command("timeout", "60", "kcat", "-C", "-b", b.Addr, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o %S\n").Output()
		if err != nil {
			t.Fatalf("kcat: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != n || lines[n-1] != fmt.Sprintf("%d 700", n-1) {
			t.Fatalf("kcat read %d records, last %q", len(lines), lines[len(lines)-1])
		}
	})
}

func requireValues(t *testing.T, got int, value func(int) []byte, want [][]byte) {
	t.Helper()
	if got != len(want) {
		t.Fatalf("read %d records, want %d", got, len(want))
	}
	for i := range want {
		if !bytes.Equal(value(i), want[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
}
