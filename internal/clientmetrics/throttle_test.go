package clientmetrics

import (
	"testing"

	"pgregory.net/rapid"
)

// step is one request against an instance's request times.
type step struct {
	get    bool // else a push
	atMs   int64
	accept bool
}

func runSteps(t *testing.T, intervalMs int32, steps []step) {
	t.Helper()
	var times requestTimes
	for i, s := range steps {
		var ok bool
		if s.get {
			times, ok = acceptGet(times, s.atMs, intervalMs)
		} else {
			times, ok = acceptPush(times, s.atMs, intervalMs)
		}
		if ok != s.accept {
			t.Fatalf("step %d %+v: accepted %v", i, s, ok)
		}
	}
}

func TestThrottle(t *testing.T) {
	const now, interval = 1_700_000_000_000, 300_000
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		// Kafka's ClientMetricsInstanceTest.
		{"first requests accepted", []step{{true, now, true}, {false, now, true}}},
		{"get after the interval", []step{{true, now - interval, true}, {true, now, true}}},
		{"get retried at once", []step{{true, now, true}, {true, now, false}}},
		{"push after the interval", []step{{false, now - interval, true}, {false, now, true}}},
		{"get right after a push", []step{{false, now, true}, {true, now + 1, false}}},
		{"push retried at once", []step{{false, now, true}, {false, now, false}}},
		{"push right after a get", []step{{false, now - interval, true}, {true, now, true}, {false, now + 1, true}}},
		// The early push is one per get.
		{"second early push after a get", []step{{true, now, true}, {false, now + 1, true}, {false, now + 2, false}}},
		{"get one ms before the interval", []step{{true, now, true}, {true, now + interval - 1, false}, {true, now + interval, true}}},
		{"a refused get does not move the window", []step{{false, now, true}, {true, now + 10, false}, {false, now + interval, true}}},
		{"a get waits an interval after the last push", []step{{true, now, true}, {false, now + 5, true}, {true, now + interval, false}, {true, now + interval + 5, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, interval, tc.steps) })
	}
}

func TestThrottleProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		interval := rapid.Int32Range(MinIntervalMs, 10_000).Draw(t, "interval")
		var times requestTimes
		nowMs := int64(1_700_000_000_000)
		var lastAcceptedMs int64 // of any accepted request
		pushesSinceGet := 0
		for i := range rapid.IntRange(1, 40).Draw(t, "steps") {
			nowMs += rapid.Int64Range(0, 2*int64(interval)).Draw(t, "wait")
			before := times
			if rapid.Bool().Draw(t, "get") {
				var ok bool
				times, ok = acceptGet(times, nowMs, interval)
				if ok != (i == 0 || nowMs-lastAcceptedMs >= int64(interval)) {
					t.Fatalf("get at %d: accepted %v, last accepted request at %d", nowMs, ok, lastAcceptedMs)
				}
				if ok {
					lastAcceptedMs, pushesSinceGet = nowMs, 0
				}
				if !ok && times != before {
					t.Fatal("a refused get changed the times")
				}
				continue
			}
			var ok bool
			times, ok = acceptPush(times, nowMs, interval)
			if !ok && times != before {
				t.Fatal("a refused push changed the times")
			}
			if ok {
				// Accepted pushes are an interval apart, but for the
				// first after a get.
				if pushesSinceGet > 0 && nowMs-before.lastPushMs < int64(interval) {
					t.Fatalf("push at %d accepted %dms after the previous", nowMs, nowMs-before.lastPushMs)
				}
				lastAcceptedMs = nowMs
				pushesSinceGet++
			} else if pushesSinceGet == 0 && times.lastGetMs != 0 {
				t.Fatalf("first push after the get at %d refused at %d", times.lastGetMs, nowMs)
			}
		}
	})
}
