package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metrics"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/server"
	"github.com/strata-broker/strata/internal/tier"
)

// metricsShutdownTimeout bounds the wait for scrapes in flight at shutdown.
const metricsShutdownTimeout = 5 * time.Second

// brokerMetrics is the /metrics and /healthz endpoint on
// strata.metrics.listener (DESIGN §8) and the counters it exports. A nil
// *brokerMetrics is the listener turned off: every method does nothing,
// and the tier executors and the server count nothing.
type brokerMetrics struct {
	tierStats    *tier.Stats
	requests     *metrics.Requests
	requestTimes *metrics.RequestTimes
	logFlushes   *metrics.LogFlushes
	auths        *metrics.Authentications
	logger       *slog.Logger
	// clients receives what clients push (KIP-714), shown as
	// strata_client_*.
	clients *clientMetrics

	// Set by serve.
	ln      net.Listener
	srv     *http.Server
	served  chan struct{} // closed when srv.Serve has returned
	serving atomic.Bool   // what /healthz answers
}

// newBrokerMetrics returns the counters of a broker whose metrics are on,
// nil when strata.metrics.listener is "".
func newBrokerMetrics(cfg *config.Broker, logger *slog.Logger) *brokerMetrics {
	if cfg.MetricsListener == "" {
		return nil
	}
	clients, err := newClientMetrics(cfg)
	if err != nil {
		panic(err) // the defaults are valid
	}
	return &brokerMetrics{
		clients:      clients,
		tierStats:    &tier.Stats{},
		requests:     metrics.NewRequests(kmsg.NameForKey),
		requestTimes: metrics.NewRequestTimes(kmsg.NameForKey),
		logFlushes:   metrics.NewLogFlushes(),
		auths:        metrics.NewAuthentications(),
		logger:       logger,
	}
}

// timeRequests is where the server reports each request's phases; nil
// (no timing) when metrics are off.
func (m *brokerMetrics) timeRequests() server.RequestObserver {
	if m == nil {
		return nil // an untyped nil: a nil *RequestTimes would still be called
	}
	return m.requestTimes
}

// timeLogFlushes is where the broker reports each fdatasync round of a
// partition's log; nil (nothing timed) when metrics are off.
func (m *brokerMetrics) timeLogFlushes() func(time.Duration) {
	if m == nil {
		return nil
	}
	return m.logFlushes.Observe
}

// countAuthentications is where the servers report SASL authentications;
// nil when metrics are off.
func (m *brokerMetrics) countAuthentications() server.AuthObserver {
	if m == nil {
		return nil // an untyped nil, as in timeRequests
	}
	return m.auths
}

// countTier makes the tier executors count into m. It must run before the
// broker starts them.
func (m *brokerMetrics) countTier(d *broker.TierDeps) {
	if m == nil || d == nil {
		return
	}
	d.Copier.Stats, d.Deleter.Stats, d.Reader.Stats = m.tierStats, m.tierStats, m.tierStats
}

// countRequests wraps h so that each request it is handed is counted.
func (m *brokerMetrics) countRequests(h server.Handler) server.Handler {
	if m == nil {
		return h
	}
	return countingHandler{next: h, requests: m.requests}
}

// apiSources is what the metrics read from the API layer (*api.Handler).
type apiSources interface {
	FetchSessions() (sessions, partitions int)
	QuotaThrottles() []quota.KeyStats
}

// quotaThrottles turns the quota manager's counts into the metrics'.
func quotaThrottles(stats []quota.KeyStats) []metrics.QuotaThrottles {
	out := make([]metrics.QuotaThrottles, len(stats))
	for i, s := range stats {
		out[i] = metrics.QuotaThrottles{Quota: s.Key, Throttles: s.Throttles, Seconds: s.Throttled.Seconds()}
	}
	return out
}

// serve listens on cfg.MetricsListener and serves /metrics, with the
// collectors of b, the fetch session gauges, the group census (groups),
// the TLS listeners' certificate expiries (certs) and m's counters, and
// /healthz, which answers 200 until stopServing. Port 0 picks a free port (addr says which).
func (m *brokerMetrics) serve(cfg *config.Broker, b *broker.Broker, cluster func() metrics.ClusterValues, api apiSources, conns *server.ConnLimits, groups func() []metrics.GroupCount, certs func() []metrics.ListenerCertificate) error {
	if m == nil {
		return nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsListener)
	if err != nil {
		return fmt.Errorf("cannot listen for metrics on %s (%v); choose another address with strata.metrics.listener", cfg.MetricsListener, err)
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(
		m.tierCollector(b.TierGauges),
		metrics.NewPartitionCount(func() int { return len(b.Partitions()) }),
		metrics.NewFailedLogCount(func() int { return failedLogs(b.Partitions()) }),
		metrics.NewClusterGauges(cluster),
		metrics.NewPartitionCollector(func() []metrics.PartitionGauges { return partitionGauges(b.Partitions()) }),
		metrics.NewFetchSessionGauges(api.FetchSessions),
		metrics.NewQuotaThrottleCounters(func() []metrics.QuotaThrottles { return quotaThrottles(api.QuotaThrottles()) }),
		metrics.NewCleanerCollector(func() metrics.CleanerValues { return cleanerValues(b.CleanerStatus(), time.Now()) }),
		metrics.NewGroupCounts(groups),
		metrics.NewClientMetrics(m.clients.series),
		metrics.NewListenerCertificates(certs),
		m.requests,
		m.auths,
		m.requestTimes,
		m.logFlushes,
	)
	if conns != nil {
		reg.MustRegister(metrics.NewConnectionGauges(func() metrics.ConnectionValues {
			paced, wait := conns.Paced()
			throttled, held := conns.IPThrottled()
			return metrics.ConnectionValues{Open: conns.Open(), Refused: conns.Refused(), Paced: paced, PacedSeconds: wait.Seconds(),
				IPThrottled: throttled, IPThrottledSeconds: held.Seconds()}
		}))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	mux.HandleFunc("GET /healthz", m.healthz)
	m.ln, m.srv, m.served = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, make(chan struct{})
	m.serving.Store(true)
	go func() {
		defer close(m.served)
		if err := m.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			m.logger.Error("metrics endpoint stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return nil
}

// tierCollector exports m's tier counters and the tier gauges that gauges
// returns, read at each scrape. The counters are those of the partitions
// the broker tracks in m.tierStats, the gauges those of the partitions it
// hosts: a deleted topic's series leave /metrics with its partitions.
func (m *brokerMetrics) tierCollector(gauges func() []broker.PartitionTierGauges) *metrics.TierCollector {
	return metrics.NewTierCollector(metrics.TierSource{
		Counters: func() []metrics.TierCounters { return tierCounters(m.tierStats.Snapshot()) },
		Gauges:   func() []metrics.TierGauges { return tierGauges(gauges()) },
	})
}

// healthz answers 200 "ok" while the broker serves, 503 once it is
// shutting down.
func (m *brokerMetrics) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !m.serving.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
		return
	}
	fmt.Fprintln(w, "ok")
}

// printAddr prints where the metrics are served, the real port included.
func (m *brokerMetrics) printAddr() {
	if m == nil || m.ln == nil {
		return
	}
	fmt.Printf("strata: metrics on http://%s/metrics\n", m.ln.Addr())
}

// stopServing makes /healthz answer 503, at the start of a shutdown, while
// /metrics still serves.
func (m *brokerMetrics) stopServing() {
	if m != nil {
		m.serving.Store(false)
	}
}

// close stops the endpoint, waiting for scrapes in flight.
func (m *brokerMetrics) close() error {
	if m == nil || m.srv == nil {
		return nil
	}
	m.serving.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), metricsShutdownTimeout)
	defer cancel()
	err := m.srv.Shutdown(ctx)
	<-m.served
	return err
}

// countingHandler counts each request before handing it on.
type countingHandler struct {
	next     server.Handler
	requests *metrics.Requests
}

func (c countingHandler) Supported(key, version int16) bool { return c.next.Supported(key, version) }

func (c countingHandler) Handle(ctx context.Context, req *server.Request) server.Reply {
	c.requests.Inc(req.Key)
	return c.next.Handle(ctx, req)
}

// tierCounters turns the tier's counts into the collector's.
func tierCounters(in []tier.PartitionStats) []metrics.TierCounters {
	out := make([]metrics.TierCounters, len(in))
	for i, s := range in {
		out[i] = metrics.TierCounters{
			TP:           s.TP,
			CopyRequests: s.CopyRequests, CopyErrors: s.CopyErrors, CopyBytes: s.CopyBytes,
			FetchRequests: s.FetchRequests, FetchErrors: s.FetchErrors, FetchBytes: s.FetchBytes,
			DeleteRequests: s.DeleteRequests, DeleteErrors: s.DeleteErrors,
		}
	}
	return out
}

// tierGauges turns the broker's tier gauges into the collector's.
func tierGauges(in []broker.PartitionTierGauges) []metrics.TierGauges {
	out := make([]metrics.TierGauges, len(in))
	for i, g := range in {
		out[i] = metrics.TierGauges{
			TP: g.TP, Loaded: g.Loaded, CopyLagKnown: g.CopyLagKnown,
			CopyLagSegments: g.CopyLagSegments, CopyLagBytes: g.CopyLagBytes,
			DeleteLagSegments: g.DeleteLagSegments, DeleteLagBytes: g.DeleteLagBytes,
			RemoteLogSizeBytes: g.RemoteLogSizeBytes, RemoteLogMetadataCount: g.RemoteLogMetadataCount,
			DanglingSegments: g.DanglingSegments, DanglingBytes: g.DanglingBytes,
		}
	}
	return out
}

func cleanerValues(st broker.CleanerStatus, now time.Time) metrics.CleanerValues {
	return metrics.CleanerValues{
		MaxDirtyPercent:     100 * st.MaxDirtyRatio,
		HasRun:              !st.LastRun.IsZero(),
		SinceLastRunSeconds: now.Sub(st.LastRun).Seconds(),
		RecopyPercent:       100 * st.RecopyRatio,
		LastCleanSeconds:    st.LastDuration.Seconds(),
		Uncleanable:         st.Uncleanable,
		Passes:              st.Passes,
		BytesRead:           st.BytesRead,
		BytesWritten:        st.BytesWritten,
	}
}

// failedLogs counts the partitions whose log failed (strata_failed_logs).
func failedLogs(parts []*partition.Partition) int {
	n := 0
	for _, p := range parts {
		if p.LogFailed() != nil {
			n++
		}
	}
	return n
}

// partitionGauges reads the transaction gauges of every hosted partition.
func partitionGauges(parts []*partition.Partition) []metrics.PartitionGauges {
	out := make([]metrics.PartitionGauges, 0, len(parts))
	for _, p := range parts {
		off := p.Offsets()
		out = append(out, metrics.PartitionGauges{
			TP:                  p.TP(),
			LastStableOffsetLag: int64(off.HighWatermark - off.LastStable),
			OpenTransactions:    int64(len(p.OpenTxns())),
		})
	}
	return out
}
