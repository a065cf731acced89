package record

import (
	"encoding/binary"
	"math"
)

// reader walks record bytes, checking every length against the bytes left.
// After the first failure ok is false and every read returns zero, so a
// caller checks ok once at the end of a record rather than after each field.
type reader struct {
	b  []byte
	ok bool
}

func (r *reader) varlong() int64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads a zigzag varint that must fit an int32, as Kafka requires.
func (r *reader) varint() int32 {
	v := r.varlong()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.ok = false
		return 0
	}
	return int32(v)
}

func (r *reader) byte() byte {
	if !r.ok || len(r.b) < 1 {
		r.ok = false
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// bytes reads n bytes, aliasing the input.
func (r *reader) bytes(n int32) []byte {
	if !r.ok || n < 0 || int(n) > len(r.b) {
		r.ok = false
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// nullableBytes reads a varint length then the bytes; length -1 is null
// (nil), any other negative length is invalid.
func (r *reader) nullableBytes() []byte {
	n := r.varint()
	if n == -1 {
		return nil
	}
	if n < 0 {
		r.ok = false
		return nil
	}
	b := r.bytes(n)
	if b == nil && r.ok {
		return []byte{} // present but empty, unlike null
	}
	return b
}
