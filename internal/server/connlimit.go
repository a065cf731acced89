package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// ConnLimitsConfig is Kafka's connection limits, shared by every listener
// of a broker.
type ConnLimitsConfig struct {
	// MaxConnections bounds the connections of all listeners together
	// (max.connections); <= 0: no limit.
	MaxConnections int
	// MaxPerIP bounds the connections from one address (max.connections.per.ip);
	// <= 0: no limit.
	MaxPerIP int
	// OnlyOverrides refuses every address PerIPOverrides does not name
	// (Kafka's max.connections.per.ip=0); MaxPerIP is then ignored.
	OnlyOverrides bool
	// PerIPOverrides replaces MaxPerIP for the addresses it names
	// (max.connections.per.ip.overrides, host names already resolved); 0
	// refuses every connection from that address, as Kafka.
	PerIPOverrides map[netip.Addr]int
	// MaxCreationRate paces new connections over every listener but the
	// inter-broker one to this many a second (max.connection.creation.rate,
	// KIP-612), after a burst of those CreationBurst allows at that rate;
	// <= 0: no pacing.
	MaxCreationRate int
	CreationBurst   time.Duration
	// PerListener are listener-level limits by listener name
	// (listener.name.<l>.max.connections, ....max.connection.creation.rate):
	// each on top of the broker-wide ones, and binding the inter-broker
	// listener too, as in Kafka.
	PerListener map[string]ListenerLimits
	// IPCreationRates are the connection_creation_rate quotas of client
	// addresses (ip entities, KIP-612; host names already resolved), on
	// every listener: a new connection from an address over its rate,
	// after a burst of those CreationBurst allows at that rate, is held
	// for as long as it would have had to wait (at most IPThrottleMax),
	// then closed, as Kafka's acceptor does. 0 refuses every connection
	// from the address; math.MaxInt32 (Kafka's unlimited) exempts it from
	// the default. DefaultIPCreationRate applies to every address not
	// named; nil: none.
	IPCreationRates       map[netip.Addr]int
	DefaultIPCreationRate *int
	IPThrottleMax         time.Duration
}

// ListenerLimits are one listener's own limits; <= 0: none.
type ListenerLimits struct {
	MaxConnections  int
	MaxCreationRate int
}

// ConnLimits counts the open connections of the Servers that share it (one
// per listener) and applies Kafka's limits to new ones:
//
//   - per address, on every listener: a connection that would exceed the
//     address's limit is closed as soon as it is accepted;
//
//   - broker-wide: while MaxConnections connections are open, the accept
//     loops of the listeners other than the inter-broker one stop
//     accepting until one closes (the kernel's backlog holds the newcomers).
//     Inter-broker connections are counted but never held.
//
//   - per listener, with its own limits (PerListener): its accept loop
//     waits while the listener has its maximum open, and its own creation
//     rate paces it, the inter-broker listener included.
//
//   - per address, its connection creation rate (IPCreationRates): a
//     connection over it is held, then closed (ip_rate.go).
//
// Invariant: mu.open is the sum of mu.perIP plus the connections whose
// remote address is not an IP, and the sum of mu.byListener; every counted
// connection is released exactly once (release panics on an underflow).
type ConnLimits struct {
	mu struct {
		sync.Mutex
		rules    connRules // replaced whole by Update
		creation creationBucket
		open     int
		// byListener counts the open connections of each listener, and
		// listenerCreation paces each listener with a rate of its own.
		byListener       map[string]int
		listenerCreation map[string]creationBucket
		perIP            map[netip.Addr]int
		// freed, when not nil, is closed (and cleared) by the next release
		// or Update: the accept loops waiting for a slot wait on it.
		freed   chan struct{}
		refused uint64
		// paced counts the connections max.connection.creation.rate held,
		// pacedWait the time it held them for.
		paced     uint64
		pacedWait time.Duration
		// ipCreation paces each address under a connection_creation_rate
		// (ip_rate.go); a sweep drops the full buckets once it holds
		// ipSweepAt. ipThrottled counts the connections closed for it,
		// ipThrottleHold the time they were held before that.
		ipCreation     map[netip.Addr]creationBucket
		ipSweepAt      int
		ipThrottled    uint64
		ipThrottleHold time.Duration
		// lastLog is when a refusal was last logged; suppressed counts
		// the refusals not logged since.
		lastLog    time.Time
		suppressed uint64
	}
}

// limit is an optional bound on a count.
type limit struct {
	n   int
	set bool
}

// limitOf is the bound a Kafka config states: none when n <= 0.
func limitOf(n int) limit {
	if n <= 0 {
		return limit{}
	}
	return limit{n: n, set: true}
}

// admit reports whether one more connection fits when count are open.
func (l limit) admit(count int) bool { return !l.set || count < l.n }

// connRules are the limits a ConnLimits applies, compiled from a
// ConnLimitsConfig.
type connRules struct {
	maxConnections limit
	maxPerIP       limit
	// overrides is keyed by canonical addresses (ipKey).
	overrides map[netip.Addr]int
	creation  creationRule
	listeners map[string]listenerRule
	ipRates   ipRates
}

// listenerRule is one listener's compiled ListenerLimits.
type listenerRule struct {
	max      limit
	creation creationRule
}

// compileRules validates c and returns the rules it states.
func compileRules(c ConnLimitsConfig) (connRules, error) {
	perIP := limitOf(c.MaxPerIP)
	if c.OnlyOverrides {
		perIP = limit{n: 0, set: true}
	}
	r := connRules{
		maxConnections: limitOf(c.MaxConnections),
		maxPerIP:       perIP,
		overrides:      make(map[netip.Addr]int, len(c.PerIPOverrides)),
		creation:       newCreationRule(c.MaxCreationRate, c.CreationBurst),
		listeners:      make(map[string]listenerRule, len(c.PerListener)),
	}
	for name, ll := range c.PerListener {
		r.listeners[name] = listenerRule{max: limitOf(ll.MaxConnections), creation: newCreationRule(ll.MaxCreationRate, c.CreationBurst)}
	}
	var errs []error
	var err error
	if r.ipRates, err = compileIPRates(c); err != nil {
		errs = append(errs, err)
	}
	for addr, n := range c.PerIPOverrides {
		if !addr.IsValid() {
			errs = append(errs, errors.New("server: ConnLimitsConfig.PerIPOverrides has an invalid address"))
			continue
		}
		if n < 0 {
			errs = append(errs, fmt.Errorf("server: ConnLimitsConfig.PerIPOverrides[%v] %d is negative", addr, n))
			continue
		}
		key := ipKey(addr)
		if prev, ok := r.overrides[key]; ok && prev != n {
			errs = append(errs, fmt.Errorf("server: ConnLimitsConfig.PerIPOverrides gives %v both %d and %d", key, prev, n))
			continue
		}
		r.overrides[key] = n
	}
	return r, errors.Join(errs...)
}

// NewConnLimits validates c and returns limits with nothing counted.
func NewConnLimits(c ConnLimitsConfig) (*ConnLimits, error) {
	r, err := compileRules(c)
	if err != nil {
		return nil, err
	}
	l := &ConnLimits{}
	l.mu.rules = r
	l.mu.perIP = make(map[netip.Addr]int)
	l.mu.byListener = make(map[string]int)
	l.mu.listenerCreation = make(map[string]creationBucket)
	l.mu.ipCreation = make(map[netip.Addr]creationBucket)
	l.mu.ipSweepAt = minIPBuckets
	return l, nil
}

// Update replaces the limits with c's (Kafka's dynamic max.connections*),
// keeping the counts. Connections already open stay open even where they
// exceed the new limits; new ones are judged by them. Accept loops waiting
// for a broker-wide slot look again. On an error nothing changes.
func (l *ConnLimits) Update(c ConnLimitsConfig) error {
	r, err := compileRules(c)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.rules = r
	if r.creation.rate > 0 {
		l.mu.creation.tokens = min(l.mu.creation.tokens, r.creation.burst)
	}
	for name, b := range l.mu.listenerCreation {
		if lr, ok := r.listeners[name]; ok && lr.creation.rate > 0 {
			b.tokens = min(b.tokens, lr.creation.burst)
			l.mu.listenerCreation[name] = b
		}
	}
	l.updateIPBucketsLocked(r.ipRates)
	l.wakeLocked()
	return nil
}

// Open is the number of connections counted now, on all listeners.
func (l *ConnLimits) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.open
}

// Refused is the number of connections closed for a per-address limit.
func (l *ConnLimits) Refused() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.refused
}

// Paced is the number of new connections max.connection.creation.rate
// held back, and the time it held them for in all.
func (l *ConnLimits) Paced() (uint64, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.paced, l.mu.pacedWait
}

// ipKey is the address connections are counted under: IPv4-mapped IPv6
// addresses are their IPv4 address, and the zone is dropped (Java's
// InetAddress.equals ignores the scope, so Kafka counts them together).
func ipKey(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

// remoteIP is the counting key of a remote address; ok is false when it is
// not an IP address (only the broker-wide limit applies then).
func remoteIP(a net.Addr) (netip.Addr, bool) {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, ok := netip.AddrFromSlice(ta.IP)
		return ipKey(ip), ok
	}
	if a == nil {
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ipKey(ap.Addr()), true
}

// ipLimit is the limit for connections from ip (a counting key): its
// override if it has one, else maxPerIP.
func ipLimit(ip netip.Addr, maxPerIP limit, overrides map[netip.Addr]int) limit {
	if n, ok := overrides[ip]; ok {
		return limit{n: n, set: true} // 0 refuses all
	}
	return maxPerIP
}

// verdict is what becomes of a new connection.
type verdict int

const (
	verdictAdmit    verdict = iota + 1
	verdictWait             // broker-wide limit reached: wait for a close
	verdictRefuse           // per-address limit reached: close it
	verdictThrottle         // over its address's creation rate: hold it, then close it
)

// admission is what decide looks at.
type admission struct {
	open           int // connections counted on all listeners
	maxConnections limit
	interBroker    bool // the connection is on the inter-broker listener
	ipOpen         int  // connections counted from the same address
	ipLimit        limit
	listenerOpen   int // connections counted on the same listener
	listenerMax    limit
}

// decide is Kafka's order: first a broker-wide slot (the inter-broker
// listener is exempt), then the address's limit.
func decide(a admission) verdict {
	if !a.listenerMax.admit(a.listenerOpen) {
		return verdictWait
	}
	if !a.interBroker && !a.maxConnections.admit(a.open) {
		return verdictWait
	}
	if !a.ipLimit.admit(a.ipOpen) {
		return verdictRefuse
	}
	return verdictAdmit
}

// slot is one counted connection; release gives it back. The zero slot
// (no limits) releases nothing.
type slot struct {
	limits   *ConnLimits
	ip       netip.Addr // the zero Addr when the remote is not an IP
	listener string
}

// acquisition is the outcome of acquire.
type acquisition struct {
	verdict verdict // verdictAdmit, verdictRefuse or verdictThrottle; verdictWait: stopped
	slot    slot    // when admitted
	limit   int     // when refused: the per-address limit that applied
	// hold is how long a throttled connection is held before it is closed.
	hold time.Duration
}

// acquire counts a connection from ip (ok false: not an IP address),
// waiting for a broker-wide slot unless interBroker. It gives up, with
// verdictWait, once stop is closed.
func (l *ConnLimits) acquire(ip netip.Addr, ok, interBroker bool, stop <-chan struct{}) acquisition {
	return l.acquireOn("", ip, ok, interBroker, stop)
}

// acquireOn is acquire for a connection on the named listener, which its
// own limits bind too.
func (l *ConnLimits) acquireOn(listener string, ip netip.Addr, ok, interBroker bool, stop <-chan struct{}) acquisition {
	if !l.paceCreation(listener, interBroker, stop) {
		return acquisition{verdict: verdictWait}
	}
	if ok {
		if hold := l.throttleIP(listener, interBroker, ip); hold > 0 {
			return acquisition{verdict: verdictThrottle, hold: hold}
		}
	}
	for {
		l.mu.Lock()
		r := l.mu.rules
		a := admission{open: l.mu.open, maxConnections: r.maxConnections, interBroker: interBroker,
			listenerOpen: l.mu.byListener[listener], listenerMax: r.listeners[listener].max}
		if ok {
			a.ipOpen, a.ipLimit = l.mu.perIP[ip], ipLimit(ip, r.maxPerIP, r.overrides)
		}
		switch decide(a) {
		case verdictAdmit:
			l.mu.open++
			l.mu.byListener[listener]++
			s := slot{limits: l, listener: listener}
			if ok {
				l.mu.perIP[ip]++
				s.ip = ip
			}
			l.mu.Unlock()
			return acquisition{verdict: verdictAdmit, slot: s}
		case verdictRefuse:
			l.mu.refused++
			l.mu.Unlock()
			return acquisition{verdict: verdictRefuse, limit: a.ipLimit.n}
		}
		freed := l.freedLocked()
		l.mu.Unlock()
		select {
		case <-freed:
		case <-stop:
			return acquisition{verdict: verdictWait}
		}
	}
}

// paceCreation holds a new connection on listener for its tokens of
// max.connection.creation.rate (not on the inter-broker listener) and of
// the listener's own rate; false when stop closed meanwhile.
func (l *ConnLimits) paceCreation(listener string, interBroker bool, stop <-chan struct{}) bool {
	l.mu.Lock()
	now := time.Now()
	var wait time.Duration
	if !interBroker {
		l.mu.creation, wait = l.mu.rules.creation.reserve(l.mu.creation, now)
	}
	if lr, ok := l.mu.rules.listeners[listener]; ok && lr.creation.rate > 0 {
		var own time.Duration
		l.mu.listenerCreation[listener], own = lr.creation.reserve(l.mu.listenerCreation[listener], now)
		wait = max(wait, own)
	}
	if wait > 0 {
		l.mu.paced++
		l.mu.pacedWait += wait
	}
	l.mu.Unlock()
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// waitForSlot returns once a broker-wide slot is free (true) or stop is
// closed (false). It takes nothing: acquire does, after Accept.
func (l *ConnLimits) waitForSlot(stop <-chan struct{}) bool {
	return l.waitForSlotOn("", false, stop)
}

// waitForSlotOn is waitForSlot for the named listener: its own limit too,
// and the broker-wide one unless it is the inter-broker listener.
func (l *ConnLimits) waitForSlotOn(listener string, interBroker bool, stop <-chan struct{}) bool {
	for {
		l.mu.Lock()
		r := l.mu.rules
		if (interBroker || r.maxConnections.admit(l.mu.open)) && r.listeners[listener].max.admit(l.mu.byListener[listener]) {
			l.mu.Unlock()
			return true
		}
		freed := l.freedLocked()
		l.mu.Unlock()
		select {
		case <-freed:
		case <-stop:
			return false
		}
	}
}

func (l *ConnLimits) freedLocked() chan struct{} {
	if l.mu.freed == nil {
		l.mu.freed = make(chan struct{})
	}
	return l.mu.freed
}

// release gives the slot back and wakes the accept loops waiting for one.
func (s slot) release() {
	l := s.limits
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.open <= 0 {
		panic("server: connection slot released twice (open count underflow)")
	}
	l.mu.open--
	if n := l.mu.byListener[s.listener]; n <= 1 {
		delete(l.mu.byListener, s.listener)
	} else {
		l.mu.byListener[s.listener] = n - 1
	}
	if s.ip.IsValid() {
		n := l.mu.perIP[s.ip]
		if n <= 0 {
			panic(fmt.Sprintf("server: connection slot of %v released twice", s.ip))
		}
		if n == 1 {
			delete(l.mu.perIP, s.ip)
		} else {
			l.mu.perIP[s.ip] = n - 1
		}
	}
	l.wakeLocked()
}

// wakeLocked wakes the accept loops waiting for a broker-wide slot.
func (l *ConnLimits) wakeLocked() {
	if l.mu.freed != nil {
		close(l.mu.freed)
		l.mu.freed = nil
	}
}

// refusalLogInterval rate-limits the log of refused connections, which a
// misbehaving client can trigger in a tight loop.
const refusalLogInterval = time.Second

// logDue reports whether a refusal at now is logged, the last one having
// been logged at last (the zero time: never).
func logDue(last, now time.Time) bool {
	return last.IsZero() || now.Sub(last) >= refusalLogInterval
}

// noteRefusal reports whether the refusal at now is logged and, if so, how
// many were suppressed since the last line.
func (l *ConnLimits) noteRefusal(now time.Time) (logIt bool, suppressed uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !logDue(l.mu.lastLog, now) {
		l.mu.suppressed++
		return false, 0
	}
	suppressed = l.mu.suppressed
	l.mu.lastLog, l.mu.suppressed = now, 0
	return true, suppressed
}
