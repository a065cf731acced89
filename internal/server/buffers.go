package server

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Buffers for request frames and encoded responses come from pools by size
// class (powers of two), so a steady stream of large produce requests
// reuses its frames instead of allocating and zeroing each one. Buffers
// larger than the biggest class are dropped rather than pooled, so a rare
// huge frame does not pin its memory.
const (
	minClassShift = 12 // 4 KiB
	maxClassShift = 26 // 64 MiB
)

var bufferPools [maxClassShift + 1]sync.Pool

// classFor is the smallest class whose buffers hold n bytes.
func classFor(n int) int {
	if n <= 1<<minClassShift {
		return minClassShift
	}
	return bits.Len(uint(n - 1))
}

// getBuffer returns a pooled buffer of length n.
func getBuffer(n int) *[]byte {
	c := classFor(n)
	if c > maxClassShift {
		b := make([]byte, n)
		return &b
	}
	if p, ok := bufferPools[c].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<c)
	return &b
}

// putBuffer returns p to the pool of the largest class it can serve; p must
// not be used afterwards.
func putBuffer(p *[]byte) {
	if p == nil || cap(*p) < 1<<minClassShift {
		return
	}
	c := bits.Len(uint(cap(*p))) - 1 // cap >= 1<<c
	if c > maxClassShift {
		return
	}
	*p = (*p)[:0]
	bufferPools[c].Put(p)
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
