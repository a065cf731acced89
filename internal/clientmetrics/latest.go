package clientmetrics

import (
	"slices"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

// Pushed is what one client instance pushed last, for an exporter: its
// samples and the client's labels.
type Pushed struct {
	Instance InstanceID
	// Client is what the client's connection said of it.
	Client  Selectors
	Samples []Sample
	at      time.Time
}

// Latest keeps the last push of each client instance, for an exporter to
// show, and forgets an instance once it has not pushed for its TTL (a few
// push intervals), so a client that went away leaves no series behind.
// Bounded by the Registry's instances: only accepted pushes are kept, and
// an instance beyond MaxInstances drops the oldest. Safe for concurrent
// use.
type Latest struct {
	clock clock.Clock
	ttl   time.Duration
	max   int
	mu    sync.Mutex
	by    map[InstanceID]Pushed
}

// NewLatest keeps pushes for ttl after they came, at most max instances.
func NewLatest(clk clock.Clock, ttl time.Duration, max int) *Latest {
	return &Latest{clock: clk, ttl: ttl, max: max, by: map[InstanceID]Pushed{}}
}

// Put records instance id's push.
func (l *Latest) Put(id InstanceID, client Selectors, samples []Sample) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked(now)
	if _, ok := l.by[id]; !ok && len(l.by) >= l.max {
		oldest := id
		for k, p := range l.by {
			if oldest == id || p.at.Before(l.by[oldest].at) {
				oldest = k
			}
		}
		delete(l.by, oldest)
	}
	l.by[id] = Pushed{Instance: id, Client: client, Samples: samples, at: now}
}

// Forget drops instance id's last push (a terminating push).
func (l *Latest) Forget(id InstanceID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.by, id)
}

// Snapshot is every instance's last push still within its TTL, by
// instance id.
func (l *Latest) Snapshot() []Pushed {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked(now)
	out := make([]Pushed, 0, len(l.by))
	for _, p := range l.by {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Pushed) int { return slices.Compare(a.Instance[:], b.Instance[:]) })
	return out
}

func (l *Latest) expireLocked(now time.Time) {
	for k, p := range l.by {
		if now.Sub(p.at) > l.ttl {
			delete(l.by, k)
		}
	}
}
