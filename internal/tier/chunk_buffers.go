package tier

import "sync"

// chunkBuffers hands out the buffers a chunk is read into from the bucket
// before it goes to its slot. They are mapped outside the Go heap where
// the OS allows (chunk_file_linux.go): log bytes stay off the heap, an
// 8 MiB buffer does not pace the garbage collector, and the buffers kept
// for reuse keep their pages (a fresh page costs a fault; buffers from a
// sync.Pool came back from the GC as fresh pages over and over). Up to
// keep buffers are kept; more are unmapped when returned.
type chunkBuffers struct {
	size int
	keep int
	mu   sync.Mutex
	free [][]byte
}

func newChunkBuffers(size, keep int) *chunkBuffers {
	return &chunkBuffers{size: size, keep: keep}
}

// get returns a buffer of size bytes, of unspecified contents.
func (p *chunkBuffers) get() []byte {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
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
	if len(p.free) < p.keep {
		p.free = append(p.free, b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	unmapBuffer(b)
}
