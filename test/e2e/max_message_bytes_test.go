package e2e

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestZeroMaxMessageBytes: max.message.bytes=0 is a valid topic config, as
// in Kafka: the topic's partition opens and refuses every batch with
// MESSAGE_TOO_LARGE, and takes records once the limit is raised.
func TestZeroMaxMessageBytes(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, "zero-max", 1, map[string]*string{"max.message.bytes": kadm.StringPtr("0")})
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic("zero-max"), kgo.RecordRetries(0))
	err := cl.ProduceSync(testContext(t, clientDeliveryTimeout), &kgo.Record{Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("produce under max.message.bytes=0: %v, want MESSAGE_TOO_LARGE", err)
	}
	resp, err := adm.AlterTopicConfigs(testContext(t, clientDeliveryTimeout),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kadm.StringPtr("1048588")}}, "zero-max")
	if err == nil {
		_, err = resp.On("zero-max", nil)
	}
	if err != nil {
		t.Fatalf("raising max.message.bytes: %v", err)
	}
	produceSync(t, newClient(t, b.Addr, kgo.DefaultProduceTopic("zero-max")), &kgo.Record{Value: []byte("v")})
}
