// Package clientmetrics is the broker side of KIP-714 (client metrics and
// observability): Kafka's ClientMetricsManager and its helpers
// (ClientMetricsConfigs, ClientMetricsInstance,
// ClientMetricsInstanceMetadata) as a package without I/O.
//
// An operator defines client metrics subscriptions: config resources of
// type CLIENT_METRICS whose configs are metrics (metric name prefixes),
// interval.ms and match (selector=regex patterns on the client's instance
// id, client id, software name and version, source address and port).
// ParseSubscription validates them. A client asks which metrics to send
// with GetTelemetrySubscriptions (API 71) and sends them with
// PushTelemetry (API 72) as an OTLP MetricsData, possibly compressed.
//
//   - PlanFor is the pure decision of what a client is told: the union of
//     the metric prefixes of the subscriptions that match it, the smallest
//     of their intervals (Kafka's default 5 minutes at most) and a
//     subscription id that changes whenever either changes.
//   - Registry keeps the subscription set and the client instances. It
//     answers GetSubscriptions and Push with Kafka's error codes, in
//     Kafka's order, and throttles requests that come before the push
//     interval. Instances are forgotten when idle for max(1 minute,
//     3 push intervals) and beyond 16384 of them (least recently used
//     first), so memory stays bounded.
//   - DecodeMetrics decodes the pushed OTLP payload into flat gauge and
//     sum samples for an exporter.
//
// Time comes from the clock in Options and new instance ids from its
// random source. A Registry is safe for concurrent use; everything else is
// pure.
//
// Latest keeps each client's last push for the broker's metrics endpoint.
// The api package serves GetTelemetrySubscriptions and PushTelemetry (71,
// 72) over one Registry, giving it the CLIENT_METRICS subscriptions of the
// metadata quorum as they change; cmd/strata shows what Latest holds as
// strata_client_*.
package clientmetrics
