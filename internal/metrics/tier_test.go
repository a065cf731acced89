package metrics

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/strata-broker/strata/internal/base"
)

func TestTierCollectorExportsCountersPerPartition(t *testing.T) {
	tp := base.TopicPartition{Topic: "orders", Partition: 3}
	c := NewTierCollector(TierSource{Counters: func() []TierCounters {
		return []TierCounters{{
			TP: tp, CopyRequests: 5, CopyErrors: 1, CopyBytes: 4096,
			FetchRequests: 7, FetchErrors: 2, FetchBytes: 1000, DeleteRequests: 3, DeleteErrors: 0,
		}}
	}})
	want := `
# HELP strata_remote_copy_bytes_total Bytes of log data uploaded to the remote tier by uploads that finished. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteCopyBytesPerSec.
# TYPE strata_remote_copy_bytes_total counter
strata_remote_copy_bytes_total{partition="3",topic="orders"} 4096
# HELP strata_remote_copy_errors_total Segment uploads to the remote tier that failed. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteCopyErrorsPerSec.
# TYPE strata_remote_copy_errors_total counter
strata_remote_copy_errors_total{partition="3",topic="orders"} 1
# HELP strata_remote_copy_requests_total Segment uploads to the remote tier attempted. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteCopyRequestsPerSec.
# TYPE strata_remote_copy_requests_total counter
strata_remote_copy_requests_total{partition="3",topic="orders"} 5
# HELP strata_remote_delete_errors_total Remote segment deletions that failed. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteDeleteErrorsPerSec.
# TYPE strata_remote_delete_errors_total counter
strata_remote_delete_errors_total{partition="3",topic="orders"} 0
# HELP strata_remote_delete_requests_total Remote segment deletions attempted. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteDeleteRequestsPerSec.
# TYPE strata_remote_delete_requests_total counter
strata_remote_delete_requests_total{partition="3",topic="orders"} 3
# HELP strata_remote_fetch_bytes_total Bytes of record batches read from the remote tier. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteFetchBytesPerSec.
# TYPE strata_remote_fetch_bytes_total counter
strata_remote_fetch_bytes_total{partition="3",topic="orders"} 1000
# HELP strata_remote_fetch_errors_total Reads from the remote tier that failed. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteFetchErrorsPerSec.
# TYPE strata_remote_fetch_errors_total counter
strata_remote_fetch_errors_total{partition="3",topic="orders"} 2
# HELP strata_remote_fetch_requests_total Reads served from the remote tier. Kafka: kafka.server:type=BrokerTopicMetrics,name=RemoteFetchRequestsPerSec.
# TYPE strata_remote_fetch_requests_total counter
strata_remote_fetch_requests_total{partition="3",topic="orders"} 7
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	lint(t, c)
}

func TestTierCollectorExportsOnlyKnownGauges(t *testing.T) {
	known := base.TopicPartition{Topic: "t", Partition: 0}
	lagUnknown := base.TopicPartition{Topic: "t", Partition: 1}
	notLoaded := base.TopicPartition{Topic: "t", Partition: 2}
	c := NewTierCollector(TierSource{Gauges: func() []TierGauges {
		return []TierGauges{
			{
				TP: known, Loaded: true, CopyLagKnown: true, CopyLagSegments: 2, CopyLagBytes: 2000,
				DeleteLagSegments: 1, DeleteLagBytes: 100, RemoteLogSizeBytes: 9000, RemoteLogMetadataCount: 4,
				DanglingSegments: 1, DanglingBytes: 50,
			},
			{TP: lagUnknown, Loaded: true, RemoteLogSizeBytes: 10, RemoteLogMetadataCount: 1},
			{TP: notLoaded},
		}
	}})
	want := map[string]float64{
		`strata_remote_copy_lag_segments{partition="0",topic="t"}`:    2,
		`strata_remote_copy_lag_bytes{partition="0",topic="t"}`:       2000,
		`strata_remote_delete_lag_segments{partition="0",topic="t"}`:  1,
		`strata_remote_delete_lag_bytes{partition="0",topic="t"}`:     100,
		`strata_remote_log_size_bytes{partition="0",topic="t"}`:       9000,
		`strata_remote_log_metadata_entries{partition="0",topic="t"}`: 4,
		`strata_remote_dangling_segments{partition="0",topic="t"}`:    1,
		`strata_remote_dangling_bytes{partition="0",topic="t"}`:       50,
		`strata_remote_delete_lag_segments{partition="1",topic="t"}`:  0,
		`strata_remote_delete_lag_bytes{partition="1",topic="t"}`:     0,
		`strata_remote_log_size_bytes{partition="1",topic="t"}`:       10,
		`strata_remote_log_metadata_entries{partition="1",topic="t"}`: 1,
		`strata_remote_dangling_segments{partition="1",topic="t"}`:    0,
		`strata_remote_dangling_bytes{partition="1",topic="t"}`:       0,
	}
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("samples =\n %v, want\n %v", got, want)
	}
	lint(t, c)
}

// samples gathers c and returns each sample's value by name{labels}.
func samples(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	eachSeries(t, c, func(key string, m *dto.Metric) {
		out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
	})
	return out
}

// eachSeries gathers c through a pedantic registry and calls f with each
// series as name{label="value",...}.
func eachSeries(t *testing.T, c prometheus.Collector, f func(key string, m *dto.Metric)) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		for _, m := range fam.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			f(fam.GetName()+"{"+strings.Join(labels, ",")+"}", m)
		}
	}
}

// lint fails t on any problem promlint finds in c's metrics.
func lint(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
}

func TestTierCollectorWithNoSource(t *testing.T) {
	if n := testutil.CollectAndCount(NewTierCollector(TierSource{})); n != 0 {
		t.Fatalf("collected %d samples from no source", n)
	}
}
