package metrics

import (
	"fmt"
	"maps"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

func TestFailedLogCountReadsAtScrape(t *testing.T) {
	n := 0
	c := NewFailedLogCount(func() int { return n })
	n = 2
	if got := samples(t, c); !maps.Equal(got, map[string]float64{"strata_failed_logs{}": 2}) {
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

func TestRequestTimesPerPhaseAndAPI(t *testing.T) {
	names := map[int16]string{0: "Produce", 1: "Fetch"}
	r := NewRequestTimes(func(k int16) string { return names[k] })
	ms := time.Millisecond
	r.Observe(RequestTiming{Key: 0, Local: 1 * ms, ResponseQueue: 2 * ms, Remote: 3 * ms, Send: 4 * ms})
	r.Observe(RequestTiming{Key: 0, Local: 1 * ms, Remote: 5 * ms})
	r.Observe(RequestTiming{Key: 1, Remote: 500 * ms})
	want := map[string][2]float64{ // count, sum in seconds
		`strata_request_total_seconds{request="Produce"}`:          {2, 0.016},
		`strata_request_local_seconds{request="Produce"}`:          {2, 0.002},
		`strata_request_response_queue_seconds{request="Produce"}`: {2, 0.002},
		`strata_request_remote_seconds{request="Produce"}`:         {2, 0.008},
		`strata_request_send_seconds{request="Produce"}`:           {2, 0.004},
		`strata_request_total_seconds{request="Fetch"}`:            {1, 0.5},
		`strata_request_remote_seconds{request="Fetch"}`:           {1, 0.5},
		`strata_request_local_seconds{request="Fetch"}`:            {1, 0},
		`strata_request_response_queue_seconds{request="Fetch"}`:   {1, 0},
		`strata_request_send_seconds{request="Fetch"}`:             {1, 0},
	}
	got := histograms(t, r)
	if len(got) != len(want) {
		t.Fatalf("%d histograms %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g[0] != w[0] || math.Abs(g[1]-w[1]) > 1e-9 {
			t.Errorf("%s: count, sum %v, want %v", k, g, w)
		}
	}
	lint(t, r)
}

// histograms gathers c's histograms as name{labels} → (count, sum).
func histograms(t *testing.T, c prometheus.Collector) map[string][2]float64 {
	t.Helper()
	out := map[string][2]float64{}
	eachSeries(t, c, func(key string, m *dto.Metric) {
		h := m.GetHistogram()
		out[key] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
	})
	return out
}

func TestQuotaThrottleCountersReadAtScrape(t *testing.T) {
	var qs []QuotaThrottles
	c := NewQuotaThrottleCounters(func() []QuotaThrottles { return qs })
	if got := samples(t, c); len(got) != 0 {
		t.Fatalf("samples before any throttle: %v", got)
	}
	qs = []QuotaThrottles{{Quota: "producer_byte_rate", Throttles: 3, Seconds: 1.5}}
	want := map[string]float64{
		`strata_quota_throttles_total{quota="producer_byte_rate"}`:        3,
		`strata_quota_throttle_seconds_total{quota="producer_byte_rate"}`: 1.5,
	}
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
	lint(t, c)
}

func TestGroupCountsReadAtScrape(t *testing.T) {
	var rows []GroupCount
	c := NewGroupCounts(func() []GroupCount { return rows })
	rows = []GroupCount{{Type: "classic", State: "Stable", Groups: 2}, {Type: "consumer", State: "Empty", Groups: 1}}
	want := map[string]float64{`strata_groups{state="Stable",type="classic"}`: 2, `strata_groups{state="Empty",type="consumer"}`: 1}
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
	lint(t, c)
}

// Client metrics are shown under Prometheus names, their labels the union
// of their series', counters as counters; a scrape of them gathers.
func TestClientMetricsCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewClientMetrics(func() []ClientSeries {
		return []ClientSeries{
			{Name: "org.apache.kafka.producer.record.send.total", Counter: true, Value: 7,
				Labels: []Label{{"client_instance_id", "a"}, {"client_id", "p1"}, {"topic", "t"}}},
			{Name: "org.apache.kafka.producer.record.send.total", Counter: true, Value: 9,
				Labels: []Label{{"client_instance_id", "b"}, {"client_id", "p2"}}},
			{Name: "org.apache.kafka.producer.record.send.total", Counter: true, Value: 1,
				Labels: []Label{{"client_instance_id", "b"}, {"client_id", "p2"}}}, // a repeat: dropped
			{Name: "node.request.latency-avg", Value: 0.5, Labels: []Label{{"__x", "y"}, {"9lives", "z"}}},
		}
	}))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range families {
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		got[f.GetName()] = fmt.Sprintf("%s %d %v", f.GetType(), len(f.GetMetric()), labels)
	}
	want := map[string]string{
		"strata_client_org_apache_kafka_producer_record_send_total": "COUNTER 2 [client_id client_instance_id topic]",
		"strata_client_node_request_latency_avg":                    "GAUGE 1 [a9lives a__x]",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("gathered %v, want %v", got, want)
	}
}

func TestLogFlushesHistogram(t *testing.T) {
	f := NewLogFlushes()
	f.Observe(200 * time.Microsecond)
	f.Observe(3 * time.Millisecond)
	got := histograms(t, f)
	want := [2]float64{2, 0.0032}
	if g := got["strata_log_flush_seconds{}"]; len(got) != 1 || g[0] != want[0] || math.Abs(g[1]-want[1]) > 1e-9 {
		t.Fatalf("histograms %v, want strata_log_flush_seconds{} %v", got, want)
	}
	lint(t, f)
}

func TestListenerCertificatesReadAtScrape(t *testing.T) {
	certs := []ListenerCertificate{{Listener: "SSL", NotAfter: time.Unix(1800000000, 0)}}
	c := NewListenerCertificates(func() []ListenerCertificate { return certs })
	want := map[string]float64{`strata_listener_certificate_expiry_timestamp_seconds{listener="SSL"}`: 1800000000}
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
	certs = append(certs, ListenerCertificate{Listener: "INTERNAL", NotAfter: time.Unix(1900000000, 0)})
	if got := samples(t, c); len(got) != 2 {
		t.Fatalf("samples %v after a listener was added", got)
	}
	lint(t, c)
}
