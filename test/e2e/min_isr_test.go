package e2e

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMinInsyncReplicasRefusesAcksAll: on one broker a partition has one
// in-sync replica, so a topic with min.insync.replicas=2 refuses acks=all
// produces with NOT_ENOUGH_REPLICAS, as a one-broker Kafka does, and takes
// acks=1 ones.
func TestMinInsyncReplicasRefusesAcksAll(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "min-isr-2"
	createTopic(t, adm, topic, 1, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
	all := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.RecordRetries(0))
	err := all.ProduceSync(testContext(t, clientDeliveryTimeout), &kgo.Record{Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all with min.insync.replicas=2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	one := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	produceSync(t, one, &kgo.Record{Value: []byte("v")})
}
