package server

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestIPRateRuleTake(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const maxHold = time.Second
	rule := newIPRateRule(10, 300*time.Millisecond) // 10/s, a burst of 3
	var b creationBucket
	var hold time.Duration
	for i := range 3 {
		if b, hold = rule.take(b, t0, maxHold); hold != 0 {
			t.Fatalf("connection %d of the burst held %v", i, hold)
		}
	}
	// Over the rate: held for the time a token takes, and nothing taken,
	// so the next one is held as long (not behind it, as pacing would).
	for i := range 3 {
		if b, hold = rule.take(b, t0, maxHold); hold != 100*time.Millisecond {
			t.Fatalf("throttled connection %d held %v, want 100ms", i, hold)
		}
	}
	if b.tokens != 0 {
		t.Fatalf("throttled connections took tokens: %v left", b.tokens)
	}
	if b, hold = rule.take(b, t0.Add(100*time.Millisecond), maxHold); hold != 0 {
		t.Fatalf("a connection a token later held %v", hold)
	}
	if _, hold = rule.take(b, t0.Add(150*time.Millisecond), maxHold); hold != 50*time.Millisecond {
		t.Fatalf("half a token later: held %v, want 50ms", hold)
	}

	slow := newIPRateRule(1, 0) // 1/s, a burst of 1
	b, _ = slow.take(creationBucket{}, t0, 200*time.Millisecond)
	if _, hold = slow.take(b, t0, 200*time.Millisecond); hold != 200*time.Millisecond {
		t.Fatalf("a wait of a second capped at 200ms: held %v", hold)
	}
	zero := newIPRateRule(0, time.Second)
	for range 3 {
		if _, hold = zero.take(creationBucket{}, t0, maxHold); hold != maxHold {
			t.Fatalf("a quota of 0 held a connection %v, want %v", hold, maxHold)
		}
	}
	if _, hold = (ipRateRule{}).take(creationBucket{}, t0, maxHold); hold != 0 {
		t.Fatalf("no quota held a connection %v", hold)
	}
}

// Over any span, the connections served from an address are at most the
// burst plus what the rate refilled, and a connection is held only when
// serving it would break that bound.
func TestIPRateRuleBoundsTheRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 50 {
		rate := 1 + rng.IntN(100)
		burstOver := time.Duration(rng.IntN(3000)) * time.Millisecond
		rule := newIPRateRule(rate, burstOver)
		t0 := time.Unix(0, 0)
		now := t0
		var b creationBucket
		served := 0
		for range 2000 {
			now = now.Add(time.Duration(rng.IntN(20_000)) * time.Microsecond)
			var hold time.Duration
			tokensBefore := rule.rule.refill(b, now).tokens
			b, hold = rule.take(b, now, time.Second)
			if hold == 0 {
				served++
			} else if tokensBefore >= 1 {
				t.Fatalf("trial %d: held %v with %v tokens", trial, hold, tokensBefore)
			}
			bound := rule.rule.burst + float64(rate)*now.Sub(t0).Seconds()
			if float64(served) > bound+1e-6 {
				t.Fatalf("trial %d: %d served by %v, over the bound %.2f", trial, served, now.Sub(t0), bound)
			}
		}
	}
}

func TestCompileIPRates(t *testing.T) {
	v4, mapped := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:127.0.0.1")
	zero, negative := 0, -1
	for _, tc := range []struct {
		name string
		c    ConnLimitsConfig
		want string // substring of the error; "" means valid
	}{
		{"none", ConnLimitsConfig{}, ""},
		{"an address", ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{v4: 5}, IPThrottleMax: time.Second}, ""},
		{"a default of 0", ConnLimitsConfig{DefaultIPCreationRate: &zero, IPThrottleMax: time.Second}, ""},
		{"one address twice, one rate", ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{v4: 5, mapped: 5}, IPThrottleMax: time.Second}, ""},
		{"one address twice, two rates", ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{v4: 5, mapped: 6}, IPThrottleMax: time.Second}, "two rates"},
		{"negative", ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{v4: -1}, IPThrottleMax: time.Second}, "negative"},
		{"negative default", ConnLimitsConfig{DefaultIPCreationRate: &negative, IPThrottleMax: time.Second}, "negative"},
		{"invalid address", ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{{}: 1}, IPThrottleMax: time.Second}, "invalid"},
		{"no hold bound", ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{v4: 5}}, "IPThrottleMax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewConnLimits(tc.c)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("NewConnLimits() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

// An address over its rate is throttled, on the inter-broker listener too;
// its own quota beats the default; a throttled connection gives back the
// broker-wide creation token it took; Update lifts a quota at once.
func TestAcquireThrottlesAnAddress(t *testing.T) {
	local, other, third := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")
	zero := 0
	cfg := ConnLimitsConfig{
		MaxCreationRate: 1000, CreationBurst: 2 * time.Millisecond, // a broker-wide burst of 2
		IPCreationRates: map[netip.Addr]int{local: 1000}, DefaultIPCreationRate: &zero, IPThrottleMax: 300 * time.Millisecond,
	}
	l := newLimits(t, cfg)
	a := l.acquire(other, true, false, nil)
	if a.verdict != verdictThrottle || a.hold != 300*time.Millisecond {
		t.Fatalf("an address under the default of 0: %v held %v; want throttled for 300ms", a.verdict, a.hold)
	}
	if a := l.acquire(third, true, true, nil); a.verdict != verdictThrottle {
		t.Fatalf("an inter-broker connection under the default of 0: %v, want throttled", a.verdict)
	}
	// The throttled connections gave their broker-wide tokens back: the
	// burst of two serves two at once.
	start := time.Now()
	first, second := l.acquire(local, true, false, nil), l.acquire(local, true, false, nil)
	if first.verdict != verdictAdmit || second.verdict != verdictAdmit {
		t.Fatalf("the named address: %v, %v; want both admitted", first.verdict, second.verdict)
	}
	if n, _ := l.Paced(); n != 0 {
		t.Fatalf("%d paced after %v: throttled connections kept their broker-wide tokens", n, time.Since(start))
	}
	if n, hold := l.IPThrottled(); n != 2 || hold != 600*time.Millisecond {
		t.Fatalf("IPThrottled = %d, %v; want 2, 600ms", n, hold)
	}
	if l.Open() != 2 {
		t.Fatalf("open %d, want the two admitted only", l.Open())
	}
	cfg.DefaultIPCreationRate = nil
	if err := l.Update(cfg); err != nil {
		t.Fatal(err)
	}
	if a := l.acquire(other, true, false, nil); a.verdict != verdictAdmit {
		t.Fatalf("after the default is lifted: %v, want admitted", a.verdict)
	} else {
		a.slot.release()
	}
	first.slot.release()
	second.slot.release()
}

// The buckets of addresses whose rate has refilled them are dropped, so
// that clients from many addresses do not grow the map for ever.
func TestIPBucketsAreSwept(t *testing.T) {
	rate := 1000
	l := newLimits(t, ConnLimitsConfig{DefaultIPCreationRate: &rate, CreationBurst: time.Second, IPThrottleMax: time.Second})
	base := netip.MustParseAddr("10.0.0.0").As4()
	for i := range 3 * minIPBuckets {
		a := base
		a[2], a[3] = byte(i>>8), byte(i)
		if got := l.acquire(netip.AddrFrom4(a), true, false, nil); got.verdict != verdictAdmit {
			t.Fatalf("connection %d: %v", i, got.verdict)
		} else {
			got.slot.release()
		}
		if i%minIPBuckets == minIPBuckets-1 {
			time.Sleep(5 * time.Millisecond) // the buckets refill: one token each at 1000/s
		}
	}
	l.mu.Lock()
	n := len(l.mu.ipCreation)
	l.mu.Unlock()
	if n > 2*minIPBuckets {
		t.Fatalf("%d buckets kept after %d addresses, want at most %d", n, 3*minIPBuckets, 2*minIPBuckets)
	}
}

// Kafka's unlimited rate on an address exempts it from the default.
func TestUnlimitedIPRateExemptsFromTheDefault(t *testing.T) {
	local, other := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	zero := 0
	l := newLimits(t, ConnLimitsConfig{IPCreationRates: map[netip.Addr]int{local: math.MaxInt32},
		DefaultIPCreationRate: &zero, IPThrottleMax: time.Second})
	for range 3 {
		if a := l.acquire(local, true, false, nil); a.verdict != verdictAdmit {
			t.Fatalf("the exempt address: %v", a.verdict)
		} else {
			a.slot.release()
		}
	}
	if a := l.acquire(other, true, false, nil); a.verdict != verdictThrottle {
		t.Fatalf("another address: %v, want throttled", a.verdict)
	}
}
