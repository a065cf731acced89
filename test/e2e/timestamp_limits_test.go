package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTimestampLimits: message.timestamp.before.max.ms and after.max.ms
// refuse a record stamped too far from the broker's clock with
// INVALID_TIMESTAMP, as Kafka's LogValidator does; the deprecated
// message.timestamp.difference.max.ms bounds both sides when they are
// unset.
func TestTimestampLimits(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	hour := kadm.StringPtr("3600000")
	for _, tc := range []struct {
		topic   string
		configs map[string]*string
		ts      time.Time
		want    error
	}{
		{"ts-before", map[string]*string{"message.timestamp.before.max.ms": hour}, time.Now().Add(-2 * time.Hour), kerr.InvalidTimestamp},
		{"ts-before-ok", map[string]*string{"message.timestamp.before.max.ms": hour}, time.Now().Add(-30 * time.Minute), nil},
		{"ts-after", map[string]*string{"message.timestamp.after.max.ms": hour}, time.Now().Add(2 * time.Hour), kerr.InvalidTimestamp},
		{"ts-difference", map[string]*string{"message.timestamp.difference.max.ms": hour}, time.Now().Add(2 * time.Hour), kerr.InvalidTimestamp},
		{"ts-unlimited", nil, time.Now().Add(-48 * time.Hour), nil},
	} {
		t.Run(tc.topic, func(t *testing.T) {
			createTopic(t, adm, tc.topic, 1, tc.configs)
			cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(tc.topic), kgo.RecordRetries(0),
				kgo.RecordDeliveryTimeout(72*time.Hour)) // kgo times a record from its timestamp
			err := cl.ProduceSync(testContext(t, clientDeliveryTimeout), &kgo.Record{Value: []byte("v"), Timestamp: tc.ts}).FirstErr()
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("record stamped %v: %v, want %v", time.Until(tc.ts).Round(time.Minute), err, tc.want)
			}
		})
	}
}
