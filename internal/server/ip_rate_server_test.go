package server

import (
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A connection over its address's connection_creation_rate is accepted,
// left unanswered for the hold, then closed; the accept loop serves other
// connections meanwhile, and the held one is not counted.
func TestIPRateHoldsThenClosesTheExtraConnection(t *testing.T) {
	const hold = 400 * time.Millisecond
	one := 1
	limits := newLimits(t, ConnLimitsConfig{DefaultIPCreationRate: &one, CreationBurst: time.Millisecond, IPThrottleMax: hold})
	logs := &logRecorder{}
	s := startServer(t, newFakeHandler(), func(o *Options) {
		withLimits(limits, false)(o)
		o.Logger = slog.New(logs)
	})
	first := dial(t, s)
	first.apiVersions(1) // the burst of one
	start := time.Now()
	held := dial(t, s)
	held.send(kmsg.NewPtrApiVersionsRequest(), 3, 2)
	held.expectSilence(hold / 4)
	first.apiVersions(3) // served while the other is held
	held.expectClosed()
	if since := time.Since(start); since < hold/2 {
		t.Fatalf("the throttled connection closed after %v, want about %v", since, hold)
	}
	if n, total := limits.IPThrottled(); n != 1 || total < hold/2 {
		t.Fatalf("IPThrottled = %d, %v; want one held about %v", n, total, hold)
	}
	if limits.Open() != 1 {
		t.Fatalf("open %d, want the first connection only", limits.Open())
	}
	infos := logs.at(slog.LevelInfo)
	if len(infos) != 1 || infos[0]["remote_ip"] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("info logs %v, want one throttle of 127.0.0.1", infos)
	}
	time.Sleep(time.Second) // a token comes back
	dial(t, s).apiVersions(4)
}

// Shutdown does not wait out the hold of a throttled connection.
func TestShutdownClosesAHeldConnection(t *testing.T) {
	zero := 0
	limits := newLimits(t, ConnLimitsConfig{DefaultIPCreationRate: &zero, IPThrottleMax: time.Hour})
	s, served := serveUnmanaged(t, Options{Handler: newFakeHandler(), Limits: limits})
	held := dial(t, s)
	waitUntil(t, "the connection is throttled", func() bool { n, _ := limits.IPThrottled(); return n == 1 })
	shutdownServed(t, s, served, t.Fatalf)
	held.expectClosed()
}
