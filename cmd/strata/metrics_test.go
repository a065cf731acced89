package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/server"
	"github.com/strata-broker/strata/internal/tier"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestMetricsOffCountsNothing(t *testing.T) {
	m := newBrokerMetrics(&config.Broker{}, nil)
	if m != nil {
		t.Fatalf("metrics on with no listener: %+v", m)
	}
	deps := &broker.TierDeps{Copier: &tier.Copier{}, Deleter: &tier.Deleter{}, Reader: &tier.Reader{}}
	m.countTier(deps)
	h := handlerStub{}
	if deps.Copier.Stats != nil || m.countRequests(h) != server.Handler(h) {
		t.Fatal("a nil brokerMetrics instrumented something")
	}
	if err := m.serve(&config.Broker{}, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	m.printAddr()
	m.stopServing()
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
}

func TestMetricsCountTierAndRequests(t *testing.T) {
	m := newBrokerMetrics(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil)
	deps := &broker.TierDeps{Copier: &tier.Copier{}, Deleter: &tier.Deleter{}, Reader: &tier.Reader{}}
	m.countTier(deps)
	if deps.Copier.Stats != m.tierStats || deps.Deleter.Stats != m.tierStats || deps.Reader.Stats != m.tierStats {
		t.Fatal("the tier executors do not count into the metrics")
	}
	h := m.countRequests(handlerStub{})
	h.Handle(t.Context(), &server.Request{Key: 0})
	h.Handle(t.Context(), &server.Request{Key: 0})
	if n := testutil.ToFloat64(m.requests); n != 2 {
		t.Fatalf("counted %v requests, want 2", n)
	}
	if !h.Supported(0, 9) || h.Supported(1, 0) {
		t.Fatal("the counting handler changed what is supported")
	}
}

// The /metrics series of a deleted topic's partitions go, those of the
// other topics stay, and a topic created again under the same name counts
// from zero: the broker forgets a partition in the tier counters when it
// stops hosting it (internal/broker/tier_stats.go), and the collector
// exports what they hold at each scrape.
func TestMetricsDropTheSeriesOfADeletedTopic(t *testing.T) {
	m := newBrokerMetrics(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil)
	deps := &broker.TierDeps{Copier: &tier.Copier{}, Deleter: &tier.Deleter{}, Reader: &tier.Reader{Store: objstore.NewMem()}}
	m.countTier(deps)
	c := m.tierCollector(func() []broker.PartitionTierGauges { return nil })
	gone, kept := base.TopicPartition{Topic: "gone", Partition: 0}, base.TopicPartition{Topic: "kept", Partition: 0}
	failRead := func(tp base.TopicPartition) {
		t.Helper()
		// A segment that is not COPY_FINISHED: the read fails, and counts.
		if _, err := deps.Reader.Read(t.Context(), remotemeta.RemoteSegment{TP: tp}, 0, 1); err == nil {
			t.Fatal("read of an unreadable segment succeeded")
		}
	}
	requireFetches := func(when, want string) {
		t.Helper()
		want = "# HELP strata_remote_fetch_requests_total Reads served from the remote tier. " +
			"Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteFetchRequestsPerSec.\n" +
			"# TYPE strata_remote_fetch_requests_total counter\n" + want
		if err := testutil.CollectAndCompare(c, strings.NewReader(want), "strata_remote_fetch_requests_total"); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}

	m.tierStats.Track(gone)
	m.tierStats.Track(kept)
	failRead(gone)
	failRead(gone)
	failRead(kept)
	requireFetches("before the delete", `strata_remote_fetch_requests_total{partition="0",topic="gone"} 2
strata_remote_fetch_requests_total{partition="0",topic="kept"} 1
`)
	m.tierStats.Forget(gone)
	failRead(gone) // finished after the topic went
	requireFetches("after the delete", `strata_remote_fetch_requests_total{partition="0",topic="kept"} 1
`)
	if n := testutil.CollectAndCount(c, "strata_remote_fetch_errors_total"); n != 1 {
		t.Fatalf("after the delete, %d fetch error series, want kept's only", n)
	}
	m.tierStats.Track(gone)
	failRead(gone)
	requireFetches("after the topic came back", `strata_remote_fetch_requests_total{partition="0",topic="gone"} 1
strata_remote_fetch_requests_total{partition="0",topic="kept"} 1
`)
}

// /healthz answers 200 "ok" until the shutdown starts, then 503; close
// stops the listener.
func TestHealthzUntilShutdown(t *testing.T) {
	m := newBrokerMetrics(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil)
	if err := m.serve(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil, nil, noAPI{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	url := "http://" + m.ln.Addr().String() + "/healthz"
	if code, body := get(t, url); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("healthz while serving: %d %q", code, body)
	}
	m.stopServing()
	if code, _ := get(t, url); code != http.StatusServiceUnavailable {
		t.Fatalf("healthz while shutting down: %d", code)
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Fatal("healthz still answers after close")
	}
}

func TestMetricsListenerInUseIsOneClearError(t *testing.T) {
	first := newBrokerMetrics(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil)
	if err := first.serve(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil, nil, noAPI{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	defer first.close()
	cfg := &config.Broker{MetricsListener: first.ln.Addr().String()}
	err := newBrokerMetrics(cfg, nil).serve(cfg, nil, nil, noAPI{}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "strata.metrics.listener") {
		t.Fatalf("serve on a taken port: %v", err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// handlerStub supports Produce v9 only.
type handlerStub struct{}

func (handlerStub) Supported(key, version int16) bool { return key == 0 && version == 9 }

func (handlerStub) Handle(context.Context, *server.Request) server.Reply { return server.Reply{} }

// noAPI is an API layer with no fetch session and no throttle.
type noAPI struct{}

func (noAPI) FetchSessions() (sessions, partitions int) { return 0, 0 }
func (noAPI) QuotaThrottles() []quota.KeyStats          { return nil }
