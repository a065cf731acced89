package clientmetrics

import (
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// A small OTLP encoder for tests: each function returns the encoding of
// one field or one message, and msg concatenates fields. Field numbers are
// those of opentelemetry-proto metrics/v1, common/v1 and resource/v1.

func msg(fields ...[]byte) []byte { return slices.Concat(fields...) }

func lenField(num protowire.Number, b []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
}

func strField(num protowire.Number, s string) []byte { return lenField(num, []byte(s)) }

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func fixed64Field(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

// AnyValue encodings.
func anyStr(s string) []byte       { return strField(1, s) }
func anyBool(v bool) []byte        { return varintField(2, protowire.EncodeBool(v)) }
func anyInt(v int64) []byte        { return varintField(3, uint64(v)) }
func anyDouble(v float64) []byte   { return fixed64Field(4, math.Float64bits(v)) }
func anyBytes(b []byte) []byte     { return lenField(7, b) }
func anyArray(vs ...[]byte) []byte { return lenField(5, repeated(1, vs)) }
func anyKVList(kvs ...[]byte) []byte {
	return lenField(6, repeated(1, kvs))
}

func repeated(num protowire.Number, ms [][]byte) []byte {
	var b []byte
	for _, m := range ms {
		b = append(b, lenField(num, m)...)
	}
	return b
}

// keyValue is a KeyValue message.
func keyValue(key string, value []byte) []byte {
	return msg(strField(1, key), lenField(2, value))
}

// point is a NumberDataPoint: extra are more fields (attributes as
// lenField(7, keyValue(...)), flags, ...).
func pointInt(startNano, timeNano uint64, v int64, extra ...[]byte) []byte {
	return msg(fixed64Field(2, startNano), fixed64Field(3, timeNano), fixed64Field(6, uint64(v)), msg(extra...))
}

func pointDouble(startNano, timeNano uint64, v float64, extra ...[]byte) []byte {
	return msg(fixed64Field(2, startNano), fixed64Field(3, timeNano), fixed64Field(4, math.Float64bits(v)), msg(extra...))
}

func pointAttr(key string, value []byte) []byte { return lenField(7, keyValue(key, value)) }

func gaugeData(points ...[]byte) []byte { return lenField(5, repeated(1, points)) }

func sumData(temporality uint64, monotonic bool, points ...[]byte) []byte {
	return lenField(7, msg(repeated(1, points), varintField(2, temporality), varintField(3, protowire.EncodeBool(monotonic))))
}

// metric is a Metric message with a name, and data made by gaugeData or
// sumData (or any other field).
func metric(name string, data ...[]byte) []byte { return msg(strField(1, name), msg(data...)) }

// scopeMetrics is a ScopeMetrics message with an instrumentation scope.
func scopeMetrics(scopeName, scopeVersion string, metrics ...[]byte) []byte {
	return msg(lenField(1, msg(strField(1, scopeName), strField(2, scopeVersion))), repeated(2, metrics))
}

// resource is a Resource message.
func resource(kvs ...[]byte) []byte { return repeated(1, kvs) }

// resourceMetrics is a ResourceMetrics message.
func resourceMetrics(res []byte, scopes ...[]byte) []byte {
	return msg(lenField(1, res), repeated(2, scopes))
}

// metricsData is a MetricsData message.
func metricsData(rms ...[]byte) []byte { return repeated(1, rms) }

// kgoPayload is shaped as franz-go v1.22.3 pushes (kgo/metrics_714.go): one
// ResourceMetrics with client attributes, one ScopeMetrics for scope
// "kgo", a delta monotonic sum with an int point, gauges with double and
// int points, per-node gauges with an int node_id attribute, and a user
// gauge with a bool attribute. franz-go omits zero start times and values.
func kgoPayload() []byte {
	const start, now = 1_700_000_000_000_000_000, 1_700_000_030_000_000_000
	return metricsData(resourceMetrics(
		resource(keyValue("group_id", anyStr("g1")), keyValue("client_rack", anyStr("r1"))),
		scopeMetrics("kgo", "v1.22.3",
			metric("org.apache.kafka.producer.connection.creation.rate", gaugeData(pointDouble(start, now, 0.1))),
			metric("org.apache.kafka.producer.connection.creation.total", sumData(temporalityDelta, true, pointInt(start, now, 3))),
			metric("org.apache.kafka.producer.node.request.latency.avg",
				gaugeData(pointDouble(start, now, 2.5, pointAttr("node_id", anyInt(1))))),
			metric("org.apache.kafka.producer.node.request.latency.max",
				gaugeData(msg(fixed64Field(3, now), fixed64Field(6, 7), pointAttr("node_id", anyInt(1))))),
			metric("app.ready", gaugeData(pointInt(start, now, 1, pointAttr("leader", anyBool(true))))),
		),
	))
}
