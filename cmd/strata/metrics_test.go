package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/server"
	"github.com/strata-broker/strata/internal/tier"
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
	if err := m.serve(&config.Broker{}, nil); err != nil {
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

// /healthz answers 200 "ok" until the shutdown starts, then 503; close
// stops the listener.
func TestHealthzUntilShutdown(t *testing.T) {
	m := newBrokerMetrics(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil)
	if err := m.serve(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil); err != nil {
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
	if err := first.serve(&config.Broker{MetricsListener: "127.0.0.1:0"}, nil); err != nil {
		t.Fatal(err)
	}
	defer first.close()
	cfg := &config.Broker{MetricsListener: first.ln.Addr().String()}
	err := newBrokerMetrics(cfg, nil).serve(cfg, nil)
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
