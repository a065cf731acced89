package clientmetrics

import (
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Plan is what one client instance is told to push: the union of the
// subscriptions that match it. Invariants: MetricPrefixes is sorted,
// without duplicates, and empty when AllMetrics; MinIntervalMs <=
// PushIntervalMs <= DefaultIntervalMs.
type Plan struct {
	// AllMetrics is set when a matching subscription lists AllMetrics.
	AllMetrics bool
	// MetricPrefixes is the union of the matching subscriptions' metric
	// prefixes, when not AllMetrics. An empty prefix is kept: clients
	// read it as "every metric".
	MetricPrefixes []string
	// PushIntervalMs is the smallest interval.ms of the matching
	// subscriptions, capped by Kafka's default.
	PushIntervalMs int32
	// SubscriptionID identifies the plan for this instance; see
	// subscriptionID.
	SubscriptionID int32
}

// PlanFor computes the plan of the client with instance id id and
// selectors sel, as Kafka's ClientMetricsManager.createClientInstance
// does. The interval starts at Kafka's default and only goes down: a
// subscription asking for a longer interval does not lengthen it.
func PlanFor(subs map[string]Subscription, id InstanceID, sel Selectors) Plan {
	p := Plan{PushIntervalMs: DefaultIntervalMs}
	prefixes := map[string]struct{}{}
	// Sorted names only make the loop deterministic; the union and the
	// minimum do not depend on the order.
	for _, name := range slices.Sorted(maps.Keys(subs)) {
		s := subs[name]
		if !s.Matches(id, sel) {
			continue
		}
		for _, m := range s.Metrics {
			if m == AllMetrics {
				p.AllMetrics = true
			}
			prefixes[m] = struct{}{}
		}
		p.PushIntervalMs = min(p.PushIntervalMs, s.IntervalMs)
	}
	if !p.AllMetrics && len(prefixes) > 0 {
		p.MetricPrefixes = slices.Sorted(maps.Keys(prefixes))
	}
	p.SubscriptionID = subscriptionID(p, id)
	return p
}

// RequestedMetrics is the plan as GetTelemetrySubscriptions'
// RequestedMetrics field encodes it: no metrics is an empty array, all
// metrics an array holding one empty string, as the protocol defines the
// field ("Array[0] empty string: All metrics subscribed").
//
// Kafka's broker sends ["*"] for all metrics instead. The Java client and
// librdkafka read both forms as "all" (they compare with "*" and otherwise
// prefix-match, and every name has the prefix ""), but franz-go reads only
// [""] as all and takes "*" as a literal prefix that matches nothing. The
// empty string is what every client understands.
func (p Plan) RequestedMetrics() []string {
	if p.AllMetrics {
		return []string{""}
	}
	return slices.Clone(p.MetricPrefixes)
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// subscriptionID is Kafka's ClientMetricsManager.computeSubscriptionId: the
// CRC32C of the requested metric set's Java toString ("[a, b]", "[*]" for
// all metrics, "[]" for none) followed by the push interval in decimal,
// xored with the instance id's hash code. It depends only on what the
// client is told and on the instance, never on the broker, so a client
// that pushes to another broker than the one it asked presents an id that
// broker computes too.
//
// Kafka renders its HashSet in hash order; here the set is sorted. The ids
// therefore differ from Kafka's for sets of two or more prefixes, which
// does not matter: every Strata broker computes the same id, and clients
// only echo it.
func subscriptionID(p Plan, id InstanceID) int32 {
	set := p.MetricPrefixes
	if p.AllMetrics {
		set = []string{AllMetrics}
	}
	s := "[" + strings.Join(set, ", ") + "]" + strconv.Itoa(int(p.PushIntervalMs))
	return int32(crc32.Checksum([]byte(s), crc32c)) ^ id.javaHashCode()
}
