package tier

import (
	"sync"
	"time"
)

// keptBufferIdle is how long a kept chunk buffer may go unused before it
// is unmapped: a burst of remote reads leaves its buffers resident for
// the next reads, not for the life of the broker.
const keptBufferIdle = 30 * time.Second

// chunkBuffers hands out the buffers a chunk is read into from the bucket
// before it goes to its slot. They are mapped outside the Go heap where
// the OS allows (chunk_file_linux.go): log bytes stay off the heap, an
// 8 MiB buffer does not pace the garbage collector, and the buffers kept
// for reuse keep their pages (a fresh page costs a fault; buffers from a
// sync.Pool came back from the GC as fresh pages over and over). Up to
// keep buffers are kept; more are unmapped when returned, and a kept one
// is unmapped once unused for idle.
type chunkBuffers struct {
	size int
	keep int
	idle time.Duration
	now  func() time.Time

	mu     sync.Mutex
	free   []keptBuffer // oldest first; get takes the newest
	timer  *time.Timer  // set while buffers are kept: fires at the oldest's expiry
	closed bool
}

// keptBuffer is a buffer kept for reuse and when it was returned.
type keptBuffer struct {
	b     []byte
	since time.Time
}

func newChunkBuffers(size, keep int) *chunkBuffers {
	return &chunkBuffers{size: size, keep: keep, idle: keptBufferIdle, now: time.Now}
}

// get returns a buffer of size bytes, of unspecified contents.
func (p *chunkBuffers) get() []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1].b
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return mapBuffer(p.size)
}

// put gives b back; nothing may use it afterwards.
func (p *chunkBuffers) put(b []byte) {
	p.mu.Lock()
	if !p.closed && len(p.free) < p.keep {
		p.free = append(p.free, keptBuffer{b: b, since: p.now()})
		p.armLocked()
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	unmapBuffer(b)
}

// armLocked sets the timer for the oldest kept buffer's expiry, unless it
// is set or nothing is kept.
func (p *chunkBuffers) armLocked() {
	if p.timer != nil || len(p.free) == 0 || p.closed {
		return
	}
	p.timer = time.AfterFunc(p.free[0].since.Add(p.idle).Sub(p.now()), p.trimIdle)
}

// trimIdle unmaps the buffers unused for idle and re-arms for the rest.
func (p *chunkBuffers) trimIdle() {
	p.mu.Lock()
	p.timer = nil
	expired := p.takeIdleLocked(p.now())
	p.armLocked()
	p.mu.Unlock()
	for _, b := range expired {
		unmapBuffer(b)
	}
}

// takeIdleLocked removes and returns the kept buffers returned at or
// before now-idle.
func (p *chunkBuffers) takeIdleLocked(now time.Time) [][]byte {
	var out [][]byte
	n := 0
	for n < len(p.free) && !p.free[n].since.Add(p.idle).After(now) {
		out = append(out, p.free[n].b)
		n++
	}
	p.free = append(p.free[:0], p.free[n:]...)
	return out
}

// close unmaps the kept buffers and stops keeping any; buffers handed out
// are unmapped when returned.
func (p *chunkBuffers) close() {
	p.mu.Lock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	kept := p.free
	p.free = nil
	p.mu.Unlock()
	for _, k := range kept {
		unmapBuffer(k.b)
	}
}

// kept is how many buffers are kept, for tests.
func (p *chunkBuffers) kept() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}
