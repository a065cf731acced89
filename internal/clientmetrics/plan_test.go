package clientmetrics

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

func TestInstanceIDKafkaForms(t *testing.T) {
	// Values computed with Kafka's Uuid.toString and Uuid.hashCode.
	for _, tc := range []struct {
		id   InstanceID
		str  string
		hash int32
	}{
		{InstanceID{}, "AAAAAAAAAAAAAAAAAAAAAA", 0},
		{oneInstanceID, "AAAAAAAAAAAAAAAAAAAAAQ", 1},
		{testID, "EgAAAAA0AAAAAAAAAAAAVg", 0x12340056},
		{InstanceID{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff}, "_____wAAAAAAAAAAAAAAAA", -1},
	} {
		if got := tc.id.String(); got != tc.str {
			t.Errorf("%x: String %s, want %s", tc.id[:], got, tc.str)
		}
		if got := tc.id.javaHashCode(); got != tc.hash {
			t.Errorf("%x: hash %d, want %d", tc.id[:], got, tc.hash)
		}
	}
}

func TestSubscriptionIDKnownAnswers(t *testing.T) {
	// CRC32C of Kafka's string, as int32, xor testID's hash 0x12340056.
	for _, tc := range []struct {
		plan Plan
		want int32 // crc of the string in the comment
	}{
		{Plan{PushIntervalMs: 300000}, -725132322 ^ 0x12340056},                                   // "[]300000"
		{Plan{AllMetrics: true, PushIntervalMs: 30000}, -668342513 ^ 0x12340056},                  // "[*]30000"
		{Plan{MetricPrefixes: []string{"a", "b"}, PushIntervalMs: 100}, -1180820619 ^ 0x12340056}, // "[a, b]100"
	} {
		if got := subscriptionID(tc.plan, testID); got != tc.want {
			t.Errorf("%+v: got %d, want %d", tc.plan, got, tc.want)
		}
	}
}

func TestPlanFor(t *testing.T) {
	kafkaDefault := map[string]string{
		"metrics":     "org.apache.kafka.client.producer.partition.queue.,org.apache.kafka.client.producer.partition.latency",
		"interval.ms": "30000",
		"match":       "client_software_name=apache-kafka-java,client_software_version=3.5.*",
	}
	for _, tc := range []struct {
		name      string
		subs      map[string]map[string]string
		sel       Selectors
		requested []string
		interval  int32
	}{
		{"no subscriptions", nil, kafkaTestClient, nil, DefaultIntervalMs},
		{"Kafka's default subscription", map[string]map[string]string{"sub-1": kafkaDefault}, kafkaTestClient,
			[]string{"org.apache.kafka.client.producer.partition.latency", "org.apache.kafka.client.producer.partition.queue."}, 30000},
		{"not matching", map[string]map[string]string{"sub-1": kafkaDefault}, Selectors{SoftwareName: "kgo"}, nil, DefaultIntervalMs},
		{"all metrics wins over prefixes", map[string]map[string]string{"sub-1": kafkaDefault, "sub-2": {"metrics": "*"}}, kafkaTestClient, []string{""}, 30000},
		{"'*' among prefixes is all", map[string]map[string]string{"s": {"metrics": "a,*"}}, kafkaTestClient, []string{""}, DefaultIntervalMs},
		{"union, deduplicated, sorted; smallest interval", map[string]map[string]string{
			"a": {"metrics": "z.,b.", "interval.ms": "2000"},
			"b": {"metrics": "b.,c.", "interval.ms": "1000"},
		}, kafkaTestClient, []string{"b.", "c.", "z."}, 1000},
		{"an interval above the default does not raise it", map[string]map[string]string{"a": {"metrics": "m", "interval.ms": "3600000"}},
			kafkaTestClient, []string{"m"}, DefaultIntervalMs},
		{"a subscription without metrics still sets the interval", map[string]map[string]string{"a": {"interval.ms": "500"}},
			kafkaTestClient, nil, 500},
		{"an empty prefix is kept", map[string]map[string]string{"a": {"metrics": "x,,y"}}, kafkaTestClient, []string{"", "x", "y"}, DefaultIntervalMs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			subs := map[string]Subscription{}
			for name, c := range tc.subs {
				subs[name] = mustParse(t, c)
			}
			p := PlanFor(subs, testID, tc.sel)
			if got := p.RequestedMetrics(); !reflect.DeepEqual(got, tc.requested) {
				t.Errorf("requested %q, want %q", got, tc.requested)
			}
			if p.PushIntervalMs != tc.interval {
				t.Errorf("interval %d, want %d", p.PushIntervalMs, tc.interval)
			}
			if p.SubscriptionID != subscriptionID(p, testID) {
				t.Errorf("subscription id %d is not that of the plan", p.SubscriptionID)
			}
		})
	}
}

// genSubscription draws a subscription over a few prefixes and patterns.
func genSubscription(t *rapid.T) Subscription {
	configs := map[string]string{
		"metrics":     rapid.SampledFrom([]string{"", "*", "a", "a,b", "b,c.", "c."}).Draw(t, "metrics"),
		"interval.ms": strconv.Itoa(rapid.SampledFrom([]int{100, 1000, 300000, 600000}).Draw(t, "interval")),
		"match":       rapid.SampledFrom([]string{"", "client_id=p.*", "client_id=q", "client_software_name=kgo"}).Draw(t, "match"),
	}
	s, err := ParseSubscription("s", configs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanForProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		subs := rapid.MapOf(rapid.StringMatching(`s[0-9]`), rapid.Custom(genSubscription)).Draw(t, "subs")
		sel := Selectors{
			ClientID:     rapid.SampledFrom([]string{"p1", "q"}).Draw(t, "clientID"),
			SoftwareName: rapid.SampledFrom([]string{"kgo", ""}).Draw(t, "software"),
		}
		p := PlanFor(subs, testID, sel)

		// The naive model: union and minimum over the matching ones.
		all, prefixes, interval := false, map[string]bool{}, DefaultIntervalMs
		for _, s := range subs {
			if !s.Matches(testID, sel) {
				continue
			}
			for _, m := range s.Metrics {
				all = all || m == AllMetrics
				prefixes[m] = true
			}
			interval = min(interval, s.IntervalMs)
		}
		want := Plan{AllMetrics: all, PushIntervalMs: interval}
		if !all && len(prefixes) > 0 {
			want.MetricPrefixes = slices.Sorted(maps.Keys(prefixes))
		}
		want.SubscriptionID = p.SubscriptionID
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("plan %+v, model %+v", p, want)
		}

		// A subscription that does not match changes nothing.
		more := maps.Clone(subs)
		more["never"] = mustParseRapid(t, map[string]string{"metrics": "zz", "interval.ms": "100", "match": "client_id=never"})
		if q := PlanFor(more, testID, sel); !reflect.DeepEqual(p, q) {
			t.Fatalf("a subscription that does not match changed %+v into %+v", p, q)
		}

		// The id follows what the client is told: another interval or
		// another metric set changes it.
		other := p
		other.PushIntervalMs = p.PushIntervalMs - 1
		if subscriptionID(other, testID) == p.SubscriptionID {
			t.Fatalf("interval change kept id %d", p.SubscriptionID)
		}
		other = p
		other.AllMetrics = !p.AllMetrics
		other.MetricPrefixes = nil
		if subscriptionID(other, testID) == p.SubscriptionID {
			t.Fatalf("metric set change kept the id")
		}
	})
}

func mustParseRapid(t *rapid.T, configs map[string]string) Subscription {
	s, err := ParseSubscription("s", configs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
