package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/clientmetrics"
)

// GetTelemetrySubscriptions: v0 (KIP-714). A client asks which of its
// metrics to push and how often: the CLIENT_METRICS subscriptions that
// match it (client_metrics.go, internal/clientmetrics); a client without
// an instance id gets one. Open to every client, as in Kafka. Advertised
// only with Options.ClientMetrics (Kafka: with a telemetry receiver). The
// client is forgotten when its connection closes (client_metrics_conns.go).
func init() { register(71, 0, 0, (*Handler).handleGetTelemetrySubscriptions) }

func (h *Handler) handleGetTelemetrySubscriptions(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := r.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	h.clientSubs.sync(h.opts.ClientMetrics, h.opts.Meta.Image())
	got := h.opts.ClientMetrics.GetSubscriptions(clientmetrics.InstanceID(r.ClientInstanceID), h.clientSelectors(req))
	resp.ErrorCode = got.ErrorCode
	if got.ErrorCode != 0 {
		return done(resp)
	}
	h.clientConns.use(ctx, req.ConnID, clientmetrics.InstanceID(got.InstanceID), h.forgetClientInstance)
	resp.ClientInstanceID = got.InstanceID
	resp.SubscriptionID = got.SubscriptionID
	resp.AcceptedCompressionTypes = got.AcceptedCompressionTypes
	resp.PushIntervalMillis = got.PushIntervalMs
	resp.TelemetryMaxBytes = got.TelemetryMaxBytes
	resp.DeltaTemporality = got.DeltaTemporality
	resp.RequestedMetrics = got.RequestedMetrics
	return done(resp)
}
