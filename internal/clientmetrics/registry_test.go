package clientmetrics

import (
	"bytes"
	"errors"
	mathrand "math/rand/v2"
	"net/netip"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/clock"
)

var epoch = time.Date(2024, 10, 25, 0, 0, 0, 0, time.UTC)

// newTestRegistry is a registry with Kafka's defaults, a manual clock and
// seeded ids.
func newTestRegistry(t *testing.T, edit ...func(*Options)) (*Registry, *clock.Manual) {
	t.Helper()
	clk := clock.NewManual(epoch)
	o := DefaultOptions(clk)
	o.Rand = mathrand.NewChaCha8([32]byte{1})
	for _, e := range edit {
		e(&o)
	}
	r, err := NewRegistry(o)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

// kafkaSubs is ClientMetricsTestUtils.defaultProperties as "sub-1".
func kafkaSubs(t *testing.T) map[string]Subscription {
	return map[string]Subscription{"sub-1": mustParse(t, map[string]string{
		"metrics":     "org.apache.kafka.client.producer.partition.queue.,org.apache.kafka.client.producer.partition.latency",
		"interval.ms": "30000",
		"match":       "client_software_name=apache-kafka-java,client_software_version=3.5.*",
	})}
}

func TestOptionsValidate(t *testing.T) {
	good := DefaultOptions(clock.NewManual(epoch))
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Options){
		"no clock":       func(o *Options) { o.Clock = nil },
		"no rand":        func(o *Options) { o.Rand = nil },
		"zero max bytes": func(o *Options) { o.TelemetryMaxBytes = 0 },
		"sub-ms expiry":  func(o *Options) { o.CacheExpiry = time.Microsecond },
		"no instances":   func(o *Options) { o.MaxInstances = 0 },
	} {
		o := good
		edit(&o)
		if _, err := NewRegistry(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestDefaultOptionsAreKafkas pins Kafka's defaults: telemetry.max.bytes,
// ClientMetricsManager's DEFAULT_CACHE_EXPIRY_MS and CACHE_MAX_SIZE.
func TestDefaultOptionsAreKafkas(t *testing.T) {
	o := DefaultOptions(clock.NewManual(epoch))
	if o.TelemetryMaxBytes != 1048576 || o.CacheExpiry != 60*time.Second || o.MaxInstances != 16384 || o.CumulativeSums {
		t.Fatalf("defaults %+v", o)
	}
}

func TestGetNewClient(t *testing.T) {
	r, _ := newTestRegistry(t)
	r.SetSubscriptions(kafkaSubs(t))
	got := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	id := got.InstanceID
	if id.reserved() || id[6]>>4 != 4 || id[8]>>6 != 2 || id.String()[0] == '-' {
		t.Fatalf("instance id %x is not a random Kafka Uuid", id[:])
	}
	want := GetResult{
		InstanceID:               id,
		SubscriptionID:           got.SubscriptionID,
		AcceptedCompressionTypes: []int8{4, 3, 1, 2},
		PushIntervalMs:           30000,
		TelemetryMaxBytes:        DefaultTelemetryMaxBytes,
		DeltaTemporality:         true,
		RequestedMetrics:         []string{"org.apache.kafka.client.producer.partition.latency", "org.apache.kafka.client.producer.partition.queue."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got.SubscriptionID == 0 || got.SubscriptionID != PlanFor(kafkaSubs(t), id, kafkaTestClient).SubscriptionID {
		t.Fatalf("subscription id %d", got.SubscriptionID)
	}
	if r.GetSubscriptions(InstanceID{}, kafkaTestClient).InstanceID == id {
		t.Fatal("two new clients got the same id")
	}
}

func TestGetWithoutSubscriptions(t *testing.T) {
	r, _ := newTestRegistry(t)
	got := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got.ErrorCode != 0 || len(got.RequestedMetrics) != 0 || got.PushIntervalMs != DefaultIntervalMs || got.SubscriptionID == 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestGetThrottledWithinInterval(t *testing.T) {
	r, clk := newTestRegistry(t)
	first := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if got := r.GetSubscriptions(first.InstanceID, kafkaTestClient); !reflect.DeepEqual(got, GetResult{ErrorCode: kerr.ThrottlingQuotaExceeded.Code}) {
		t.Fatalf("immediate retry: got %+v", got)
	}
	clk.Advance(time.Duration(DefaultIntervalMs) * time.Millisecond)
	if got := r.GetSubscriptions(first.InstanceID, kafkaTestClient); got.ErrorCode != 0 || got.InstanceID != first.InstanceID {
		t.Fatalf("after the interval: got %+v", got)
	}
}

func TestGetNotThrottledAfterSubscriptionChange(t *testing.T) {
	r, _ := newTestRegistry(t)
	r.SetSubscriptions(kafkaSubs(t))
	first := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	subs := kafkaSubs(t)
	subs["sub-2"] = mustParse(t, map[string]string{"metrics": "*"})
	r.SetSubscriptions(subs)
	got := r.GetSubscriptions(first.InstanceID, kafkaTestClient)
	if got.ErrorCode != 0 || got.SubscriptionID == first.SubscriptionID || !reflect.DeepEqual(got.RequestedMetrics, []string{""}) {
		t.Fatalf("got %+v, first %+v", got, first)
	}
}

// TestReplanKeepsFirstSelectors pins Kafka's reuse of the instance
// metadata of the request that created the instance.
func TestReplanKeepsFirstSelectors(t *testing.T) {
	r, _ := newTestRegistry(t)
	first := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	r.SetSubscriptions(kafkaSubs(t)) // matches apache-kafka-java 3.5.*
	got := r.GetSubscriptions(first.InstanceID, Selectors{SoftwareName: "kgo"})
	if got.PushIntervalMs != 30000 {
		t.Fatalf("re-planned with the new request's selectors: %+v", got)
	}
}

func TestPushOnAnotherBroker(t *testing.T) {
	// Kafka's testGetTelemetrySameClientImmediateRetryAfterPushFail: a
	// broker that never saw the client accepts its push, then throttles
	// its Get.
	a, clk := newTestRegistry(t)
	b, err := NewRegistry(a.opts)
	if err != nil {
		t.Fatal(err)
	}
	a.SetSubscriptions(kafkaSubs(t))
	b.SetSubscriptions(kafkaSubs(t))
	got := a.GetSubscriptions(InstanceID{}, kafkaTestClient)
	clk.Advance(time.Millisecond)
	push := b.Push(PushRequest{InstanceID: got.InstanceID, SubscriptionID: got.SubscriptionID, Metrics: kgoPayload()}, kafkaTestClient)
	if push.ErrorCode != 0 || len(push.Samples) != 5 {
		t.Fatalf("push on the other broker: %+v", push)
	}
	if g := b.GetSubscriptions(got.InstanceID, kafkaTestClient); g.ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("get after the push: %+v", g)
	}
}

func TestInstanceExpiry(t *testing.T) {
	r, clk := newTestRegistry(t)
	// No subscription: the interval is 5 minutes, so instances live
	// 3 × 5 = 15 minutes after their last request.
	id := r.GetSubscriptions(InstanceID{}, kafkaTestClient).InstanceID
	clk.Advance(10 * time.Minute)
	if got := r.GetSubscriptions(id, kafkaTestClient); got.ErrorCode != 0 {
		t.Fatalf("get: %+v", got)
	}
	clk.Advance(15*time.Minute - time.Millisecond)
	if r.Len() != 1 {
		t.Fatal("instance expired before 15 minutes after its last request")
	}
	clk.Advance(time.Millisecond)
	if r.Len() != 0 {
		t.Fatal("instance kept 15 minutes after its last request")
	}
	// A short interval keeps it the one-minute floor.
	r.SetSubscriptions(map[string]Subscription{"s": mustParse(t, map[string]string{"interval.ms": "1000"})})
	id = r.GetSubscriptions(InstanceID{}, kafkaTestClient).InstanceID
	clk.Advance(time.Minute - time.Millisecond)
	if r.Len() != 1 {
		t.Fatal("expired before the cache expiry")
	}
	clk.Advance(time.Millisecond)
	if r.Len() != 0 {
		t.Fatal("kept after the cache expiry")
	}
	// An expired instance is new again: its Get is not throttled.
	if got := r.GetSubscriptions(id, kafkaTestClient); got.ErrorCode != 0 {
		t.Fatalf("get of an expired instance: %+v", got)
	}
}

// TestExpiredInstanceIsNewAgain checks that every request drops expired
// instances before it looks its own up, as Kafka's expiration timer has
// removed them by then: an expired instance is planned from the new
// request's selectors, and a terminating push does not outlive it. No
// other call runs between the expiry and the request.
func TestExpiredInstanceIsNewAgain(t *testing.T) {
	const ttl = 15 * time.Minute // 3 × the default interval
	portSub := map[string]Subscription{"s": mustParse(t, map[string]string{"metrics": "*", "match": "client_source_port=2"})}
	onPort := func(port uint16) Selectors {
		sel := kafkaTestClient
		sel.Source = netip.AddrPortFrom(sel.Source.Addr(), port)
		return sel
	}
	t.Run("get", func(t *testing.T) {
		r, clk := newTestRegistry(t)
		r.SetSubscriptions(portSub)
		id := r.GetSubscriptions(InstanceID{}, onPort(1)).InstanceID
		clk.Advance(ttl)
		got := r.GetSubscriptions(id, onPort(2))
		if got.ErrorCode != 0 || !reflect.DeepEqual(got.RequestedMetrics, []string{""}) {
			t.Fatalf("get from port 2 after the expiry: %+v", got)
		}
	})
	t.Run("push after a terminating push", func(t *testing.T) {
		r, clk := newTestRegistry(t)
		g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
		if got := pushFor(r, g, true, 0, nil); got.ErrorCode != 0 {
			t.Fatalf("terminating push: %+v", got)
		}
		clk.Advance(ttl)
		if got := pushFor(r, g, false, 0, nil); got.ErrorCode != 0 {
			t.Fatalf("push after the expiry: %+v", got)
		}
	})
}

func TestInstanceBound(t *testing.T) {
	r, _ := newTestRegistry(t, func(o *Options) { o.MaxInstances = 3 })
	var ids []InstanceID
	for range 3 {
		ids = append(ids, r.GetSubscriptions(InstanceID{}, kafkaTestClient).InstanceID)
	}
	// Touch the first, so the second is the least recently used.
	r.GetSubscriptions(ids[0], kafkaTestClient)
	r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if r.Len() != 3 {
		t.Fatalf("%d instances kept, bound 3", r.Len())
	}
	// A kept instance is throttled, a forgotten one is new. The one
	// forgotten is checked last, since making it anew evicts another.
	for _, c := range []struct {
		i         int
		throttled bool
	}{{2, true}, {0, true}, {1, false}} {
		got := r.GetSubscriptions(ids[c.i], kafkaTestClient)
		if (got.ErrorCode == kerr.ThrottlingQuotaExceeded.Code) != c.throttled {
			t.Errorf("instance %d: %+v, want throttled %v", c.i, got, c.throttled)
		}
	}
}

func TestForget(t *testing.T) {
	r, _ := newTestRegistry(t)
	id := r.GetSubscriptions(InstanceID{}, kafkaTestClient).InstanceID
	if !r.Forget(id) || r.Forget(id) || r.Len() != 0 {
		t.Fatal("forget")
	}
}

func TestSetSubscriptionsRejectsUnparsed(t *testing.T) {
	for name, s := range map[string]Subscription{
		"zero":               {},
		"uncompiled pattern": {IntervalMs: DefaultIntervalMs, Match: []MatchPattern{{Selector: SelectorClientID, Regex: "a"}}},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := newTestRegistry(t)
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			r.SetSubscriptions(map[string]Subscription{"raw": s})
		})
	}
}

// TestNewClientsGetDistinctIDs checks that a new client never gets the id
// of a cached instance, as Kafka's generateNewClientId skips them, even
// when the random source draws it again.
func TestNewClientsGetDistinctIDs(t *testing.T) {
	twiceThenAnother := append(bytes.Repeat([]byte{0x11}, 32), bytes.Repeat([]byte{0x22}, 16)...)
	r, _ := newTestRegistry(t, func(o *Options) { o.Rand = bytes.NewReader(twiceThenAnother) })
	first := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	second := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
	if second.ErrorCode != 0 || second.InstanceID == first.InstanceID || r.Len() != 2 {
		t.Fatalf("first %+v, second %+v, %d instances", first, second, r.Len())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestNewInstanceID(t *testing.T) {
	// Draws that start with '-' (0xf8 has top six bits 62) or are taken
	// are skipped.
	src := mathrand.NewChaCha8([32]byte{2})
	taken := map[InstanceID]bool{}
	for range 1000 {
		id, err := newInstanceID(src, func(id InstanceID) bool { return taken[id] })
		if err != nil {
			t.Fatal(err)
		}
		if taken[id] || id.reserved() || id.String()[0] == '-' {
			t.Fatalf("bad id %s", id)
		}
		taken[id] = true
	}
	if _, err := newInstanceID(src, func(InstanceID) bool { return true }); err == nil {
		t.Fatal("no error when every id is taken")
	}
	if _, err := newInstanceID(failingReader{}, func(InstanceID) bool { return false }); err == nil {
		t.Fatal("no error from a failing source")
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r, clk := newTestRegistry(t, func(o *Options) { o.MaxInstances = 8 })
	r.SetSubscriptions(map[string]Subscription{"s": mustParse(t, map[string]string{"metrics": "*", "interval.ms": "100"})})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				g := r.GetSubscriptions(InstanceID{}, kafkaTestClient)
				r.Push(PushRequest{InstanceID: g.InstanceID, SubscriptionID: g.SubscriptionID, Metrics: kgoPayload()}, kafkaTestClient)
				if i%50 == 0 && w == 0 {
					clk.Advance(time.Second)
					r.SetSubscriptions(map[string]Subscription{})
				}
			}
		})
	}
	wg.Wait()
	if n := r.Len(); n > 8 {
		t.Fatalf("%d instances, bound 8", n)
	}
}
