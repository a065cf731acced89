package clientmetrics

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/clock"
)

// Kafka's ClientMetricsManager and telemetry.max.bytes defaults.
const (
	// DefaultTelemetryMaxBytes is telemetry.max.bytes: the largest
	// (compressed) PushTelemetry payload accepted.
	DefaultTelemetryMaxBytes int32 = 1 << 20
	// DefaultCacheExpiry is the shortest an idle instance is kept
	// (DEFAULT_CACHE_EXPIRY_MS); instances with long push intervals are
	// kept three intervals.
	DefaultCacheExpiry = time.Minute
	// DefaultMaxInstances bounds the instances kept (CACHE_MAX_SIZE: 16k
	// active client connections per broker).
	DefaultMaxInstances = 16384
)

// Options configure a Registry.
type Options struct {
	// Clock tells the time of requests and expiries.
	Clock clock.Clock
	// Rand draws new instance ids. It must not fail: crypto/rand.Reader
	// never does.
	Rand io.Reader
	// TelemetryMaxBytes is telemetry.max.bytes, at least 1.
	TelemetryMaxBytes int32
	// CacheExpiry is the shortest time an instance is kept after its last
	// request; the time is max(CacheExpiry, 3 × its push interval).
	CacheExpiry time.Duration
	// MaxInstances bounds the instances kept; beyond it the least
	// recently used is forgotten.
	MaxInstances int
	// CumulativeSums asks clients for cumulative sums (DeltaTemporality
	// false), what a Prometheus exporter shows as counters; Kafka asks
	// for deltas.
	CumulativeSums bool
}

// DefaultOptions are Kafka's defaults with the given clock and
// crypto/rand.
func DefaultOptions(clk clock.Clock) Options {
	return Options{
		Clock:             clk,
		Rand:              rand.Reader,
		TelemetryMaxBytes: DefaultTelemetryMaxBytes,
		CacheExpiry:       DefaultCacheExpiry,
		MaxInstances:      DefaultMaxInstances,
	}
}

// Validate reports the first option that is missing or out of range.
func (o Options) Validate() error {
	switch {
	case o.Clock == nil:
		return errors.New("clientmetrics: Options.Clock is nil")
	case o.Rand == nil:
		return errors.New("clientmetrics: Options.Rand is nil")
	case o.TelemetryMaxBytes < 1:
		return fmt.Errorf("clientmetrics: telemetry max bytes %d is below 1", o.TelemetryMaxBytes)
	case o.CacheExpiry < time.Millisecond:
		return fmt.Errorf("clientmetrics: cache expiry %v is below 1ms", o.CacheExpiry)
	case o.MaxInstances < 1:
		return fmt.Errorf("clientmetrics: max instances %d is below 1", o.MaxInstances)
	}
	return nil
}

// Registry is Kafka's ClientMetricsManager without its I/O: the
// subscription set and the client instances, deciding the answers to
// GetTelemetrySubscriptions and PushTelemetry. Safe for concurrent use.
type Registry struct {
	opts Options
	mu   struct {
		sync.Mutex
		subs map[string]Subscription
		// version counts SetSubscriptions calls; an instance planned
		// from an older version is planned again on its next request.
		version   uint64
		instances *instanceCache
	}
}

// NewRegistry returns a registry with no subscriptions and no instances.
func NewRegistry(o Options) (*Registry, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &Registry{opts: o}
	r.mu.subs = map[string]Subscription{}
	r.mu.instances = newInstanceCache(o.MaxInstances)
	return r, nil
}

// SetSubscriptions replaces the subscription set, keyed by CLIENT_METRICS
// resource name. Every subscription must come from ParseSubscription. Each
// call counts as a change, as each of Kafka's updateSubscription calls
// does: every instance is planned again on its next request, which also
// resets its throttling (Kafka makes a new ClientMetricsInstance).
func (r *Registry) SetSubscriptions(subs map[string]Subscription) {
	for name, s := range subs {
		checkParsed(name, s)
	}
	subs = maps.Clone(subs)
	if subs == nil {
		subs = map[string]Subscription{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.subs = subs
	r.mu.version++
}

// checkParsed panics unless s keeps ParseSubscription's invariants.
func checkParsed(name string, s Subscription) {
	ok := s.IntervalMs >= MinIntervalMs && s.IntervalMs <= MaxIntervalMs
	for _, p := range s.Match {
		ok = ok && p.full != nil
	}
	if !ok {
		panic(fmt.Sprintf("clientmetrics: subscription %q was not made by ParseSubscription", name))
	}
}

// GetResult is the answer to GetTelemetrySubscriptions. When ErrorCode is
// not 0 the other fields are zero, as in Kafka's error response.
type GetResult struct {
	ErrorCode                int16
	InstanceID               InstanceID
	SubscriptionID           int32
	AcceptedCompressionTypes []int8
	PushIntervalMs           int32
	TelemetryMaxBytes        int32
	DeltaTemporality         bool
	RequestedMetrics         []string
}

// GetSubscriptions answers GetTelemetrySubscriptions for the client
// instance id (zero: a new client, which gets a new id) connected with
// selectors sel, as Kafka's processGetTelemetrySubscriptionRequest. A Get
// within a push interval of the instance's last accepted Get or Push is
// THROTTLING_QUOTA_EXCEEDED, unless the subscriptions changed since.
//
// Kafka also meant to let a Get through right after a push failed with
// UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE, but its
// condition (error != A || error != B) is always true, so it never does;
// this mirrors what Kafka does.
func (r *Registry) GetSubscriptions(id InstanceID, sel Selectors) GetResult {
	nowMs := r.opts.Clock.Now().UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.instances.expire(nowMs)
	if id.IsZero() {
		var err error
		id, err = newInstanceID(r.opts.Rand, func(id InstanceID) bool { return r.mu.instances.byID[id] != nil })
		if err != nil {
			panic(err) // Options.Rand must not fail
		}
	}
	inst := r.instanceLocked(id, sel, nowMs)
	times, ok := acceptGet(inst.times, nowMs, inst.plan.PushIntervalMs)
	if !ok {
		return GetResult{ErrorCode: kerr.ThrottlingQuotaExceeded.Code}
	}
	inst.times = times
	return GetResult{
		InstanceID:               id,
		SubscriptionID:           inst.plan.SubscriptionID,
		AcceptedCompressionTypes: append([]int8(nil), acceptedCompressionTypes...),
		PushIntervalMs:           inst.plan.PushIntervalMs,
		TelemetryMaxBytes:        r.opts.TelemetryMaxBytes,
		DeltaTemporality:         !r.opts.CumulativeSums,
		RequestedMetrics:         inst.plan.RequestedMetrics(),
	}
}

// instanceLocked is Kafka's ClientMetricsManager.clientInstance: the
// instance of id, made if unknown (as on a broker the client has not
// asked before) and planned again if the subscriptions changed since its
// plan, with its expiry pushed back.
func (r *Registry) instanceLocked(id InstanceID, sel Selectors, nowMs int64) *instance {
	c := r.mu.instances
	inst := c.get(id)
	if inst == nil || inst.version < r.mu.version {
		if inst != nil {
			sel = inst.selectors
		}
		inst = &instance{id: id, selectors: sel, plan: PlanFor(r.mu.subs, id, sel), version: r.mu.version}
		c.put(inst)
	}
	ttlMs := max(r.opts.CacheExpiry.Milliseconds(), 3*int64(inst.plan.PushIntervalMs))
	c.setDeadline(inst, nowMs+ttlMs)
	return inst
}

// Forget drops the instance of id, as Kafka does when the client's
// connection closes (ClientConnectionDisconnectListener), and reports
// whether there was one. The caller maps connections to instance ids.
func (r *Registry) Forget(id InstanceID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.instances.remove(id)
}

// Len returns how many instances are kept, after dropping expired ones.
func (r *Registry) Len() int {
	nowMs := r.opts.Clock.Now().UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.instances.expire(nowMs)
	return r.mu.instances.len()
}
