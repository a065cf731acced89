package tier

import (
	"testing"
	"time"
)

// TestChunkBuffersUnmapIdle: a kept buffer goes once unused for idle, the
// oldest first; get reuses the newest; close drops them all and keeps no
// more.
func TestChunkBuffersUnmapIdle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	now := t0
	p := newChunkBuffers(4096, 3)
	p.now = func() time.Time { return now }
	p.idle = time.Hour // the timer stays out of the way; takeIdleLocked is driven by hand
	bufs := [][]byte{p.get(), p.get(), p.get(), p.get()}
	for i, b := range bufs {
		now = t0.Add(time.Duration(i) * 10 * time.Minute)
		p.put(b)
	}
	if p.kept() != 3 {
		t.Fatalf("%d buffers kept, want keep=3", p.kept())
	}
	trim := func(at time.Time) int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.takeIdleLocked(at))
	}
	if n := trim(t0.Add(59 * time.Minute)); n != 0 {
		t.Fatalf("trimmed %d buffers before any was idle for an hour", n)
	}
	if n := trim(t0.Add(60 * time.Minute)); n != 1 || p.kept() != 2 {
		t.Fatalf("trimmed %d at the first one's expiry, %d kept; want 1 and 2", n, p.kept())
	}
	if b := p.get(); &b[0] != &bufs[2][0] {
		t.Fatal("get did not reuse the newest kept buffer")
	}
	if n := trim(t0.Add(10 * time.Hour)); n != 1 || p.kept() != 0 {
		t.Fatalf("trimmed %d long after, %d kept; want 1 and 0", n, p.kept())
	}
	p.put(bufs[2])
	p.close()
	if p.kept() != 0 || p.timer != nil {
		t.Fatalf("after close: %d kept, timer %v", p.kept(), p.timer)
	}
	p.put(p.get())
	if p.kept() != 0 {
		t.Fatal("a closed pool kept a buffer")
	}
}

// TestChunkBuffersTimerTrims: with nothing else happening, the timer
// unmaps kept buffers once idle.
func TestChunkBuffersTimerTrims(t *testing.T) {
	p := newChunkBuffers(4096, 2)
	p.idle = 20 * time.Millisecond
	p.put(p.get())
	time.Sleep(5 * time.Millisecond)
	p.put(p.get())
	p.put(p.get())
	deadline := time.Now().Add(10 * time.Second)
	for p.kept() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d buffers still kept long after their idle time", p.kept())
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.close()
}
