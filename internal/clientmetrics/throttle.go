package clientmetrics

// requestTimes are the wall-clock milliseconds of an instance's last
// accepted GetTelemetrySubscriptions and PushTelemetry. Zero means never,
// as in Kafka's ClientMetricsInstance, whose fields start at 0 (the epoch),
// so a first request is always far enough from it.
type requestTimes struct {
	lastGetMs  int64
	lastPushMs int64
}

// acceptGet is Kafka's ClientMetricsInstance.maybeUpdateGetRequestTimestamp:
// a Get is accepted once a push interval has passed since the last
// accepted Get or Push, whichever is later, and then becomes the last Get.
// A refused Get changes nothing.
func acceptGet(t requestTimes, nowMs int64, intervalMs int32) (requestTimes, bool) {
	if nowMs-max(t.lastGetMs, t.lastPushMs) < int64(intervalMs) {
		return t, false
	}
	t.lastGetMs = nowMs
	return t, true
}

// acceptPush is Kafka's ClientMetricsInstance.maybeUpdatePushRequestTimestamp:
// a Push is accepted once a push interval has passed since the last
// accepted Push, and, whatever the time, when it is the first Push since
// the last accepted Get: clients jitter their first push to between 0.5
// and 1.5 intervals after the Get, so it may come early. An accepted Push
// becomes the last Push; a refused one changes nothing.
func acceptPush(t requestTimes, nowMs int64, intervalMs int32) (requestTimes, bool) {
	firstSinceGet := t.lastGetMs > t.lastPushMs
	if !firstSinceGet && nowMs-t.lastPushMs < int64(intervalMs) {
		return t, false
	}
	t.lastPushMs = nowMs
	return t, true
}
