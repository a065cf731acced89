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

// TestFlushMessagesSyncsEveryNMessages: with flush.messages=3, an acks=1
// append is synced (its wait function fdatasyncs) exactly when it brings
// the unflushed messages to 3, and the count starts again after it.
func TestFlushMessagesSyncsEveryNMessages(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Config.FlushMessages = 3 })
	p := e.open(t)
	defer p.Close()
	for i, tc := range []struct {
		records int
		synced  bool
	}{
		{1, false}, {1, false}, {1, true}, // the third message reaches 3
		{2, false}, {1, true}, // counted again from 0
		{4, true}, // one batch of more than 3
	} {
		_, wait, err := p.Append(batch(t, spec{records: tc.records}), AcksLeader)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if (wait != nil) != tc.synced {
			t.Fatalf("append %d (%d records): a sync wait is %v, want %v", i, tc.records, wait != nil, tc.synced)
		}
		if wait != nil {
			if err := wait(); err != nil {
				t.Fatal(err)
			}
		}
		if got := p.log.DurableEnd() == p.log.End(); got != tc.synced {
			t.Fatalf("append %d: synced=%v, want %v", i, got, tc.synced)
		}
	}
}

// TestFlushIfDueCountsFromTheOldestUnflushedMessage: flush.ms counts from
// the first message that is not yet synced, not from the latest, so a
// steady trickle of appends does not postpone the sync for ever; after a
// sync it counts from the next message.
func TestFlushIfDueCountsFromTheOldestUnflushedMessage(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Config.FlushInterval = time.Second })
	p := e.open(t)
	defer p.Close()
	step := func(what string, d time.Duration, wantSynced bool) {
		t.Helper()
		e.clock.Advance(d)
		if err := p.FlushIfDue(); err != nil {
			t.Fatal(err)
		}
		if got := p.log.DurableEnd() == p.log.End(); got != wantSynced {
			t.Fatalf("%s: synced=%v, want %v", what, got, wantSynced)
		}
	}
	mustAppend(t, p, batch(t, spec{}), AcksLeader)
	step("600ms after the first append", 600*time.Millisecond, false)
	mustAppend(t, p, batch(t, spec{}), AcksLeader)
	step("1.1s after the first append, 500ms after the second", 500*time.Millisecond, true)
	step("nothing unflushed", 2*time.Second, true)
	mustAppend(t, p, batch(t, spec{}), AcksLeader) // counts from now, not from the sync
	step("500ms after the next append", 500*time.Millisecond, false)
	step("1s after it", 500*time.Millisecond, true)
}

// TestFlushIfDueSyncsAFollower: a follower's appends count for flush.ms
// as a leader's do (log.flush.interval.ms applies to every log), so data
// it has not yet synced for its fetcher is synced once it is due.
func TestFlushIfDueSyncsAFollower(t *testing.T) {
	f := newFollower(t, 1, func(o *Options) { o.Config.FlushInterval = time.Second })
	if _, err := f.p.AppendAsFollower(stamped(batch(t, spec{records: 2}), 0, 1)); err != nil {
		t.Fatal(err)
	}
	if f.p.log.DurableEnd() == f.p.log.End() {
		t.Fatal("AppendAsFollower synced; the test needs it unsynced")
	}
	f.e.clock.Advance(999 * time.Millisecond)
	if err := f.p.FlushIfDue(); err != nil {
		t.Fatal(err)
	}
	if f.p.log.DurableEnd() == f.p.log.End() {
		t.Fatal("synced before flush.ms")
	}
	f.e.clock.Advance(time.Millisecond)
	if err := f.p.FlushIfDue(); err != nil {
		t.Fatal(err)
	}
	if got, want := f.p.log.DurableEnd(), f.p.log.End(); got != want {
		t.Fatalf("durable end %d, want the log end %d after flush.ms", got, want)
	}
}
