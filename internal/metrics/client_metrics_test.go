package metrics

import (
	"slices"
	"testing"
)

// Client metric and label names keep what Prometheus takes, at the edges
// of each character range, and every other character becomes "_"; a
// label name never starts with a digit or "__".
func TestPrometheusNames(t *testing.T) {
	const edges = "_:azAZ09"
	for in, want := range map[string]string{
		edges:           edges,
		"a.b-c/d e`{@[": "a_b_c_d_e____",
		"é":             "_",
		"/0":            "_0",
		"9z":            "9z",
	} {
		if got := promName(in); got != want {
			t.Errorf("promName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"_azAZ09":      "_azAZ09",
		"a:b.c":        "a_b_c",
		"x`x{x@x[x/x:": "x_x_x_x_x_x_",
		"":             "a",
		"0x":           "a0x",
		"9x":           "a9x",
		"7":            "a7",
		"/x":           "_x",
		"__reserved":   "a__reserved",
		"_one":         "_one",
	} {
		if got := promLabel(in); got != want {
			t.Errorf("promLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// A series' labels are the union of every series' keys, sorted; a series
// without a key has "" there, and of a key given twice the first wins.
func TestLabelKeysAndValues(t *testing.T) {
	series := []ClientSeries{
		{Labels: []Label{{"topic", "t"}, {"client.id", "p"}}},
		{Labels: []Label{{"client_id", "q"}, {"client.id", "r"}, {"node", "1"}}},
	}
	keys := labelKeys(series)
	if !slices.Equal(keys, []string{"client_id", "node", "topic"}) {
		t.Fatalf("keys %v", keys)
	}
	for i, want := range [][]string{{"p", "", "t"}, {"q", "1", ""}} {
		if got := labelValues(keys, series[i].Labels); !slices.Equal(got, want) {
			t.Errorf("series %d: values %q, want %q", i, got, want)
		}
	}
}
