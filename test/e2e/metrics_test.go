package e2e

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricsLine is what the broker prints when strata.metrics.listener is set.
var metricsLine = regexp.MustCompile(`(?m)^strata: metrics on (http://127\.0\.0\.1:\d+)/metrics$`)

// metricsBase is where b serves /metrics and /healthz, from the line it
// printed; b runs with strata.metrics.listener set.
func metricsBase(t *testing.T, b *Broker) string {
	t.Helper()
	m := metricsLine.FindStringSubmatch(b.output.String())
	if m == nil {
		t.Fatalf("no metrics line in the broker output:\n%s", b.output.String())
	}
	return m[1]
}

// TestMetricsEndpoint runs a tiered topic with the metrics listener on
// port 0 and scrapes it: the KIP-963 counters and gauges describe what
// the tier did (segments copied, then read back from the remote tier),
// the copy lag gauges are present, requests are counted and timed, and
// /healthz answers 200.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	b := startTieredBroker(t, t.TempDir(), "strata.metrics.listener=127.0.0.1:0")
	base := metricsBase(t, b)
	if code, body := httpGet(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}

	const topic = "metered"
	values := fillTieredTopic(t, b.Addr, topic, 150)
	waitTiered(t, b.Addr, topic)
	checkAll(t, b.Addr, topic, values) // reads the first offsets from the remote tier

	series := func(name string) string { return name + `{partition="0",topic="` + topic + `"}` }
	deadline := time.Now().Add(tierSettle)
	for {
		s := scrape(t, base+"/metrics")
		missing := ""
		for _, name := range []string{
			"strata_remote_copy_bytes_total", "strata_remote_copy_requests_total", "strata_remote_log_size_bytes",
			"strata_remote_log_metadata_entries", "strata_remote_fetch_bytes_total", "strata_remote_fetch_requests_total",
		} {
			if s[series(name)] <= 0 {
				missing += " " + name
			}
		}
		for _, name := range []string{"strata_remote_copy_lag_bytes", "strata_remote_copy_lag_segments", "strata_remote_dangling_segments"} {
			if _, ok := s[series(name)]; !ok {
				missing += " " + name + "(absent)"
			}
		}
		if s[`strata_requests_total{request="Produce"}`] < float64(len(values)) || s["strata_partitions"] < 1 {
			missing += " strata_requests_total/strata_partitions"
		}
		if s["strata_log_flush_seconds_count"] < 1 { // acks=all produces waited for rounds
			missing += " strata_log_flush_seconds"
		}
		for _, phase := range []string{"total", "local", "response_queue", "remote", "send"} {
			for _, request := range []string{"Produce", "Fetch"} {
				if name := "strata_request_" + phase + `_seconds_count{request="` + request + `"}`; s[name] < 1 {
					missing += " " + name
				}
			}
		}
		if missing == "" {
			if errs := s[series("strata_remote_copy_errors_total")] + s[series("strata_remote_fetch_errors_total")]; errs != 0 {
				t.Fatalf("%v remote copy and fetch errors", errs)
			}
			t.Logf("copied %v bytes, remote log %v bytes, copy lag %v bytes, fetched %v bytes",
				s[series("strata_remote_copy_bytes_total")], s[series("strata_remote_log_size_bytes")],
				s[series("strata_remote_copy_lag_bytes")], s[series("strata_remote_fetch_bytes_total")])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, not yet positive:%s", tierSettle, missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scrape GETs a Prometheus text page and returns each sample's value by
// its series, as printed (name{label="value",...}).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	code, body := httpGet(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", url, code, body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		v, err := strconv.ParseFloat(value, 64)
		if !ok || err != nil {
			t.Fatalf("GET %s: bad sample line %q", url, line)
		}
		out[series] = v
	}
	return out
}

// httpGet GETs url on a connection of its own, closed after, so that no
// keep-alive goroutine outlives the test (TestMain checks for leaks).
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(testContext(t, 10*time.Second), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}
