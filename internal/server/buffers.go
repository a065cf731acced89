package server

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Buffers for request frames and encoded responses come from one pool.
// Buffers that grew past maxPooledBytes are dropped rather than pooled, so a
// rare huge frame does not pin its memory.
const (
	initialBufferBytes = 4 << 10
	maxPooledBytes     = 1 << 20
)

var bufferPool = sync.Pool{New: func() any {
	b := make([]byte, 0, initialBufferBytes)
	return &b
}}

// getBuffer returns a pooled buffer of length n.
func getBuffer(n int) *[]byte {
	p := bufferPool.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, n)
	}
	*p = (*p)[:n]
	return p
}

// putBuffer returns p to the pool; p must not be used afterwards.
func putBuffer(p *[]byte) {
	if p == nil || cap(*p) > maxPooledBytes {
		return
	}
	*p = (*p)[:0]
	bufferPool.Put(p)
}

// appendResponse appends a whole response frame: size, response header and
// body. The header is v1 (with an empty tagged-fields section) for flexible
// responses, except ApiVersions, which always uses header v0.
func appendResponse(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0) // size, patched below
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if resp.IsFlexible() && resp.Key() != apiVersionsKey {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	size := len(dst) - start - 4
	if size > math.MaxInt32 {
		panic("server: encoded response exceeds the 2 GiB frame limit")
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	return dst
}
