package partition

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/record"
)

// message.timestamp.before.max.ms and after.max.ms: a CreateTime record
// further from the broker's clock is INVALID_TIMESTAMP, compressed or not;
// a LogAppendTime topic takes any.
func TestTimestampLimits(t *testing.T) {
	hour := MaxSkew{D: time.Hour, Set: true}
	now := testStart.UnixMilli()
	tests := []struct {
		name          string
		before, after MaxSkew
		logAppendTime bool
		tsMs          int64
		codec         record.Codec
		wantErr       bool
	}{
		{"unlimited", MaxSkew{}, MaxSkew{}, false, now - 100*3600_000, record.CodecNone, false},
		{"within before", hour, MaxSkew{}, false, now - 3600_000, record.CodecNone, false},
		{"too old", hour, MaxSkew{}, false, now - 3600_001, record.CodecNone, true},
		{"too old, compressed", hour, MaxSkew{}, false, now - 3600_001, record.CodecZstd, true},
		{"within after", MaxSkew{}, hour, false, now + 3600_000, record.CodecNone, false},
		{"too far ahead", MaxSkew{}, hour, false, now + 3600_001, record.CodecLZ4, true},
		{"before alone does not bound the future", hour, MaxSkew{}, false, now + 100*3600_000, record.CodecNone, false},
		{"LogAppendTime takes any", hour, hour, true, now - 100*3600_000, record.CodecNone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newEnv(t, func(o *Options) {
				o.Config.TimestampBefore, o.Config.TimestampAfter, o.Config.LogAppendTime = tt.before, tt.after, tt.logAppendTime
			}).open(t)
			_, _, err := p.Append(batch(t, spec{records: 3, tsMs: tt.tsMs, codec: tt.codec}), AcksLeader)
			if tt.wantErr {
				wantCode(t, err, record.CodeInvalidTimestamp)
			} else if err != nil {
				t.Fatalf("Append: %v", err)
			}
		})
	}
}

// min.insync.replicas above the one in-sync replica a partition has here
// refuses acks=all appends (NOT_ENOUGH_REPLICAS, nothing appended), not
// acks=1 ones, as Kafka does on a one-broker cluster.
func TestMinInsyncReplicas(t *testing.T) {
	p := newEnv(t, func(o *Options) { o.Config.MinInsyncReplicas = 2 }).open(t)
	if _, _, err := p.Append(batch(t, spec{}), AcksAll); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all with min.insync.replicas=2: %v, want ErrNotEnoughReplicas", err)
	}
	if end := p.Offsets().HighWatermark; end != 0 {
		t.Fatalf("a refused append moved the log to %d", end)
	}
	mustAppend(t, p, batch(t, spec{}), AcksLeader)
	q := newEnv(t, func(o *Options) { o.Config.MinInsyncReplicas = 1 }).open(t)
	mustAppend(t, q, batch(t, spec{}), AcksAll)
}
