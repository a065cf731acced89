package broker

import (
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

// TestOptionsValidate: the ISR check runs every half of
// replica.lag.time.max.ms, so that must be at least 2 ms; the high
// watermark checkpoint interval may be left zero (Kafka's default) but
// not negative.
func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Options)
		ok     bool
	}{
		{"as the tests run", func(*Options) {}, true},
		{"lag of 2 ms", func(o *Options) { o.ReplicaLagTimeMax = 2 * time.Millisecond }, true},
		{"lag of 1 ms", func(o *Options) { o.ReplicaLagTimeMax = time.Millisecond }, false},
		{"checkpoint interval by default", func(o *Options) { o.HWCheckpointInterval = 0 }, true},
		{"negative checkpoint interval", func(o *Options) { o.HWCheckpointInterval = -time.Second }, false},
	} {
		o := idleTestOptions(t, nil, partition.Config{})
		o.Meta = &overrideMeta{}
		tc.change(&o)
		if err := o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestHWCheckpointInterval: a zero interval is Kafka's default, 5 s.
func TestHWCheckpointInterval(t *testing.T) {
	for _, tc := range []struct{ set, want time.Duration }{{0, 5 * time.Second}, {time.Minute, time.Minute}} {
		b := &Broker{opts: Options{HWCheckpointInterval: tc.set}}
		if got := b.hwCheckpointInterval(); got != tc.want {
			t.Errorf("HWCheckpointInterval %v: %v, want %v", tc.set, got, tc.want)
		}
	}
}
