package clientmetrics

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The naive model of a MetricsData: what the generator builds, the test
// encoder encodes and modelSamples flattens.
type (
	modelAttr  struct{ key, value string }
	modelPoint struct {
		start, time uint64
		isInt       bool
		i           int64
		d           float64
		attrs       []modelAttr
		noValue     bool // FLAG_NO_RECORDED_VALUE
	}
	modelMetric struct {
		name, unit  string
		data        int // 0 gauge, 1 sum, 2 histogram
		temporality uint64
		monotonic   bool
		points      []modelPoint
	}
	modelResource struct {
		attrs  []modelAttr
		scopes [][]modelMetric
	}
)

func genAttrs(t *rapid.T, label string) []modelAttr {
	// Few keys, so that repeats and overrides happen.
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) modelAttr {
		return modelAttr{rapid.SampledFrom([]string{"a", "b", "node_id", "z"}).Draw(t, "key"), rapid.StringMatching(`[a-z0-9]{0,3}`).Draw(t, "value")}
	}), 0, 4).Draw(t, label)
}

func genResources(t *rapid.T) []modelResource {
	point := rapid.Custom(func(t *rapid.T) modelPoint {
		return modelPoint{
			start:   rapid.Uint64().Draw(t, "start"),
			time:    rapid.Uint64().Draw(t, "time"),
			isInt:   rapid.Bool().Draw(t, "isInt"),
			i:       rapid.Int64().Draw(t, "i"),
			d:       rapid.Float64().Filter(func(f float64) bool { return !math.IsNaN(f) }).Draw(t, "d"),
			attrs:   genAttrs(t, "attrs"),
			noValue: rapid.IntRange(0, 9).Draw(t, "flags") == 0,
		}
	})
	metric := rapid.Custom(func(t *rapid.T) modelMetric {
		return modelMetric{
			name:        rapid.StringMatching(`[a-z]{1,3}(\.[a-z]{1,3}){0,2}`).Draw(t, "name"),
			unit:        rapid.SampledFrom([]string{"", "ms", "1"}).Draw(t, "unit"),
			data:        rapid.IntRange(0, 2).Draw(t, "data"),
			temporality: rapid.Uint64Range(temporalityDelta, temporalityCumulative).Draw(t, "temporality"),
			monotonic:   rapid.Bool().Draw(t, "monotonic"),
			points:      rapid.SliceOfN(point, 0, 3).Draw(t, "points"),
		}
	})
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) modelResource {
		return modelResource{
			attrs:  genAttrs(t, "resource"),
			scopes: rapid.SliceOfN(rapid.SliceOfN(metric, 0, 3), 0, 2).Draw(t, "scopes"),
		}
	}), 0, 3).Draw(t, "resources")
}

func encodeModel(rs []modelResource) []byte {
	kvs := func(as []modelAttr) [][]byte {
		var out [][]byte
		for _, a := range as {
			out = append(out, keyValue(a.key, anyStr(a.value)))
		}
		return out
	}
	var rms [][]byte
	for _, r := range rs {
		var scopes [][]byte
		for _, ms := range r.scopes {
			var metrics [][]byte
			for _, m := range ms {
				var points [][]byte
				for _, p := range m.points {
					var extra [][]byte
					for _, kv := range kvs(p.attrs) {
						extra = append(extra, lenField(7, kv))
					}
					if p.noValue {
						extra = append(extra, varintField(8, flagNoRecordedValue))
					}
					if p.isInt {
						points = append(points, pointInt(p.start, p.time, p.i, extra...))
					} else {
						points = append(points, pointDouble(p.start, p.time, p.d, extra...))
					}
				}
				var data []byte
				switch m.data {
				case 0:
					data = gaugeData(points...)
				case 1:
					data = sumData(m.temporality, m.monotonic, points...)
				default:
					data = lenField(fieldHistogram, repeated(1, points))
				}
				metrics = append(metrics, msg(strField(1, m.name), strField(3, m.unit), data))
			}
			scopes = append(scopes, scopeMetrics("scope", "1", metrics...))
		}
		rms = append(rms, resourceMetrics(resource(kvs(r.attrs)...), scopes...))
	}
	return metricsData(rms...)
}

// modelSamples flattens the model the naive way: a map of attributes that
// later ones overwrite.
func modelSamples(rs []modelResource) []Sample {
	var out []Sample
	for _, r := range rs {
		for _, ms := range r.scopes {
			for _, m := range ms {
				if m.data == 2 {
					continue
				}
				for _, p := range m.points {
					if p.noValue {
						continue
					}
					s := Sample{Name: m.name, Unit: m.unit, Kind: KindGauge, StartTimeUnixNano: p.start, TimeUnixNano: p.time, Value: p.d}
					if p.isInt {
						s.Value = float64(p.i)
					}
					if m.data == 1 {
						s.Delta = m.temporality == temporalityDelta
						s.Kind = KindUpDownCounter
						if m.monotonic {
							s.Kind = KindCounter
						}
					}
					all := map[string]string{}
					for _, a := range slices.Concat(r.attrs, p.attrs) {
						all[a.key] = a.value
					}
					for _, k := range slices.Sorted(maps.Keys(all)) {
						s.Attributes = append(s.Attributes, Attribute{k, all[k]})
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func TestDecodeMetricsMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := genResources(t)
		got, err := DecodeMetrics(encodeModel(rs))
		if err != nil {
			t.Fatal(err)
		}
		if want := modelSamples(rs); !reflect.DeepEqual(got, want) {
			t.Fatalf("got\n%+v\nwant\n%+v", got, want)
		}
	})
}
