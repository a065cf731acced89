package partition

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// logCapture is a partition logger's output, safe for concurrent writes.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// A restarted follower takes its log end as its high watermark until its
// leader confirms one. Dropping records above that is no unclean
// election: it logs at Info. Dropping records below a high watermark a
// leader gave is, and warns.
func TestTruncateAfterRestartIsNoUncleanElection(t *testing.T) {
	logs := &logCapture{}
	withLogs := func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) }
	l := newLeader(t)
	f := newFollower(t, 1, withLogs)
	mustAppend(t, l.p, batch(t, spec{records: 4}), AcksLeader)
	catchUp(t, l.p, f.p)
	f.restart(t, 1)
	if err := f.p.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); strings.Contains(out, "level=WARN") || !strings.Contains(out, "written before this replica restarted") {
		t.Fatalf("truncating after a restart logged:\n%s", out)
	}

	logs = &logCapture{}
	f = newFollower(t, 1, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	catchUp(t, l.p, f.p)
	if err := f.p.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, "unclean leader election") {
		t.Fatalf("truncating below a high watermark the leader gave logged:\n%s", out)
	}
}

// Offsets say when the high watermark is the one taken at open; a
// leader's answer confirms it, and wakes readers even when it is the
// same number.
func TestRestartHighWatermarkIsMarkedUntilConfirmed(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	mustAppend(t, l.p, batch(t, spec{records: 4}), AcksLeader)
	catchUp(t, l.p, f.p)
	if f.p.Offsets().RestartHW {
		t.Fatal("a high watermark the leader gave is marked as taken at restart")
	}
	f.restart(t, 1)
	off := f.p.Offsets()
	if !off.RestartHW {
		t.Fatal("the high watermark taken at restart is not marked")
	}
	changed := f.p.Changed()
	if _, err := f.p.SetHighWatermarkFromLeader(off.HighWatermark); err != nil {
		t.Fatal(err)
	}
	if f.p.Offsets().RestartHW {
		t.Fatal("still marked after the leader confirmed it")
	}
	select {
	case <-changed:
	default:
		t.Fatal("confirming the same high watermark did not wake readers")
	}
}

// On a leader with followers in its ISR, the high watermark taken at open
// is no longer marked once the followers move it (AdvanceHighWatermark).
func TestRestartHighWatermarkUnmarkedWhenFollowersMoveIt(t *testing.T) {
	l := newLeader(t)
	mustAppend(t, l.p, batch(t, spec{records: 4}), AcksLeader)
	if !l.p.Offsets().RestartHW {
		t.Fatal("the high watermark taken at open is not marked")
	}
	if err := l.p.SetInSyncReplicas(2); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l.p, batch(t, spec{records: 2}), AcksLeader)
	if !l.p.AdvanceHighWatermark(6) {
		t.Fatal("AdvanceHighWatermark(6) did not move it")
	}
	if off := l.p.Offsets(); off.HighWatermark != 6 || off.RestartHW {
		t.Fatalf("offsets %+v, want the high watermark 6, no longer the one taken at open", off)
	}
}
