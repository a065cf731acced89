package clientmetrics

import (
	"context"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFranzGoClientPushes runs a real franz-go client against a fake
// cluster whose GetTelemetrySubscriptions and PushTelemetry are answered
// by a Registry: the client's own OTLP encoding and its preferred
// compression (zstd) must decode. It also pins the encoding of "all
// metrics" as [""]: franz-go reads Kafka's ["*"] as a literal prefix and
// would push nothing.
func TestFranzGoClientPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fake cluster and a client")
	}
	r, _ := newTestRegistry(t)
	r.SetSubscriptions(map[string]Subscription{"all": mustParse(t, map[string]string{"metrics": "*", "interval.ms": "100"})})
	sel := Selectors{ClientID: "kgo-test", SoftwareName: "kgo"}

	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gets := make(chan GetResult, 16)
	pushes := make(chan PushResult, 16)
	codecs := make(chan int8, 16)
	c.ControlKey(int16(kmsg.GetTelemetrySubscriptions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		greq := req.(*kmsg.GetTelemetrySubscriptionsRequest)
		g := r.GetSubscriptions(greq.ClientInstanceID, sel)
		resp := greq.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
		resp.ErrorCode = g.ErrorCode
		resp.ClientInstanceID = g.InstanceID
		resp.SubscriptionID = g.SubscriptionID
		resp.AcceptedCompressionTypes = g.AcceptedCompressionTypes
		resp.PushIntervalMillis = g.PushIntervalMs
		resp.TelemetryMaxBytes = g.TelemetryMaxBytes
		resp.DeltaTemporality = g.DeltaTemporality
		resp.RequestedMetrics = g.RequestedMetrics
		gets <- g
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.PushTelemetry), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		preq := req.(*kmsg.PushTelemetryRequest)
		p := r.Push(PushRequest{
			InstanceID:      preq.ClientInstanceID,
			SubscriptionID:  preq.SubscriptionID,
			Terminating:     preq.Terminating,
			CompressionType: preq.CompressionType,
			Metrics:         preq.Metrics,
		}, sel)
		resp := preq.ResponseKind().(*kmsg.PushTelemetryResponse)
		resp.ErrorCode = p.ErrorCode
		pushes <- p
		codecs <- preq.CompressionType
		return resp, nil, true
	})

	userMetrics := func() iter.Seq[kgo.Metric] {
		return slices.Values([]kgo.Metric{{
			Name: "app.queue.depth", Type: kgo.MetricTypeGauge, ValueInt: 42,
			Attrs: map[string]any{"queue": "q1", "leader": true},
		}})
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ClientID("kgo-test"), kgo.UserMetricsFn(userMetrics))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			cl.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-gets:
		if g.ErrorCode != 0 {
			t.Fatalf("get: %+v", g)
		}
	case <-ctx.Done():
		t.Fatal("the client never asked for its subscription")
	}
	// Closing sends the terminating push at once.
	cl.Close()
	closed = true
	var p PushResult
	select {
	case p = <-pushes:
	case <-ctx.Done():
		t.Fatal("the client never pushed")
	}
	if codec := <-codecs; codec != 4 {
		t.Errorf("pushed with codec %d, want zstd (4), the first accepted", codec)
	}
	if p.ErrorCode != 0 {
		t.Fatalf("push: %+v", p)
	}
	checkSamples(t, p.Samples)
	var sawUser, sawClient bool
	for _, s := range p.Samples {
		switch s.Name {
		case "app.queue.depth":
			sawUser = true
			want := []Attribute{{"leader", "true"}, {"queue", "q1"}}
			if s.Kind != KindGauge || s.Value != 42 || !slices.Equal(s.Attributes, want) || s.TimeUnixNano == 0 {
				t.Errorf("user gauge: %+v", s)
			}
		case "org.apache.kafka.producer.connection.creation.total":
			sawClient = true
			if s.Kind != KindCounter || !s.Delta || s.Value < 1 {
				t.Errorf("connection creations: %+v", s)
			}
		}
	}
	if !sawUser || !sawClient {
		t.Fatalf("samples lack the user gauge (%v) or the connection creations (%v): %+v", sawUser, sawClient, p.Samples)
	}
}
