package clientmetrics

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/record"
)

// acceptedCompressionTypes is Kafka's SUPPORTED_COMPRESSION_TYPES, in its
// order of preference: clients compress with the first they support.
var acceptedCompressionTypes = []int8{
	int8(record.CodecZstd), int8(record.CodecLZ4), int8(record.CodecGzip), int8(record.CodecSnappy),
}

// PushRequest is a PushTelemetry request.
type PushRequest struct {
	InstanceID     InstanceID
	SubscriptionID int32
	Terminating    bool
	// CompressionType is Kafka's compression id of Metrics: 0 none,
	// 1 gzip, 2 snappy, 3 lz4, 4 zstd.
	CompressionType int8
	// Metrics is an OTLP MetricsData, compressed with CompressionType.
	Metrics []byte
}

// PushResult is the answer to PushTelemetry. When ErrorCode is 0, Samples
// are the pushed metrics for the caller to export; otherwise Err says why
// the push was refused, for logs.
type PushResult struct {
	ErrorCode int16
	Err       error
	Samples   []Sample
}

// Push answers PushTelemetry from a client connected with selectors sel,
// as Kafka's processPushTelemetryRequest: an unknown instance is made (the
// client may have asked another broker for its subscription), the request
// is validated, then the metrics are decompressed and decoded. A payload
// that does not decompress or decode is INVALID_RECORD, Kafka's answer
// when its exporter fails. An empty payload is accepted without decoding.
func (r *Registry) Push(req PushRequest, sel Selectors) PushResult {
	if req.InstanceID.reserved() {
		return refused(kerr.InvalidRequest, "invalid client instance id %s", req.InstanceID)
	}
	if res := r.admitPush(req, sel); res.ErrorCode != 0 {
		return res
	}
	if len(req.Metrics) == 0 {
		return PushResult{}
	}
	// Outside the lock: decompressing and decoding are the costly part.
	raw, err := record.Decompress(record.Codec(req.CompressionType), req.Metrics, nil)
	if err != nil {
		return refused(kerr.InvalidRecord, "client %s: %v", req.InstanceID, err)
	}
	samples, err := DecodeMetrics(raw)
	if err != nil {
		return refused(kerr.InvalidRecord, "client %s: %v", req.InstanceID, err)
	}
	return PushResult{Samples: samples}
}

// admitPush validates req against its instance and records it.
func (r *Registry) admitPush(req PushRequest, sel Selectors) PushResult {
	nowMs := r.opts.Clock.Now().UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.instances.expire(nowMs)
	inst := r.instanceLocked(req.InstanceID, sel, nowMs)
	times, res := checkPush(pushState{
		times:          inst.times,
		terminating:    inst.terminating,
		subscriptionID: inst.plan.SubscriptionID,
		pushIntervalMs: inst.plan.PushIntervalMs,
	}, req, nowMs, r.opts.TelemetryMaxBytes)
	inst.times = times
	// Kafka records the flag whether or not the push was valid (in a
	// finally block): a terminating push that is refused still ends the
	// instance, and a refused push after a terminating one, not itself
	// terminating, clears it again.
	inst.terminating = req.Terminating
	return res
}

// pushState is what checkPush needs of an instance.
type pushState struct {
	times          requestTimes
	terminating    bool
	subscriptionID int32
	pushIntervalMs int32
}

// checkPush is Kafka's ClientMetricsManager.validatePushRequest, checks in
// its order: a push after a terminating push is INVALID_REQUEST; one
// within the push interval is THROTTLING_QUOTA_EXCEEDED unless it is
// terminating (see acceptPush); a stale subscription id is
// UNKNOWN_SUBSCRIPTION_ID; a compression id Kafka does not know is
// UNSUPPORTED_COMPRESSION_TYPE (none is accepted though not advertised);
// a payload over maxBytes, compressed, is TELEMETRY_TOO_LARGE. The push
// timestamp moves whenever acceptPush accepts, even if a later check
// fails.
func checkPush(s pushState, req PushRequest, nowMs int64, maxBytes int32) (requestTimes, PushResult) {
	id := req.InstanceID
	if s.terminating {
		return s.times, refused(kerr.InvalidRequest, "client %s already sent a terminating push", id)
	}
	times, ok := acceptPush(s.times, nowMs, s.pushIntervalMs)
	if !ok && !req.Terminating {
		return times, refused(kerr.ThrottlingQuotaExceeded, "client %s pushed before its push interval of %dms", id, s.pushIntervalMs)
	}
	if req.SubscriptionID != s.subscriptionID {
		return times, refused(kerr.UnknownSubscriptionID, "client %s pushed for subscription %d, current is %d", id, req.SubscriptionID, s.subscriptionID)
	}
	if req.CompressionType < int8(record.CodecNone) || req.CompressionType > int8(record.CodecZstd) {
		return times, refused(kerr.UnsupportedCompressionType, "client %s used unknown compression type %d", id, req.CompressionType)
	}
	if len(req.Metrics) > int(maxBytes) {
		return times, refused(kerr.TelemetryTooLarge, "client %s pushed %d bytes, telemetry.max.bytes is %d", id, len(req.Metrics), maxBytes)
	}
	return times, PushResult{}
}

func refused(code *kerr.Error, format string, args ...any) PushResult {
	return PushResult{ErrorCode: code.Code, Err: fmt.Errorf("clientmetrics: %s: %s", code.Message, fmt.Sprintf(format, args...))}
}
