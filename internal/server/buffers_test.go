package server

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Pooled buffers always hold the length asked for, whatever size the
// buffer went back to the pool with; nil, small and huge buffers are
// given back without harm.
func TestBufferPoolsServeTheirSize(t *testing.T) {
	sizes := []int{0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 100_000, 1 << 20, 1<<20 + 1, 3 << 20, 40 << 20}
	for round := range 3 {
		for i, n := range sizes {
			p := getBuffer(n)
			if len(*p) != n || cap(*p) < n {
				t.Fatalf("round %d: getBuffer(%d) has length %d, capacity %d", round, n, len(*p), cap(*p))
			}
			putBuffer(p)
			// Give back a buffer of another size too, so the next
			// gets may reuse it.
			other := make([]byte, sizes[(i+5)%len(sizes)])
			putBuffer(&other)
		}
	}
	putBuffer(nil)
	huge := make([]byte, 0, 1<<(maxClassShift+1))
	putBuffer(&huge)
	if n := 1<<maxClassShift + 1; len(*getBuffer(n)) != n {
		t.Fatal("a buffer over the largest class")
	}
}

// appendResponse frames a response after whatever dst held: the size
// counts the header and body only.
func TestAppendResponseAfterAPrefix(t *testing.T) {
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.SetVersion(4) // flexible: header v1
	prefix := []byte("prefix")
	out := appendResponse(append([]byte(nil), prefix...), 7, resp)
	frame := out[len(prefix):]
	if size := int(binary.BigEndian.Uint32(frame)); size != len(frame)-4 {
		t.Fatalf("size field %d, frame of %d bytes after it", size, len(frame)-4)
	}
	if id := int32(binary.BigEndian.Uint32(frame[4:])); id != 7 {
		t.Fatalf("correlation id %d", id)
	}
	if want := len(resp.AppendTo(nil)) + 4 + 1; len(frame)-4 != want {
		t.Fatalf("%d bytes of header and body, want %d", len(frame)-4, want)
	}
}
