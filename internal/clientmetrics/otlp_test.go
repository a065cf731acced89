package clientmetrics

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

const t0, t1 = 1_700_000_000_000_000_000, 1_700_000_030_000_000_000

func attrs(kv ...string) []Attribute {
	var out []Attribute
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Attribute{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestDecodeMetricsKgoShape(t *testing.T) {
	got, err := DecodeMetrics(kgoPayload())
	if err != nil {
		t.Fatal(err)
	}
	res := attrs("client_rack", "r1", "group_id", "g1")
	const start, now = 1_700_000_000_000_000_000, 1_700_000_030_000_000_000
	want := []Sample{
		{Name: "org.apache.kafka.producer.connection.creation.rate", Kind: KindGauge, Attributes: res, Value: 0.1, StartTimeUnixNano: start, TimeUnixNano: now},
		{Name: "org.apache.kafka.producer.connection.creation.total", Kind: KindCounter, Delta: true, Attributes: res, Value: 3, StartTimeUnixNano: start, TimeUnixNano: now},
		{Name: "org.apache.kafka.producer.node.request.latency.avg", Kind: KindGauge, Attributes: attrs("client_rack", "r1", "group_id", "g1", "node_id", "1"), Value: 2.5, StartTimeUnixNano: start, TimeUnixNano: now},
		{Name: "org.apache.kafka.producer.node.request.latency.max", Kind: KindGauge, Attributes: attrs("client_rack", "r1", "group_id", "g1", "node_id", "1"), Value: 7, TimeUnixNano: now},
		{Name: "app.ready", Kind: KindGauge, Attributes: attrs("client_rack", "r1", "group_id", "g1", "leader", "true"), Value: 1, StartTimeUnixNano: start, TimeUnixNano: now},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeMetrics(t *testing.T) {
	g := func(name string, v float64, a ...string) Sample {
		return Sample{Name: name, Kind: KindGauge, Value: v, Attributes: attrs(a...), StartTimeUnixNano: t0, TimeUnixNano: t1}
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want []Sample
	}{
		{"empty payload", nil, nil},
		{"no scope metrics", metricsData(resourceMetrics(resource(keyValue("a", anyStr("b"))))), nil},
		{
			"resource after scope metrics still applies",
			metricsData(msg(
				lenField(2, scopeMetrics("s", "1", metric("m", gaugeData(pointDouble(t0, t1, 1.5))))),
				lenField(1, resource(keyValue("svc", anyStr("x")))),
			)),
			[]Sample{g("m", 1.5, "svc", "x")},
		},
		{
			"point attributes win over the resource's and come sorted",
			metricsData(resourceMetrics(resource(keyValue("z", anyStr("res")), keyValue("k", anyStr("res"))),
				scopeMetrics("s", "1", metric("m", gaugeData(pointInt(t0, t1, 2, pointAttr("k", anyStr("point")), pointAttr("a", anyStr("1")))))))),
			[]Sample{g("m", 2, "a", "1", "k", "point", "z", "res")},
		},
		{
			"of repeated keys the last wins",
			metricsData(resourceMetrics(resource(keyValue("k", anyStr("1")), keyValue("k", anyStr("2"))),
				scopeMetrics("s", "1", metric("m", gaugeData(pointInt(t0, t1, 1)))))),
			[]Sample{g("m", 1, "k", "2")},
		},
		{
			"cumulative non-monotonic sum",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("q", sumData(temporalityCumulative, false, pointInt(t0, t1, -4)))))),
			[]Sample{{Name: "q", Kind: KindUpDownCounter, Value: -4, StartTimeUnixNano: t0, TimeUnixNano: t1}},
		},
		{
			"unit kept, description dropped, unknown fields skipped",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1",
				msg(strField(1, "m"), strField(2, "desc"), strField(3, "ms"), varintField(99, 1), fixed64Field(98, 1), gaugeData(pointDouble(t0, t1, 3)))))),
			[]Sample{{Name: "m", Unit: "ms", Kind: KindGauge, Value: 3, StartTimeUnixNano: t0, TimeUnixNano: t1}},
		},
		{
			"a known field with another wire type is unknown",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1",
				metric("m", gaugeData(msg(fixed64Field(3, t1), varintField(4, 9), fixed64Field(6, 5))))))),
			[]Sample{{Name: "m", Kind: KindGauge, Value: 5, TimeUnixNano: t1}},
		},
		{
			"histograms, exponential histograms and summaries are skipped",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1",
				metric("h", lenField(9, repeated(1, [][]byte{fixed64Field(3, t1)}))),
				metric("e", lenField(10, nil)),
				metric("s", lenField(11, nil)),
				metric("m", gaugeData(pointDouble(t0, t1, 1)))))),
			[]Sample{g("m", 1)},
		},
		{
			"of the data oneof the last field wins",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1",
				metric("m", gaugeData(pointDouble(t0, t1, 1)), sumData(temporalityDelta, true, pointInt(t0, t1, 2)))))),
			[]Sample{{Name: "m", Kind: KindCounter, Delta: true, Value: 2, StartTimeUnixNano: t0, TimeUnixNano: t1}},
		},
		{
			"a repeated data field merges",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1",
				metric("m", sumData(temporalityDelta, true, pointInt(t0, t1, 2)), gaugeData(pointDouble(t0, t1, 1)), gaugeData(pointDouble(t0, t1, 4)))))),
			[]Sample{g("m", 1), g("m", 4)},
		},
		{
			"points without a recorded value and metrics without a name are skipped",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1",
				metric("m", gaugeData(pointDouble(t0, t1, 1, varintField(8, flagNoRecordedValue)), pointDouble(t0, t1, 2))),
				metric("", gaugeData(pointDouble(t0, t1, 3)))))),
			[]Sample{g("m", 2)},
		},
		{
			"a point without a value is zero",
			metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("m", gaugeData(msg(fixed64Field(2, t0), fixed64Field(3, t1))))))),
			[]Sample{g("m", 0)},
		},
		{
			"several resources",
			metricsData(
				resourceMetrics(resource(keyValue("r", anyStr("1"))), scopeMetrics("s", "1", metric("m", gaugeData(pointDouble(t0, t1, 1))))),
				resourceMetrics(resource(keyValue("r", anyStr("2"))), scopeMetrics("s", "1", metric("m", gaugeData(pointDouble(t0, t1, 2))))),
			),
			[]Sample{g("m", 1, "r", "1"), g("m", 2, "r", "2")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeMetrics(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestDecodeMetricsAttributeValues(t *testing.T) {
	for _, tc := range []struct {
		value []byte
		want  string
	}{
		{anyStr("x y"), "x y"},
		{anyBool(true), "true"},
		{anyBool(false), "false"},
		{anyInt(-42), "-42"},
		{anyDouble(0.25), "0.25"},
		{anyDouble(math.Inf(1)), "+Inf"},
		{anyBytes([]byte{0xff, 0}), "/wA="},
		{anyArray(anyStr("a"), anyInt(1)), "[a,1]"},
		{anyKVList(keyValue("k", anyStr("v")), keyValue("n", anyArray(anyBool(true)))), "{k=v,n=[true]}"},
		{nil, ""},
		{msg(anyStr("first"), anyInt(2)), "2"}, // a oneof: the last wins
	} {
		in := metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("m", gaugeData(pointInt(t0, t1, 1, pointAttr("k", tc.value)))))))
		got, err := DecodeMetrics(in)
		if err != nil {
			t.Fatalf("%q: %v", tc.want, err)
		}
		if v := got[0].Attributes[0].Value; v != tc.want {
			t.Errorf("attribute value %q, want %q", v, tc.want)
		}
	}
}

func nested(depth int) []byte {
	v := anyStr("leaf")
	for range depth {
		v = anyArray(v)
	}
	return v
}

func TestDecodeMetricsMalformed(t *testing.T) {
	inScope := func(metrics ...[]byte) []byte {
		return metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metrics...)))
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"truncated tag", []byte{0x80}, "tag"},
		{"field number zero", []byte{0x02, 0x00}, "tag"},
		{"length past the end", []byte{0x0a, 0x05, 0x00}, "field 1"},
		{"end group without a start", []byte{0x0c}, "field 1"},
		{"truncated fixed64", inScope(metric("m", gaugeData([]byte{0x11, 1, 2}))), "field 2"},
		{"name not UTF-8", inScope(metric("\xff", gaugeData(pointInt(t0, t1, 1)))), "UTF-8"},
		{"attribute key not UTF-8", inScope(metric("m", gaugeData(pointInt(t0, t1, 1, pointAttr("\xc3", anyStr("v")))))), "UTF-8"},
		{"sum without temporality", inScope(metric("m", lenField(7, repeated(1, [][]byte{pointInt(t0, t1, 1)})))), "temporality 0"},
		{"sum with unknown temporality", inScope(metric("m", sumData(3, true, pointInt(t0, t1, 1)))), "temporality 3"},
		{"values nested too deep", inScope(metric("m", gaugeData(pointInt(t0, t1, 1, pointAttr("k", nested(maxValueDepth+1)))))), "nested"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeMetrics(tc.in)
			if !errors.Is(err, ErrMalformedMetrics) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error with %q", got, err, tc.want)
			}
		})
	}
	// The deepest value that is allowed decodes.
	in := inScope(metric("m", gaugeData(pointInt(t0, t1, 1, pointAttr("k", nested(maxValueDepth))))))
	if _, err := DecodeMetrics(in); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeMetricsLimits(t *testing.T) {
	points := make([][]byte, maxSamples+1)
	for i := range points {
		points[i] = fixed64Field(3, t1)
	}
	in := metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("m", lenField(5, repeated(1, points))))))
	if _, err := DecodeMetrics(in); !errors.Is(err, ErrMalformedMetrics) || !strings.Contains(err.Error(), "data points") {
		t.Fatalf("%d points: got %v", len(points), err)
	}
	in = metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("m", lenField(5, repeated(1, points[:maxSamples]))))))
	if got, err := DecodeMetrics(in); err != nil || len(got) != maxSamples {
		t.Fatalf("%d points: %d samples, %v", maxSamples, len(got), err)
	}
	// Resource attributes count once per sample.
	kvs := make([][]byte, maxAttributes/64)
	for i := range kvs {
		kvs[i] = keyValue(strconv.Itoa(i), nil)
	}
	in = metricsData(resourceMetrics(resource(kvs...), scopeMetrics("s", "1", metric("m", lenField(5, repeated(1, points[:65]))))))
	if _, err := DecodeMetrics(in); !errors.Is(err, ErrMalformedMetrics) || !strings.Contains(err.Error(), "attributes") {
		t.Fatalf("%d attributes × 65 points: got %v", len(kvs), err)
	}
	in = metricsData(resourceMetrics(resource(kvs...), scopeMetrics("s", "1", metric("m", lenField(5, repeated(1, points[:64]))))))
	if got, err := DecodeMetrics(in); err != nil || len(got) != 64 {
		t.Fatalf("%d attributes × 64 points: %d samples, %v", len(kvs), len(got), err)
	}
}

// TestDecodeMetricsTruncations checks that every prefix of a valid payload
// either decodes or fails cleanly.
func TestDecodeMetricsTruncations(t *testing.T) {
	full := kgoPayload()
	for n := range len(full) {
		if _, err := DecodeMetrics(full[:n]); err != nil && !errors.Is(err, ErrMalformedMetrics) {
			t.Fatalf("prefix %d: error %v does not wrap ErrMalformedMetrics", n, err)
		}
	}
	// A group field is skipped whole.
	group := protowire.AppendTag(nil, 9, protowire.StartGroupType)
	group = append(group, varintField(1, 1)...)
	group = protowire.AppendTag(group, 9, protowire.EndGroupType)
	got, err := DecodeMetrics(append(group, full...))
	if err != nil || len(got) != 5 {
		t.Fatalf("got %d samples, %v", len(got), err)
	}
}
