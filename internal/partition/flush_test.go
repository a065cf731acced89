package partition

import (
	"testing"
	"time"
)

// TestFlushIfDueHonoursFlushMs: acks=1 data is synced once it is older than
// flush.ms, not before, and not at all without flush.ms.
func TestFlushIfDueHonoursFlushMs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		advance  []time.Duration
		synced   []bool
	}{
		{"flush.ms=1s", time.Second, []time.Duration{500 * time.Millisecond, 600 * time.Millisecond}, []bool{false, true}},
		{"flush.ms unset", 0, []time.Duration{time.Hour}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.Config.FlushInterval = tc.interval })
			p := e.open(t)
			defer p.Close()
			mustAppend(t, p, batch(t, spec{}), AcksLeader)
			if p.log.DurableEnd() == p.log.End() {
				t.Fatal("an acks=1 append was synced at once; the test needs it unsynced")
			}
			for i, d := range tc.advance {
				e.clock.Advance(d)
				if err := p.FlushIfDue(); err != nil {
					t.Fatal(err)
				}
				if got := p.log.DurableEnd() == p.log.End(); got != tc.synced[i] {
					t.Fatalf("after %v more: synced=%v, want %v", d, got, tc.synced[i])
				}
			}
		})
	}
}

// TestExpireProducersForgetsIdleProducers: after producer.id.expiration.ms
// of idleness a producer is new again (any sequence is accepted), and not
// before.
func TestExpireProducersForgetsIdleProducers(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Config.ProducerIDExpiration = time.Hour })
	p := e.open(t)
	defer p.Close()
	nowMs := testStart.UnixMilli()
	mustAppend(t, p, batch(t, spec{pid: 7, seq: 0, tsMs: nowMs}), AcksLeader)

	p.ExpireProducers(nowMs + (30 * time.Minute).Milliseconds())
	if _, _, err := p.Append(batch(t, spec{pid: 7, seq: 5, tsMs: nowMs}), AcksLeader); err == nil {
		t.Fatal("a sequence gap was accepted from a producer that is still remembered")
	}
	p.ExpireProducers(nowMs + (61 * time.Minute).Milliseconds())
	if _, _, err := p.Append(batch(t, spec{pid: 7, seq: 5, tsMs: nowMs}), AcksLeader); err != nil {
		t.Fatalf("an expired producer is not new again: %v", err)
	}
}
