package e2e

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
)

// TestTransactionsOtherClients: sarama writes a committed and an aborted
// transaction; sarama and kcat (librdkafka) read the topic with
// read_committed and get the committed records only. kafka-go is not
// asked: its Reader drops a fetch's aborted-transaction list and returns
// control records as messages (segmentio/kafka-go read.go, protocol/
// record_batch.go), against Apache Kafka as here; what it does honour, the
// last stable offset, is tested in TestOpenTransactionHoldsTheLastStableOffset.
func TestTransactionsOtherClients(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic = "txn-clients"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)

	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = "txn-clients-sarama"
	cfg.Net.MaxOpenRequests = 1
	producer, err := sarama.NewSyncProducer([]string{b.Addr}, cfg)
	if err != nil {
		t.Fatalf("sarama transactional producer: %v", err)
	}
	defer producer.Close()
	saramaTxn := func(commit bool, values ...string) {
		t.Helper()
		if err := producer.BeginTxn(); err != nil {
			t.Fatalf("sarama BeginTxn: %v", err)
		}
		var msgs []*sarama.ProducerMessage
		for _, v := range values {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(v)})
		}
		if err := producer.SendMessages(msgs); err != nil {
			t.Fatalf("sarama SendMessages in a transaction: %v", err)
		}
		end := producer.AbortTxn
		if commit {
			end = producer.CommitTxn
		}
		if err := end(); err != nil {
			t.Fatalf("sarama ending the transaction (commit %v): %v", commit, err)
		}
	}
	saramaTxn(true, "s1", "s2")
	saramaTxn(false, "aborted1", "aborted2")
	saramaTxn(true, "s3")
	writeSentinels(t, b.Addr, topic, 1)
	want := []string{"s1", "s2", "s3"}

	if got := saramaReadCommitted(t, b.Addr, topic); !slices.Equal(got, want) {
		t.Fatalf("sarama read_committed read %q, want %q", got, want)
	}
	if kcat, err := exec.LookPath("kcat"); err == nil {
		if got := kcatReadCommitted(t, kcat, b.Addr, topic); !slices.Equal(got, want) {
			t.Fatalf("kcat read_committed read %q, want %q", got, want)
		}
	} else {
		t.Log("kcat is not on PATH (CI installs it): its read_committed check is skipped")
	}
}

// saramaReadCommitted reads partition 0 with read_committed up to the sentinel.
func saramaReadCommitted(t *testing.T, addr, topic string) []string {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	consumer, err := sarama.NewConsumer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("sarama ConsumePartition: %v", err)
	}
	defer pc.AsyncClose()
	var out []string
	timeout := time.After(consumeTimeout)
	for {
		select {
		case m := <-pc.Messages():
			if string(m.Value) == sentinel {
				return out
			}
			out = append(out, string(m.Value))
		case err := <-pc.Errors():
			t.Fatalf("sarama read_committed: %v", err)
		case <-timeout:
			t.Fatalf("sarama read_committed did not reach the sentinel; read %q", out)
		}
	}
}

// kafkaGoReadCommitted is a kafka-go Reader of partition 0 with
// read_committed, from the first offset.
func kafkaGoReadCommitted(t *testing.T, addr, topic string) *kafka.Reader {
	t.Helper()
	r := newKafkaGoReader(addr, topic, func(c *kafka.ReaderConfig) { c.IsolationLevel = kafka.ReadCommitted })
	t.Cleanup(func() { r.Close() })
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		t.Fatal(err)
	}
	return r
}

// kafkaGoNext is the value of the next message r reads within d, false if
// none comes.
func kafkaGoNext(t *testing.T, r *kafka.Reader, d time.Duration) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	m, err := r.ReadMessage(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return "", false
	}
	if err != nil {
		t.Fatalf("kafka-go read_committed: %v", err)
	}
	return string(m.Value), true
}

// kcatReadCommitted reads partition 0 to its end with kcat, whose
// librdkafka reads committed records by default (said explicitly here).
func kcatReadCommitted(t *testing.T, kcat, addr, topic string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("kcat: %v\n%s", err, exit.Stderr)
	}
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	var values []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == sentinel {
			break
		}
		values = append(values, line)
	}
	return values
}
