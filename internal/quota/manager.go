package quota

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// idleMeterTTL is how long a meter nobody records on is kept (Kafka
// expires a quota sensor after an hour without use).
const idleMeterTTL = time.Hour

// sweepEvery is how often Record looks for idle meters to drop.
const sweepEvery = time.Minute

// meterKey names one meter: a quota key counted for a meter entity.
type meterKey struct {
	key   string
	meter Entity
}

// Manager meters the clients that have quotas and says how long each must
// be throttled, as Kafka's ClientQuotaManager. It is safe for concurrent
// use.
type Manager struct {
	cfg Config
	mu  struct {
		sync.Mutex
		meters    map[meterKey]*meter
		buckets   map[meterKey]*bucket // controller_mutation_rate
		lastSweep time.Time
		stats     map[string]*KeyStats
	}
}

// KeyStats is what the quotas of one key have throttled since the Manager
// began: the responses throttled and their throttle times summed.
type KeyStats struct {
	Key       string
	Throttles int64
	Throttled time.Duration
}

// NewManager returns a Manager sampling as cfg says; a zero field takes
// Kafka's default.
func NewManager(cfg Config) *Manager {
	if cfg.Samples < 2 {
		cfg.Samples = DefaultSamples
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	m := &Manager{cfg: cfg}
	m.mu.meters = make(map[meterKey]*meter)
	m.mu.buckets = make(map[meterKey]*bucket)
	m.mu.stats = make(map[string]*KeyStats)
	return m
}

// Record counts n bytes on key for the quota a applies (Resolve) at now,
// and returns how long the client must now be throttled: 0 while its rate
// is within the quota.
func (m *Manager) Record(key string, a Applied, n int64, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, d := m.recordLocked(key, a, float64(n), now)
	if d > 0 {
		m.countLocked(key, d)
	}
	return d
}

// RecordRequestTime counts took, the time spent handling one request of a
// client whose request_percentage quota is a, as percent-seconds (so that
// the metered rate is a percentage of one core, as Kafka's request-time
// sensor), and returns how long the client must now be throttled: at most
// one window, as Kafka's ClientRequestQuotaManager bounds it (the next
// request of a client still over its quota is throttled again).
func (m *Manager) RecordRequestTime(a Applied, took time.Duration, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, d := m.recordLocked(RequestPercentage, a, took.Seconds()*100, now)
	d = min(d, m.cfg.Window)
	if d > 0 {
		m.countLocked(RequestPercentage, d)
	}
	return d
}

// recordLocked counts n on the meter of a's client on key and returns the
// meter and the throttle the client is now due.
func (m *Manager) recordLocked(key string, a Applied, v float64, now time.Time) (*meter, time.Duration) {
	m.sweepLocked(now)
	mt := m.meterLocked(key, a)
	rate := mt.record(m.cfg, v, now)
	return mt, Throttle(m.cfg, rate, a.Bound, now.Sub(mt.samples[0].start))
}

// meterLocked is the meter of a's client on key, made when new.
func (m *Manager) meterLocked(key string, a Applied) *meter {
	k := meterKey{key: key, meter: a.Meter}
	mt := m.mu.meters[k]
	if mt == nil {
		mt = &meter{}
		m.mu.meters[k] = mt
	}
	return mt
}

// countLocked adds a throttle of d on key to the stats.
func (m *Manager) countLocked(key string, d time.Duration) {
	s := m.mu.stats[key]
	if s == nil {
		s = &KeyStats{Key: key}
		m.mu.stats[key] = s
	}
	s.Throttles++
	s.Throttled += d
}

// Stats returns what each key's quotas have throttled, by key; a key that
// has throttled nothing is left out.
func (m *Manager) Stats() []KeyStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]KeyStats, 0, len(m.mu.stats))
	for _, s := range m.mu.stats {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b KeyStats) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Take is Record for bytes that need not be served (a fetch response):
// when the client's rate with them stays within its quota, it counts
// them and returns 0; otherwise it counts nothing and returns how long
// the client must wait, and the caller answers without them, as Kafka
// answers a throttled fetch empty.
func (m *Manager) Take(key string, a Applied, n int64, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	mt, d := m.recordLocked(key, a, float64(n), now)
	if d > 0 {
		mt.unrecord(float64(n))
		m.countLocked(key, d)
	}
	return d
}

// WindowBytes is the most a client with bound may move in one go without
// going over its quota from a standing start: the bound over the samples
// but one (Kafka's getMaxValueInQuotaWindow). A fetch response is never
// made larger, or a consumer whose responses are could never be served.
// It saturates at the int64 maximum (as Kafka's toInt of the window does),
// or a huge quota's fetches would shrink to a byte.
func (m *Manager) WindowBytes(bound float64) int64 {
	return saturatingInt64(bound * float64(m.cfg.Samples-1) * m.cfg.Window.Seconds())
}

// Meters is how many meters are live (for tests and metrics).
func (m *Manager) Meters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mu.meters)
}

// sweepLocked drops the meters idle for idleMeterTTL, at most once every
// sweepEvery.
func (m *Manager) sweepLocked(now time.Time) {
	if now.Sub(m.mu.lastSweep) < sweepEvery {
		return
	}
	m.mu.lastSweep = now
	for k, mt := range m.mu.meters {
		if now.Sub(mt.last) >= idleMeterTTL {
			delete(m.mu.meters, k)
		}
	}
	for k, b := range m.mu.buckets {
		if now.Sub(b.last) >= idleMeterTTL {
			delete(m.mu.buckets, k)
		}
	}
}

// Mutate counts permits partitions created or deleted for one topic of a
// client whose controller_mutation_rate quota is a (Resolve), at now, and
// says whether the topic is accepted and how long the client must wait
// (decideMutation). Throttles are counted in Stats.
func (m *Manager) Mutate(a Applied, permits float64, strict bool, now time.Time) MutationVerdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	k := meterKey{key: ControllerMutationRate, meter: a.Meter}
	b := m.mu.buckets[k]
	if b == nil {
		b = &bucket{}
		m.mu.buckets[k] = b
	}
	b.refill(a.Bound, m.cfg.burst(a.Bound), now)
	v := decideMutation(b, a.Bound, permits, strict)
	if v.Throttle > 0 {
		m.countLocked(ControllerMutationRate, v.Throttle)
	}
	return v
}
