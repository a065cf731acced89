package api

import "sync"

// readBuffer holds the log bytes of one fetch response until it is written.
// Pooling keeps log bytes from churning the Go heap: a steady consumer
// reuses the same few buffers.
type readBuffer struct{ b []byte }

const (
	// readBufferInitialBytes is small: most fetches copy a few small
	// batches at the tail (large reads go out as file regions), and a
	// buffer the pool lost to a GC is allocated, and zeroed, again.
	readBufferInitialBytes = 64 << 10
	// readBufferMaxPooledBytes keeps the pool from pinning the memory of a
	// rare huge fetch.
	readBufferMaxPooledBytes = 16 << 20
)

var readBuffers = sync.Pool{New: func() any { return &readBuffer{b: make([]byte, 0, readBufferInitialBytes)} }}

func getReadBuffer() *readBuffer { return readBuffers.Get().(*readBuffer) }

func putReadBuffer(b *readBuffer) {
	if cap(b.b) > readBufferMaxPooledBytes {
		return
	}
	b.b = b.b[:0]
	readBuffers.Put(b)
}
