package server

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	none, two := limitOf(0), limitOf(2)
	for _, tc := range []struct {
		name string
		a    admission
		want verdict
	}{
		{"no limits", admission{open: 1000, maxConnections: none, ipOpen: 1000, ipLimit: none}, verdictAdmit},
		{"broker-wide room", admission{open: 1, maxConnections: two}, verdictAdmit},
		{"broker-wide reached", admission{open: 2, maxConnections: two}, verdictWait},
		{"broker-wide exceeded", admission{open: 3, maxConnections: two}, verdictWait},
		{"inter-broker past broker-wide", admission{open: 5, maxConnections: two, interBroker: true}, verdictAdmit},
		{"address room", admission{ipOpen: 1, ipLimit: two}, verdictAdmit},
		{"address reached", admission{ipOpen: 2, ipLimit: two}, verdictRefuse},
		{"override of zero", admission{ipOpen: 0, ipLimit: limit{n: 0, set: true}}, verdictRefuse},
		{"broker-wide before address (Kafka's order)", admission{open: 2, maxConnections: two, ipOpen: 2, ipLimit: two}, verdictWait},
		{"inter-broker still limited per address", admission{open: 5, maxConnections: two, interBroker: true, ipOpen: 2, ipLimit: two}, verdictRefuse},
		{"listener room", admission{listenerOpen: 1, listenerMax: two}, verdictAdmit},
		{"listener reached", admission{listenerOpen: 2, listenerMax: two}, verdictWait},
		{"inter-broker bound by its listener's own limit", admission{interBroker: true, listenerOpen: 2, listenerMax: two}, verdictWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.a); got != tc.want {
				t.Fatalf("decide(%+v) = %v, want %v", tc.a, got, tc.want)
			}
		})
	}
}

func TestIPLimit(t *testing.T) {
	a1, a2, a3 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	overrides := map[netip.Addr]int{a1: 0, a2: 5}
	for _, tc := range []struct {
		name     string
		ip       netip.Addr
		maxPerIP limit
		want     limit
	}{
		{"override of zero", a1, limitOf(2), limit{n: 0, set: true}},
		{"override above the default", a2, limitOf(2), limit{n: 5, set: true}},
		{"override without a default", a2, limitOf(0), limit{n: 5, set: true}},
		{"default", a3, limitOf(2), limit{n: 2, set: true}},
		{"no limit", a3, limitOf(-1), limit{}},
		{"only overrides: an unlisted address", a3, limit{n: 0, set: true}, limit{n: 0, set: true}},
		{"only overrides: a listed address", a2, limit{n: 0, set: true}, limit{n: 5, set: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ipLimit(tc.ip, tc.maxPerIP, overrides); got != tc.want {
				t.Fatalf("ipLimit = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRemoteIP(t *testing.T) {
	loop := netip.MustParseAddr("127.0.0.1")
	for _, tc := range []struct {
		name   string
		addr   net.Addr
		want   netip.Addr
		wantOK bool
	}{
		{"IPv4 in 16 bytes", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, loop, true},
		{"IPv4 in 4 bytes", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: 1}, loop, true},
		{"IPv4-mapped IPv6", &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 1}, loop, true},
		{"zone dropped", &net.TCPAddr{IP: net.ParseIP("fe80::1"), Zone: "eth0"}, netip.MustParseAddr("fe80::1"), true},
		{"other kind, parsed", &net.UDPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 1}, loop, true},
		{"no IP", &net.TCPAddr{}, netip.Addr{}, false},
		{"unix socket", &net.UnixAddr{Name: "/tmp/x", Net: "unix"}, netip.Addr{}, false},
		{"nil", nil, netip.Addr{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := remoteIP(tc.addr)
			if ok != tc.wantOK || ok && got != tc.want {
				t.Fatalf("remoteIP = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestNewConnLimitsValidates(t *testing.T) {
	v4, mapped := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:127.0.0.1")
	for _, tc := range []struct {
		name      string
		overrides map[netip.Addr]int
		want      string // substring of the error; "" means valid
	}{
		{"none", nil, ""},
		{"zero", map[netip.Addr]int{v4: 0}, ""},
		{"same address twice, same limit", map[netip.Addr]int{v4: 3, mapped: 3}, ""},
		{"same address twice, two limits", map[netip.Addr]int{v4: 3, mapped: 4}, "both"},
		{"negative", map[netip.Addr]int{v4: -1}, "negative"},
		{"invalid address", map[netip.Addr]int{{}: 1}, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewConnLimits(ConnLimitsConfig{MaxPerIP: 2, PerIPOverrides: tc.overrides})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("NewConnLimits() = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestRefusalLogIsRateLimited(t *testing.T) {
	l := newLimits(t, ConnLimitsConfig{})
	t0 := time.Unix(1000, 0)
	for i, step := range []struct {
		at             time.Duration
		wantLog        bool
		wantSuppressed uint64
	}{
		{0, true, 0},
		{500 * time.Millisecond, false, 0},
		{900 * time.Millisecond, false, 0},
		{time.Second, true, 2},
		{3 * time.Second, true, 0},
	} {
		logIt, suppressed := l.noteRefusal(t0.Add(step.at))
		if logIt != step.wantLog || suppressed != step.wantSuppressed {
			t.Fatalf("step %d: noteRefusal = %v, %d; want %v, %d", i, logIt, suppressed, step.wantLog, step.wantSuppressed)
		}
	}
}

// TestAcquireWaitsForARelease checks the broker-wide wait: it ends on a
// release (admitted) or on stop (nothing taken).
func TestAcquireWaitsForARelease(t *testing.T) {
	l := newLimits(t, ConnLimitsConfig{MaxConnections: 1, MaxPerIP: 5})
	ip := netip.MustParseAddr("127.0.0.1")
	first := l.acquire(ip, true, false, nil)
	if first.verdict != verdictAdmit {
		t.Fatalf("first: verdict %v", first.verdict)
	}

	got := make(chan acquisition)
	go func() { got <- l.acquire(ip, true, false, nil) }()
	select {
	case a := <-got:
		t.Fatalf("acquire past the broker-wide limit returned %+v", a)
	case <-time.After(20 * time.Millisecond):
	}
	first.slot.release()
	second := <-got
	if second.verdict != verdictAdmit || l.Open() != 1 {
		t.Fatalf("after a release: verdict %v, open %d", second.verdict, l.Open())
	}

	stop := make(chan struct{})
	go func() { got <- l.acquire(ip, true, false, stop) }()
	waited := make(chan bool)
	go func() { waited <- l.waitForSlot(stop) }()
	close(stop)
	if a := <-got; a.verdict != verdictWait {
		t.Fatalf("stopped acquire: verdict %v", a.verdict)
	}
	if <-waited {
		t.Fatal("stopped waitForSlot reported a slot")
	}
	if l.Open() != 1 {
		t.Fatalf("open %d after a stopped acquire, want 1", l.Open())
	}

	second.slot.release()
	if l.Open() != 0 || len(l.mu.perIP) != 0 {
		t.Fatalf("open %d, per address %v after every release", l.Open(), l.mu.perIP)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second release did not panic")
		}
	}()
	second.slot.release()
}

// TestUpdateAppliesToNewConnections checks dynamic limits: a raised
// max.connections admits the connection waiting for a slot, a lowered
// per-address limit refuses the next connection but closes none, and an
// invalid config changes nothing.
func TestUpdateAppliesToNewConnections(t *testing.T) {
	l := newLimits(t, ConnLimitsConfig{MaxConnections: 1})
	ip := netip.MustParseAddr("10.0.0.1")
	first := l.acquire(ip, true, false, nil)
	got := make(chan acquisition)
	go func() { got <- l.acquire(ip, true, false, nil) }()
	select {
	case a := <-got:
		t.Fatalf("acquire past max.connections returned %+v", a)
	case <-time.After(20 * time.Millisecond):
	}
	if err := l.Update(ConnLimitsConfig{MaxConnections: 3}); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second.verdict != verdictAdmit || l.Open() != 2 {
		t.Fatalf("after raising max.connections: verdict %v, open %d", second.verdict, l.Open())
	}

	if err := l.Update(ConnLimitsConfig{MaxConnections: 3, MaxPerIP: 1}); err != nil {
		t.Fatal(err)
	}
	if a := l.acquire(ip, true, false, nil); a.verdict != verdictRefuse || a.limit != 1 {
		t.Fatalf("over a lowered per-address limit: verdict %v, limit %d", a.verdict, a.limit)
	}
	if l.Open() != 2 {
		t.Fatalf("open %d after lowering the per-address limit, want the 2 already open", l.Open())
	}

	bad := ConnLimitsConfig{PerIPOverrides: map[netip.Addr]int{ip: -1}}
	if err := l.Update(bad); err == nil {
		t.Fatal("Update took a negative override")
	}
	if a := l.acquire(netip.MustParseAddr("10.0.0.2"), true, false, nil); a.verdict != verdictAdmit {
		t.Fatalf("after a refused Update: verdict %v, want the previous limits", a.verdict)
	} else {
		a.slot.release()
	}
	first.slot.release()
	second.slot.release()
}

// max.connection.creation.rate: past the burst, a connection waits for its
// token (here a tenth of a second at 10/s); the inter-broker listener's do
// not, and a stop ends the wait without admitting.
func TestAcquirePacesCreation(t *testing.T) {
	l := newLimits(t, ConnLimitsConfig{MaxCreationRate: 10, CreationBurst: time.Millisecond}) // a burst of one
	ip := netip.MustParseAddr("10.0.0.1")
	first := l.acquire(ip, true, false, nil)
	start := time.Now()
	second := l.acquire(ip, true, false, nil)
	if waited := time.Since(start); second.verdict != verdictAdmit || waited < 50*time.Millisecond {
		t.Fatalf("the second connection: verdict %v after %v, want admitted after about 100ms", second.verdict, waited)
	}
	if n, wait := l.Paced(); n != 1 || wait < 50*time.Millisecond {
		t.Fatalf("Paced = %d, %v; want the second connection's wait", n, wait)
	}
	peer := l.acquire(ip, true, true, nil)
	if n, _ := l.Paced(); peer.verdict != verdictAdmit || n != 1 {
		t.Fatalf("an inter-broker connection: verdict %v, %d paced; want admitted without pacing", peer.verdict, n)
	}
	for _, a := range []acquisition{first, second, peer} {
		a.slot.release()
	}

	slow := newLimits(t, ConnLimitsConfig{MaxCreationRate: 1, CreationBurst: time.Millisecond})
	taken := slow.acquire(ip, true, false, nil)
	stop := make(chan struct{})
	close(stop)
	if a := slow.acquire(ip, true, false, stop); a.verdict != verdictWait || slow.Open() != 1 {
		t.Fatalf("a stopped wait: verdict %v, open %d; want nothing admitted", a.verdict, slow.Open())
	}
	taken.slot.release()
}

// A listener's own max.connections holds its next connection until one of
// its own closes, and binds no other listener; its own creation rate paces
// it even when it is the inter-broker listener.
func TestListenerLimits(t *testing.T) {
	l := newLimits(t, ConnLimitsConfig{MaxConnections: 10, PerListener: map[string]ListenerLimits{
		"INTERNAL": {MaxConnections: 1},
		"REPLICAS": {MaxCreationRate: 1},
	}})
	ip := netip.MustParseAddr("10.0.0.1")
	first := l.acquireOn("INTERNAL", ip, true, false, nil)
	got := make(chan acquisition)
	go func() { got <- l.acquireOn("INTERNAL", ip, true, false, nil) }()
	other := l.acquireOn("EXTERNAL", ip, true, false, nil)
	if other.verdict != verdictAdmit {
		t.Fatalf("another listener: verdict %v", other.verdict)
	}
	select {
	case a := <-got:
		t.Fatalf("a second connection on a listener limited to one returned %+v", a)
	case <-time.After(20 * time.Millisecond):
	}
	other.slot.release() // another listener's close frees nothing of INTERNAL's
	select {
	case a := <-got:
		t.Fatalf("another listener's close admitted %+v", a)
	case <-time.After(20 * time.Millisecond):
	}
	first.slot.release()
	if second := <-got; second.verdict != verdictAdmit {
		t.Fatalf("after INTERNAL's close: verdict %v", second.verdict)
	} else {
		second.slot.release()
	}

	peer := l.acquireOn("REPLICAS", ip, true, true, nil)
	if n, _ := l.Paced(); peer.verdict != verdictAdmit || n != 0 {
		t.Fatalf("the first inter-broker connection: verdict %v, %d paced", peer.verdict, n)
	}
	stop := make(chan struct{})
	close(stop)
	if a := l.acquireOn("REPLICAS", ip, true, true, stop); a.verdict != verdictWait {
		t.Fatalf("past its own rate, the inter-broker listener's next connection: verdict %v, want held", a.verdict)
	}
	peer.slot.release()
	if l.Open() != 0 || len(l.mu.byListener) != 0 {
		t.Fatalf("open %d, by listener %v after every release", l.Open(), l.mu.byListener)
	}
}

// TestListenerLimitCountsDownOneAtATime: with two of a listener's
// connections open, a close frees exactly one place on it.
func TestListenerLimitCountsDownOneAtATime(t *testing.T) {
	l := newLimits(t, ConnLimitsConfig{PerListener: map[string]ListenerLimits{"INTERNAL": {MaxConnections: 2}}})
	ip := netip.MustParseAddr("10.0.0.1")
	stopped := make(chan struct{})
	close(stopped)
	a := l.acquireOn("INTERNAL", ip, true, false, nil)
	b := l.acquireOn("INTERNAL", ip, true, false, nil)
	if a.verdict != verdictAdmit || b.verdict != verdictAdmit {
		t.Fatalf("two connections on a listener limited to two: %v, %v", a.verdict, b.verdict)
	}
	if c := l.acquireOn("INTERNAL", ip, true, false, stopped); c.verdict != verdictWait {
		t.Fatalf("a third: verdict %v, want held", c.verdict)
	}
	a.slot.release()
	c := l.acquireOn("INTERNAL", ip, true, false, stopped)
	if c.verdict != verdictAdmit {
		t.Fatalf("after one close, a third: verdict %v, want admitted", c.verdict)
	}
	if d := l.acquireOn("INTERNAL", ip, true, false, stopped); d.verdict != verdictWait {
		t.Fatalf("a fourth with two open: verdict %v, want held", d.verdict)
	}
	b.slot.release()
	c.slot.release()
	if l.Open() != 0 || len(l.mu.byListener) != 0 {
		t.Fatalf("open %d, by listener %v after every release", l.Open(), l.mu.byListener)
	}
}

// TestCreationRateOffAndOnKeepsTheBucket: turning a creation rate off (the
// broker-wide one, a listener's) and on again keeps what
// its bucket held, as Kafka's rate sensor keeps its samples: the pause
// neither empties the bucket (which would pace the next connections) nor
// refills it.
func TestCreationRateOffAndOnKeepsTheBucket(t *testing.T) {
	on := ConnLimitsConfig{MaxCreationRate: 10, CreationBurst: 300 * time.Millisecond, // bursts of three
		PerListener: map[string]ListenerLimits{"INTERNAL": {MaxCreationRate: 10}}}
	off := ConnLimitsConfig{CreationBurst: on.CreationBurst,
		PerListener: map[string]ListenerLimits{"INTERNAL": {MaxConnections: 100}}}
	ip := netip.MustParseAddr("10.0.0.1")
	for _, listener := range []string{"", "INTERNAL"} {
		l := newLimits(t, on)
		var taken []acquisition
		take := func(what string) {
			t.Helper()
			a := l.acquireOn(listener, ip, true, false, nil)
			if n, wait := l.Paced(); a.verdict != verdictAdmit || n != 0 {
				t.Fatalf("listener %q, %s: verdict %v, %d paced (%v); want admitted at once", listener, what, a.verdict, n, wait)
			}
			taken = append(taken, a)
		}
		take("the first connection")
		for _, c := range []ConnLimitsConfig{off, on} {
			if err := l.Update(c); err != nil {
				t.Fatal(err)
			}
		}
		take("the second, after the rate went off and on")
		take("the third")
		stop := make(chan struct{})
		close(stop)
		if a := l.acquireOn(listener, ip, true, false, stop); a.verdict != verdictWait {
			t.Fatalf("listener %q, a fourth past the burst of three: verdict %v, want held", listener, a.verdict)
		}
		for _, a := range taken {
			a.slot.release()
		}
	}
}

func newLimits(t *testing.T, c ConnLimitsConfig) *ConnLimits {
	t.Helper()
	l, err := NewConnLimits(c)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
