package metrics

import (
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPartitionCountReadsAtScrape(t *testing.T) {
	n := 3
	c := NewPartitionCount(func() int { return n })
	n = 5
	if got := samples(t, c); !maps.Equal(got, map[string]float64{"strata_partitions{}": 5}) {
		t.Fatalf("samples %v", got)
	}
	lint(t, c)
}

func TestRequestsCountsPerAPI(t *testing.T) {
	names := map[int16]string{0: "Produce", 1: "Fetch"}
	r := NewRequests(func(k int16) string { return names[k] })
	r.Inc(0)
	r.Inc(1)
	r.Inc(0)
	want := map[string]float64{`strata_requests_total{request="Produce"}`: 2, `strata_requests_total{request="Fetch"}`: 1}
	if got := samples(t, r); !maps.Equal(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
	lint(t, r)
}

func TestRegistryServesTextWithRuntimeMetrics(t *testing.T) {
	reg := NewRegistry()
	reg.MustRegister(NewPartitionCount(func() int { return 7 }))
	rec := httptest.NewRecorder()
	reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, body)
	}
	for _, want := range []string{"\nstrata_partitions 7\n", "\ngo_goroutines ", "\nprocess_start_time_seconds "} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
}
