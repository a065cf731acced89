package server

import (
	"testing"
	"time"
)

func TestCreationRuleReserve(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rule := newCreationRule(10, 2*time.Second) // 10/s, a burst of 20
	var b creationBucket
	var wait time.Duration
	for i := range 20 {
		if b, wait = rule.reserve(b, t0); wait != 0 {
			t.Fatalf("connection %d of the burst waits %v", i, wait)
		}
	}
	if b, wait = rule.reserve(b, t0); wait != 100*time.Millisecond {
		t.Fatalf("the 21st connection waits %v, want 100ms (one token at 10/s)", wait)
	}
	if b, wait = rule.reserve(b, t0); wait != 200*time.Millisecond {
		t.Fatalf("the 22nd connection waits %v, want 200ms behind the 21st", wait)
	}
	// A second later ten tokens came back: eight after the two owed.
	for i := range 8 {
		if b, wait = rule.reserve(b, t0.Add(time.Second)); wait != 0 {
			t.Fatalf("connection %d a second later waits %v", i, wait)
		}
	}
	if _, wait = rule.reserve(b, t0.Add(time.Second)); wait == 0 {
		t.Fatal("a ninth connection a second later did not wait")
	}
	// The bucket never holds more than the burst, however long it rests.
	rested, _ := rule.reserve(b, t0.Add(time.Hour))
	if rested.tokens != 19 {
		t.Fatalf("after an hour's rest and one connection the bucket holds %v tokens, want 19", rested.tokens)
	}
	if _, wait = (creationRule{}).reserve(creationBucket{}, t0); wait != 0 {
		t.Fatal("the unlimited rule made a connection wait")
	}
	if r := newCreationRule(1, 0); r.burst != 1 {
		t.Fatalf("a rule without a burst window holds %v tokens, want 1", r.burst)
	}
}

// Over any span, the connections admitted without waiting are at most the
// burst plus what the rate refilled (the property Kafka's quota promises).
func TestCreationRuleBoundsTheRate(t *testing.T) {
	rule := newCreationRule(50, time.Second)
	t0 := time.Unix(0, 0)
	var b creationBucket
	admitted := 0
	for ms := range 3000 { // one connection attempt a millisecond for 3 s
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		var wait time.Duration
		b, wait = rule.reserve(b, now)
		if wait == 0 {
			admitted++
		} else {
			b.tokens++ // the attempt gives up its reservation
		}
	}
	if max := 50 + 50*3; admitted > max || admitted < max-2 {
		t.Fatalf("%d connections admitted at once in 3 s, want about %d (burst 50 + 50/s)", admitted, max)
	}
}
