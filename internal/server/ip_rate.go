package server

import (
	"fmt"
	"math"
	"net/netip"
	"time"
)

// ipRateRule is one address's compiled connection_creation_rate quota
// (KIP-612); the zero value bounds nothing.
type ipRateRule struct {
	set bool
	// rule paces the address; its rate is 0 when the quota is 0, which
	// refuses every connection.
	rule creationRule
}

// newIPRateRule is the quota of rate connections per second, with the
// burst burstOver allows at that rate, as max.connection.creation.rate;
// Kafka's unlimited rate (the int maximum) bounds nothing.
func newIPRateRule(rate int, burstOver time.Duration) ipRateRule {
	if rate >= math.MaxInt32 {
		return ipRateRule{}
	}
	if rate <= 0 {
		return ipRateRule{set: true}
	}
	return ipRateRule{set: true, rule: newCreationRule(rate, burstOver)}
}

// take judges one new connection from the address at now. With a token
// in the bucket it takes it and returns 0: the connection is served.
// Without one it takes nothing (Kafka un-records a throttled connection)
// and returns how long the connection would have to wait for a token, at
// most maxHold: the connection is held that long, then closed. A quota of
// 0 holds every connection for maxHold.
func (r ipRateRule) take(b creationBucket, now time.Time, maxHold time.Duration) (creationBucket, time.Duration) {
	switch {
	case !r.set:
		return b, 0
	case r.rule.rate == 0:
		return b, max(maxHold, time.Nanosecond)
	}
	b = r.rule.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return b, 0
	}
	wait := time.Duration((1 - b.tokens) / r.rule.rate * float64(time.Second))
	return b, max(min(wait, maxHold), time.Nanosecond)
}

// ipRates are the compiled connection_creation_rate quotas of addresses.
type ipRates struct {
	byAddr  map[netip.Addr]ipRateRule // by counting key (ipKey)
	def     ipRateRule                // every other address
	maxHold time.Duration
}

// compileIPRates compiles the ip quotas of c.
func compileIPRates(c ConnLimitsConfig) (ipRates, error) {
	r := ipRates{byAddr: make(map[netip.Addr]ipRateRule, len(c.IPCreationRates)), maxHold: c.IPThrottleMax}
	if c.DefaultIPCreationRate != nil {
		if *c.DefaultIPCreationRate < 0 {
			return ipRates{}, fmt.Errorf("server: ConnLimitsConfig.DefaultIPCreationRate %d is negative", *c.DefaultIPCreationRate)
		}
		r.def = newIPRateRule(*c.DefaultIPCreationRate, c.CreationBurst)
	}
	for addr, n := range c.IPCreationRates {
		switch {
		case !addr.IsValid():
			return ipRates{}, fmt.Errorf("server: ConnLimitsConfig.IPCreationRates has an invalid address")
		case n < 0:
			return ipRates{}, fmt.Errorf("server: ConnLimitsConfig.IPCreationRates[%v] %d is negative", addr, n)
		}
		key := ipKey(addr)
		if prev, ok := r.byAddr[key]; ok && prev != newIPRateRule(n, c.CreationBurst) {
			return ipRates{}, fmt.Errorf("server: ConnLimitsConfig.IPCreationRates gives %v two rates", key)
		}
		r.byAddr[key] = newIPRateRule(n, c.CreationBurst)
	}
	if (r.def.set || len(r.byAddr) > 0) && r.maxHold <= 0 {
		return ipRates{}, fmt.Errorf("server: ConnLimitsConfig.IPThrottleMax %v is not positive", r.maxHold)
	}
	return r, nil
}

// of is the quota of the address ip (a counting key): its own, else the
// default.
func (r ipRates) of(ip netip.Addr) ipRateRule {
	if rule, ok := r.byAddr[ip]; ok {
		return rule
	}
	return r.def
}

// minIPBuckets is the fewest buckets kept before a sweep looks for full
// ones to drop.
const minIPBuckets = 1024

// throttleIP judges a new connection from ip on listener against the
// address's connection_creation_rate. It returns 0 when the connection is
// served, else how long to hold it before closing it; a throttled
// connection gives back the broker's and the listener's creation tokens
// it took, as Kafka un-records it from their rates.
func (l *ConnLimits) throttleIP(listener string, interBroker bool, ip netip.Addr) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.mu.rules
	rule := r.ipRates.of(ip)
	if !rule.set {
		return 0
	}
	now := time.Now()
	b, hold := rule.take(l.mu.ipCreation[ip], now, r.ipRates.maxHold)
	if rule.rule.rate > 0 { // a quota of 0 has no bucket
		if _, known := l.mu.ipCreation[ip]; !known && len(l.mu.ipCreation) >= l.mu.ipSweepAt {
			l.sweepIPBucketsLocked(now)
		}
		l.mu.ipCreation[ip] = b
	}
	if hold == 0 {
		return 0
	}
	if !interBroker {
		l.mu.creation = r.creation.refund(l.mu.creation)
	}
	if lr, ok := r.listeners[listener]; ok {
		l.mu.listenerCreation[listener] = lr.creation.refund(l.mu.listenerCreation[listener])
	}
	l.mu.ipThrottled++
	l.mu.ipThrottleHold += hold
	return hold
}

// sweepIPBucketsLocked drops the buckets that are full by now (the same
// as a fresh one) or no longer under a quota, and sets the size at which
// the next sweep runs: twice what is left, so that sweeps cost O(1) a
// connection.
func (l *ConnLimits) sweepIPBucketsLocked(now time.Time) {
	r := l.mu.rules.ipRates
	for ip, b := range l.mu.ipCreation {
		if rule := r.of(ip); !rule.set || rule.rule.rate == 0 || rule.rule.full(b, now) {
			delete(l.mu.ipCreation, ip)
		}
	}
	l.mu.ipSweepAt = max(2*len(l.mu.ipCreation), minIPBuckets)
}

// IPThrottled is the number of new connections closed for their address's
// connection_creation_rate, and the time they were held before that, in all.
func (l *ConnLimits) IPThrottled() (uint64, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.ipThrottled, l.mu.ipThrottleHold
}

// updateIPBucketsLocked fits the buckets to new quotas: a lower burst
// caps what a bucket holds, and an address no longer paced loses its.
func (l *ConnLimits) updateIPBucketsLocked(r ipRates) {
	for ip, b := range l.mu.ipCreation {
		rule := r.of(ip)
		if !rule.set || rule.rule.rate == 0 {
			delete(l.mu.ipCreation, ip)
			continue
		}
		b.tokens = min(b.tokens, rule.rule.burst)
		l.mu.ipCreation[ip] = b
	}
}
