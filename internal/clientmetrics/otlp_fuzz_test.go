package clientmetrics

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkSamples checks what DecodeMetrics promises of its output.
func checkSamples(t *testing.T, samples []Sample) {
	t.Helper()
	if len(samples) > maxSamples {
		t.Fatalf("%d samples, over the limit %d", len(samples), maxSamples)
	}
	total := 0
	for i, s := range samples {
		if s.Name == "" {
			t.Fatalf("sample %d has no name", i)
		}
		if s.Kind < KindGauge || s.Kind > KindUpDownCounter {
			t.Fatalf("sample %d has kind %d", i, s.Kind)
		}
		if s.Kind == KindGauge && s.Delta {
			t.Fatalf("sample %d is a delta gauge", i)
		}
		if !slices.IsSortedFunc(s.Attributes, func(a, b Attribute) int { return strings.Compare(a.Key, b.Key) }) {
			t.Fatalf("sample %d attributes not sorted: %v", i, s.Attributes)
		}
		for j := 1; j < len(s.Attributes); j++ {
			if s.Attributes[j].Key == s.Attributes[j-1].Key {
				t.Fatalf("sample %d has key %q twice", i, s.Attributes[j].Key)
			}
		}
		total += len(s.Attributes)
	}
	if total > maxAttributes {
		t.Fatalf("%d attributes, over the limit %d", total, maxAttributes)
	}
}

func FuzzDecodeMetrics(f *testing.F) {
	f.Add([]byte{})
	f.Add(kgoPayload())
	f.Add(metricsData(resourceMetrics(
		resource(keyValue("k", anyKVList(keyValue("a", anyArray(anyInt(1), anyBytes([]byte("x"))))))),
		scopeMetrics("s", "1", metric("m", sumData(temporalityCumulative, false, pointDouble(t0, t1, 1, pointAttr("p", anyDouble(2)))))),
	)))
	f.Add(metricsData(resourceMetrics(nil, scopeMetrics("s", "1", metric("m", gaugeData(pointInt(t0, t1, 1)), lenField(9, nil))))))
	f.Fuzz(func(t *testing.T, b []byte) {
		samples, err := DecodeMetrics(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedMetrics) || samples != nil {
				t.Fatalf("error %v with %d samples", err, len(samples))
			}
			return
		}
		checkSamples(t, samples)
		// Compared as printed: a NaN value (OTLP allows one) is not
		// DeepEqual to itself, and prints the same each time.
		again, err := DecodeMetrics(b)
		if err != nil || fmt.Sprintf("%+v", samples) != fmt.Sprintf("%+v", again) {
			t.Fatalf("decoding twice differs: %v", err)
		}
	})
}
