package sharestate

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The primitive types of the share coordinator's records: a reader that
// checks every length against the bytes left before it uses it, and keeps
// the first thing wrong with its input, so that decoders read straight
// through and look at the error once, at done.

// maxKeyStringBytes is Kafka's limit on a string of a non-flexible key
// (its length is an int16).
const maxKeyStringBytes = 0x7fff

type recordReader struct {
	what string // the record's Kafka name, for errors
	b    kbin.Reader
	err  error
}

func newRecordReader(what string, src []byte) *recordReader {
	return &recordReader{what: what, b: kbin.Reader{Src: src}}
}

func (r *recordReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: %s", ErrBadRecord, r.what, fmt.Sprintf(format, args...))
	}
	r.b.Src = nil // every later read fails too
}

// ok reports whether r is still good after reading field.
func (r *recordReader) ok(field string) bool {
	if r.err == nil && !r.b.Ok() {
		r.fail("%s: truncated", field)
	}
	return r.err == nil
}

// done ends the reading: bytes left over make the input bad.
func (r *recordReader) done() error {
	if r.err == nil && len(r.b.Src) > 0 {
		r.fail("%d bytes after the last field", len(r.b.Src))
	}
	return r.err
}

func (r *recordReader) int8(field string) int8 {
	v := r.b.Int8()
	r.ok(field)
	return v
}

func (r *recordReader) int16(field string) int16 {
	v := r.b.Int16()
	r.ok(field)
	return v
}

func (r *recordReader) int32(field string) int32 {
	v := r.b.Int32()
	r.ok(field)
	return v
}

func (r *recordReader) int64(field string) int64 {
	v := r.b.Int64()
	r.ok(field)
	return v
}

func (r *recordReader) uuid(field string) [16]byte {
	v := r.b.Uuid()
	r.ok(field)
	return v
}

func (r *recordReader) uvarint(field string) uint32 {
	v := r.b.Uvarint()
	r.ok(field)
	return v
}

// keyString reads a non-nullable string with an int16 length, as keys
// (which are not flexible) hold them.
func (r *recordReader) keyString(field string) string {
	n := r.int16(field)
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.fail("%s: non-nullable string is null", field)
		return ""
	}
	b := r.b.Span(int(n))
	if !r.ok(field) {
		return ""
	}
	return string(b)
}

// arrayLen reads a non-nullable compact array length and checks that the
// input can hold that many elements of at least minElemBytes each, so that
// the caller may allocate for them.
func (r *recordReader) arrayLen(field string, minElemBytes int) int {
	n := int64(r.uvarint(field)) - 1
	switch {
	case r.err != nil:
		return 0
	case n < 0:
		r.fail("%s: non-nullable array is null", field)
		return 0
	case n > int64(len(r.b.Src)/minElemBytes):
		r.fail("%s: %d elements in %d bytes", field, n, len(r.b.Src))
		return 0
	}
	return int(n)
}

// tags reads the tagged fields that end every struct of a flexible
// version. known decodes a field the schema declares from a reader of
// exactly its bytes, which it must read whole, and reports whether it knew
// the tag; the others are skipped, as Kafka skips them.
func (r *recordReader) tags(known func(tag uint32, field *recordReader) bool) {
	n := r.uvarint("tagged fields")
	for ; n > 0 && r.err == nil; n-- {
		tag := r.uvarint("tag")
		size := r.uvarint("tagged field size")
		body := r.b.Span(int(size))
		if !r.ok("tagged field") || known == nil {
			continue
		}
		field := newRecordReader(fmt.Sprintf("%s tag %d", r.what, tag), body)
		if known(tag, field) {
			if err := field.done(); err != nil {
				r.err, r.b.Src = err, nil
			}
		}
	}
}

// appendTag appends one tagged field: its tag, its size and its body.
func appendTag(dst []byte, tag uint32, body []byte) []byte {
	dst = kbin.AppendUvarint(dst, tag)
	dst = kbin.AppendUvarint(dst, uint32(len(body)))
	return append(dst, body...)
}
