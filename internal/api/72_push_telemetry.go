package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/clientmetrics"
)

// PushTelemetry: v0 (KIP-714). A client pushes the metrics its
// subscription asked for, an OTLP MetricsData, possibly compressed; they
// are checked and decoded as Kafka's ClientMetricsManager does
// (internal/clientmetrics: throttling, UNKNOWN_SUBSCRIPTION_ID,
// TELEMETRY_TOO_LARGE, UNSUPPORTED_COMPRESSION_TYPE, INVALID_RECORD) and
// kept, the last push of each client, for the metrics endpoint
// (strata_client_*). A terminating push forgets the client's metrics, and
// so does the close of the connection it last pushed on.
// Open to every client, as in Kafka.
func init() { register(72, 0, 0, (*Handler).handlePushTelemetry) }

func (h *Handler) handlePushTelemetry(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.PushTelemetryRequest)
	resp := r.ResponseKind().(*kmsg.PushTelemetryResponse)
	h.clientSubs.sync(h.opts.ClientMetrics, h.opts.Meta.Image())
	id := clientmetrics.InstanceID(r.ClientInstanceID)
	sel := h.clientSelectors(req)
	got := h.opts.ClientMetrics.Push(clientmetrics.PushRequest{InstanceID: id, SubscriptionID: r.SubscriptionID,
		Terminating: r.Terminating, CompressionType: r.CompressionType, Metrics: r.Metrics}, sel)
	resp.ErrorCode = got.ErrorCode
	switch {
	case got.ErrorCode != 0:
		h.logger.Debug("client metrics push refused", "client_instance_id", id.String(), "client_id", sel.ClientID, "err", got.Err)
	case r.Terminating:
		h.opts.ClientMetricsPushed.Forget(id)
	case len(got.Samples) > 0:
		h.opts.ClientMetricsPushed.Put(id, sel, got.Samples)
	}
	if got.ErrorCode == 0 && !r.Terminating {
		h.clientConns.use(ctx, req.ConnID, id, h.forgetClientInstance)
	}
	return done(resp)
}
