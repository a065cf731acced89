package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientMetricsPushedToTheMetricsEndpoint (KIP-714): an operator
// subscribes to client metrics with a CLIENT_METRICS config resource; an
// unchanged franz-go client then asks for its subscription and pushes its
// metrics, which the broker shows on its metrics endpoint as
// strata_client_* with the client's labels. A broker without a metrics
// endpoint does not advertise the client telemetry APIs, so clients push
// nothing to it.
func TestClientMetricsPushedToTheMetricsEndpoint(t *testing.T) {
	t.Parallel()
	plain := startBroker(t, t.TempDir())
	if advertises(t, plain.Addr, kmsg.GetTelemetrySubscriptions.Int16()) {
		t.Fatal("a broker without a metrics endpoint advertises GetTelemetrySubscriptions")
	}

	b := startBroker(t, t.TempDir(), "strata.metrics.listener=127.0.0.1:0")
	base := metricsBase(t, b)
	if !advertises(t, b.Addr, kmsg.GetTelemetrySubscriptions.Int16()) || !advertises(t, b.Addr, kmsg.PushTelemetry.Int16()) {
		t.Fatal("a broker with a metrics endpoint does not advertise the client telemetry APIs")
	}
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeClientMetrics, "everything"
	for k, v := range map[string]string{"metrics": "*", "interval.ms": "200"} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, kmsg.StringPtr(v), kmsg.IncrementalAlterConfigOpSet
		res.Configs = append(res.Configs, c)
	}
	alter.Resources = append(alter.Resources, res)
	resp, err := alter.RequestWith(testContext(t, 10*time.Second), newClient(t, b.Addr))
	if err == nil {
		err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("subscribing to every client metric: %v", err)
	}

	// Client metrics on (newClient turns them off).
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ClientID("telemetry-e2e"), kgo.DefaultProduceTopic("telemetry"),
		kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := cl.ProduceSync(testContext(t, 10*time.Second), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		var found []string
		for series := range scrape(t, base+"/metrics") {
			if strings.HasPrefix(series, "strata_client_") && strings.Contains(series, `client_id="telemetry-e2e"`) &&
				strings.Contains(series, `client_software_name="kgo"`) {
				found = append(found, series)
			}
		}
		if len(found) > 0 {
			t.Logf("client metrics shown: %d series, e.g. %s", len(found), found[0])
			return
		}
		if time.Now().After(deadline) {
			var any []string
			for series := range scrape(t, base+"/metrics") {
				if strings.HasPrefix(series, "strata_client_") {
					any = append(any, series)
				}
			}
			t.Fatalf("no strata_client_* series of the client after 30s; client series: %v", any)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// advertises reports whether the broker at addr lists API key in its
// ApiVersions answer.
func advertises(t *testing.T, addr string, key int16) bool {
	t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testContext(t, 10*time.Second), newClient(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			return true
		}
	}
	return false
}
