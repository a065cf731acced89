package clientmetrics

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/record"
)

func TestCheckPush(t *testing.T) {
	const now, interval, subID, maxBytes = 1_700_000_000_000, 1000, 77, 10
	var (
		afterGet   = requestTimes{lastGetMs: now - 1, lastPushMs: now - 500}     // first push since the get: early is fine
		recentPush = requestTimes{lastGetMs: now - 5000, lastPushMs: now - 500}  // within the interval
		oldPush    = requestTimes{lastGetMs: now - 5000, lastPushMs: now - 1000} // an interval ago
		ok         = PushRequest{SubscriptionID: subID, CompressionType: 0, Metrics: make([]byte, maxBytes)}
	)
	with := func(edit func(*PushRequest)) PushRequest {
		r := ok
		edit(&r)
		return r
	}
	var (
		terminating = with(func(r *PushRequest) { r.Terminating = true })
		staleSub    = with(func(r *PushRequest) { r.SubscriptionID = subID + 1 })
		badCodec    = with(func(r *PushRequest) { r.CompressionType = 5 })
		negCodec    = with(func(r *PushRequest) { r.CompressionType = -1 })
		tooLarge    = with(func(r *PushRequest) { r.Metrics = make([]byte, maxBytes+1) })
		everything  = with(func(r *PushRequest) { r.SubscriptionID, r.CompressionType, r.Metrics = 1, 9, make([]byte, 99) })
	)
	for _, tc := range []struct {
		name        string
		times       requestTimes
		terminating bool // the instance's flag
		req         PushRequest
		code        *kerr.Error
		movesPush   bool
	}{
		{"accepted", oldPush, false, ok, nil, true},
		{"early first push after a get", afterGet, false, ok, nil, true},
		{"after a terminating push", oldPush, true, ok, kerr.InvalidRequest, false},
		{"terminating after a terminating push", oldPush, true, terminating, kerr.InvalidRequest, false},
		{"throttled", recentPush, false, ok, kerr.ThrottlingQuotaExceeded, false},
		{"terminating is not throttled", recentPush, false, terminating, nil, false},
		{"stale subscription", oldPush, false, staleSub, kerr.UnknownSubscriptionID, true},
		{"throttling before a stale subscription", recentPush, false, staleSub, kerr.ThrottlingQuotaExceeded, false},
		{"unknown codec 5", oldPush, false, badCodec, kerr.UnsupportedCompressionType, true},
		{"unknown codec -1", oldPush, false, negCodec, kerr.UnsupportedCompressionType, true},
		{"too large", oldPush, false, tooLarge, kerr.TelemetryTooLarge, true},
		{"subscription before codec before size", oldPush, false, everything, kerr.UnknownSubscriptionID, true},
		{"codec before size", oldPush, false, with(func(r *PushRequest) { r.CompressionType, r.Metrics = 9, make([]byte, 99) }), kerr.UnsupportedCompressionType, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := pushState{times: tc.times, terminating: tc.terminating, subscriptionID: subID, pushIntervalMs: interval}
			times, res := checkPush(st, tc.req, now, maxBytes)
			want := int16(0)
			if tc.code != nil {
				want = tc.code.Code
			}
			if res.ErrorCode != want || (want != 0) != (res.Err != nil) {
				t.Fatalf("got %d (%v), want %d", res.ErrorCode, res.Err, want)
			}
			if moved := times.lastPushMs == now; moved != tc.movesPush {
				t.Fatalf("push time moved %v, want %v", moved, tc.movesPush)
			}
			if times.lastGetMs != tc.times.lastGetMs {
				t.Fatal("a push moved the get time")
			}
		})
	}
}

// pushFor pushes payload for the instance of g.
func pushFor(r *Registry, g GetResult, terminating bool, codec int8, payload []byte) PushResult {
	return r.Push(PushRequest{InstanceID: g.InstanceID, SubscriptionID: g.SubscriptionID, Terminating: terminating, CompressionType: codec, Metrics: payload}, kafkaTestClient)
}

func TestPushReservedInstanceIDs(t *testing.T) {
	r, _ := newTestRegistry(t)
	for _, id := range []InstanceID{{}, oneInstanceID} {
		if got := r.Push(PushRequest{InstanceID: id}, kafkaTestClient); got.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("%s: got %+v", id, got)
		}
	}
	if r.Len() != 0 {
		t.Fatal("a refused push made an instance")
	}
}

func TestPushThrottle(t *testing.T) {
	r, clk := newTestRegistry(t)
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != 0 {
		t.Fatalf("first push: %+v", got)
	}
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("second push at once: %+v", got)
	}
	clk.Advance(time.Duration(DefaultIntervalMs) * time.Millisecond)
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != 0 {
		t.Fatalf("push after the interval: %+v", got)
	}
}

func TestPushTerminating(t *testing.T) {
	// Kafka's testPushTelemetryTerminatingFlag and
	// testPushTelemetryNextRequestPostTerminatingFlag.
	r, _ := newTestRegistry(t)
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got := pushFor(r, g, false, 0, kgoPayload()); got.ErrorCode != 0 {
		t.Fatalf("push: %+v", got)
	}
	got := pushFor(r, g, true, 0, kgoPayload())
	if got.ErrorCode != 0 || len(got.Samples) != 5 {
		t.Fatalf("terminating push within the interval: %+v", got)
	}
	if got := pushFor(r, g, true, 0, nil); got.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("second terminating push: %+v", got)
	}
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("push after terminating: %+v", got)
	}
	// Kafka records each push's flag even when refusing it: the refused
	// non-terminating push above cleared it, and this one is judged by
	// the push interval again.
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("push after a refused non-terminating push: %+v", got)
	}
}

func TestPushStaleSubscription(t *testing.T) {
	r, _ := newTestRegistry(t)
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	g.SubscriptionID++
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != kerr.UnknownSubscriptionID.Code {
		t.Fatalf("got %+v", got)
	}
}

// TestGetAfterUnknownSubscriptionIDIsThrottled pins Kafka's behaviour
// after a subscription change: the stale push is accepted by the throttle
// (the re-planned instance starts afresh) and answered
// UNKNOWN_SUBSCRIPTION_ID, and the client's immediate Get is then
// throttled, since Kafka's exemption for that case never applies.
func TestGetAfterUnknownSubscriptionIDIsThrottled(t *testing.T) {
	r, clk := newTestRegistry(t)
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	r.SetSubscriptions(map[string]Subscription{"s": mustParse(t, map[string]string{"metrics": "*", "interval.ms": "1000"})})
	if got := pushFor(r, g, false, 0, nil); got.ErrorCode != kerr.UnknownSubscriptionID.Code {
		t.Fatalf("stale push: %+v", got)
	}
	if got := r.GetSubscriptions(g.InstanceID, kafkaTestClient); got.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("get right after: %+v", got)
	}
	clk.Advance(time.Second)
	if got := r.GetSubscriptions(g.InstanceID, kafkaTestClient); got.ErrorCode != 0 || got.PushIntervalMs != 1000 {
		t.Fatalf("get after the new interval: %+v", got)
	}
}

func TestPushCompression(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		r, _ := newTestRegistry(t)
		g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
		payload, err := record.Compress(codec, kgoPayload(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := pushFor(r, g, false, int8(codec), payload); got.ErrorCode != 0 || len(got.Samples) != 5 {
			t.Errorf("codec %d: %+v", codec, got)
		}
	}
	r, _ := newTestRegistry(t)
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got := pushFor(r, g, false, 5, kgoPayload()); got.ErrorCode != kerr.UnsupportedCompressionType.Code {
		t.Errorf("codec 5: %+v", got)
	}
}

func TestPushTooLarge(t *testing.T) {
	r, _ := newTestRegistry(t, func(o *Options) { o.TelemetryMaxBytes = 100 })
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got := pushFor(r, g, false, 0, make([]byte, 101)); got.ErrorCode != kerr.TelemetryTooLarge.Code {
		t.Fatalf("101 bytes: %+v", got)
	}
}

func TestPushUndecodable(t *testing.T) {
	for name, p := range map[string]struct {
		codec   int8
		payload []byte
	}{
		"not protobuf":            {0, []byte{0xff, 0xff}},
		"not gzip":                {int8(record.CodecGzip), []byte("plain")},
		"zstd of bad protobuf":    {int8(record.CodecZstd), mustCompress(t, record.CodecZstd, []byte{0x0a, 0x09})},
		"sum with no temporality": {0, metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("m", lenField(7, nil)))))},
	} {
		r, _ := newTestRegistry(t)
		g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
		if got := pushFor(r, g, false, p.codec, p.payload); got.ErrorCode != kerr.InvalidRecord.Code || got.Err == nil {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

func TestPushEmptyPayload(t *testing.T) {
	// Kafka exports nothing for an empty payload, whatever its codec.
	r, _ := newTestRegistry(t)
	g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got := pushFor(r, g, false, int8(record.CodecGzip), nil); got.ErrorCode != 0 || got.Samples != nil {
		t.Fatalf("got %+v", got)
	}
}

func mustCompress(t *testing.T, codec record.Codec, b []byte) []byte {
	t.Helper()
	out, err := record.Compress(codec, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
