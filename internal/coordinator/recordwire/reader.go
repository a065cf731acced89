package recordwire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// MaxStringBytes bounds every string of these records, as Kafka's
// generated readers and writers do (0x7fff).
const MaxStringBytes = 0x7fff

// Reader decodes one key or value.
type Reader struct {
	bad    error  // what every error wraps
	record string // Kafka's name of what is read, for errors
	b      kbin.Reader
	err    error
}

// NewReader reads src, a record of Kafka's name record; every error it
// reports wraps bad.
func NewReader(bad error, record string, src []byte) *Reader {
	return &Reader{bad: bad, record: record, b: kbin.Reader{Src: src}}
}

// Fail makes the input bad (the first failure is kept).
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: %s", r.bad, r.record, fmt.Sprintf(format, args...))
	}
	r.b.Src = nil // every later read fails too
}

// Err is the first thing wrong with the input so far, nil if none.
func (r *Reader) Err() error { return r.err }

// OK reports whether r is still good after reading field.
func (r *Reader) OK(field string) bool {
	if r.err == nil && !r.b.Ok() {
		r.Fail("%s: truncated", field)
	}
	return r.err == nil
}

// Done is the end of what r reads: bytes left over make the input bad.
func (r *Reader) Done() error {
	if r.err == nil && len(r.b.Src) > 0 {
		r.Fail("%d bytes after the last field", len(r.b.Src))
	}
	return r.err
}

func (r *Reader) Int8(field string) int8 {
	v := r.b.Int8()
	r.OK(field)
	return v
}

func (r *Reader) Int16(field string) int16 {
	v := r.b.Int16()
	r.OK(field)
	return v
}

func (r *Reader) Int32(field string) int32 {
	v := r.b.Int32()
	r.OK(field)
	return v
}

func (r *Reader) Int64(field string) int64 {
	v := r.b.Int64()
	r.OK(field)
	return v
}

func (r *Reader) UUID(field string) [16]byte {
	v := r.b.Uuid()
	r.OK(field)
	return v
}

func (r *Reader) Uvarint(field string) uint32 {
	v := r.b.Uvarint()
	r.OK(field)
	return v
}

// compactLen reads a compact length (uvarint n+1, 0 for null): -1 is null.
func (r *Reader) compactLen(field string) int64 {
	return int64(r.Uvarint(field)) - 1
}

// stringOf reads the n bytes of a string whose length was read already;
// n < 0 is null, an error unless nullable.
func (r *Reader) stringOf(field string, n int64, nullable bool) *string {
	switch {
	case r.err != nil:
		return nil
	case n < 0 && nullable:
		return nil
	case n < 0:
		r.Fail("%s: non-nullable string is null", field)
		return nil
	case n > MaxStringBytes:
		r.Fail("%s: string of %d bytes (Kafka's limit is %d)", field, n, MaxStringBytes)
		return nil
	}
	b := r.b.Span(int(n))
	if !r.OK(field) {
		return nil
	}
	s := string(b)
	return &s
}

// NullableString reads a compact nullable string.
func (r *Reader) NullableString(field string) *string {
	return r.stringOf(field, r.compactLen(field), true)
}

// CompactString reads a compact non-nullable string.
func (r *Reader) CompactString(field string) string {
	if s := r.stringOf(field, r.compactLen(field), false); s != nil {
		return *s
	}
	return ""
}

// KeyString reads a string of a key, which is not flexible (int16 length).
func (r *Reader) KeyString(field string) string {
	if s := r.stringOf(field, int64(r.Int16(field)), false); s != nil {
		return *s
	}
	return ""
}

// Bytes reads non-nullable compact bytes into a fresh slice (nil if empty).
func (r *Reader) Bytes(field string) []byte {
	n := r.compactLen(field)
	if r.err == nil && n < 0 {
		r.Fail("%s: non-nullable bytes are null", field)
	}
	if r.err == nil && n > int64(len(r.b.Src)) {
		r.Fail("%s: truncated", field)
	}
	if r.err != nil || n == 0 {
		return nil
	}
	return append([]byte(nil), r.b.Span(int(n))...)
}

// ArrayLen reads a compact array length, -1 for null (an error unless
// nullable). It checks that the input can hold that many elements of at
// least minElemBytes each, so that callers may allocate for them.
func (r *Reader) ArrayLen(field string, minElemBytes int, nullable bool) int {
	n := r.compactLen(field)
	switch {
	case r.err != nil:
		return 0
	case n < 0 && !nullable:
		r.Fail("%s: non-nullable array is null", field)
		return 0
	case n > int64(len(r.b.Src)/minElemBytes):
		r.Fail("%s: %d elements in %d bytes", field, n, len(r.b.Src))
		return 0
	}
	return int(n)
}

// Int32List reads a compact []int32: nil if null or empty, except that a
// nullable list that is present and empty is non-nil.
func (r *Reader) Int32List(field string, nullable bool) []int32 {
	n := r.ArrayLen(field, 4, nullable)
	if n < 0 || (n == 0 && !nullable) || r.err != nil {
		return nil
	}
	l := make([]int32, n)
	for i := range l {
		l[i] = r.Int32(field)
	}
	return l
}

// StringList reads a non-nullable compact []string (nil if empty).
func (r *Reader) StringList(field string) []string {
	n := r.ArrayLen(field, 1, false)
	if n == 0 {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = r.CompactString(field)
	}
	return l
}

// Tags reads the tagged-field section that ends every struct of a flexible
// version. known decodes a field that the schema declares from a reader of
// exactly that field's bytes, which it must read whole, and reports whether
// it knew the tag; Kafka skips the others, and so does this.
func (r *Reader) Tags(known func(tag uint32, field *Reader) bool) {
	n := r.Uvarint("tagged fields")
	for ; n > 0 && r.err == nil; n-- {
		tag := r.Uvarint("tag")
		size := r.Uvarint("tagged field size")
		body := r.b.Span(int(size))
		if !r.OK("tagged field") || known == nil {
			continue
		}
		field := NewReader(r.bad, fmt.Sprintf("%s tag %d", r.record, tag), body)
		if known(tag, field) {
			if err := field.Done(); err != nil {
				r.err, r.b.Src = err, nil
			}
		}
	}
}
