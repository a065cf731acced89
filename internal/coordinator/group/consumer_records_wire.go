package group

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// The wire types shared by the consumer group records (consumer_records.go):
// a reader that validates as it goes and says what was wrong, and the
// writers Kafka's generated code would use for the same types.

// maxStringBytes bounds every string of these records, as Kafka's generated
// readers and writers do (0x7fff).
const maxStringBytes = 0x7fff

// recordReader decodes one key or value. It keeps the first thing wrong with
// its input; after that every read returns the zero value, so decoders read
// straight through and check the error once, at done.
type recordReader struct {
	record string // Kafka's name of what is read, for errors
	b      kbin.Reader
	err    error
}

func newRecordReader(record string, src []byte) *recordReader {
	return &recordReader{record: record, b: kbin.Reader{Src: src}}
}

// newValueReader reads the value version: Kafka refuses a version outside
// the schema's valid versions, and every consumer value has only the newest.
func newValueReader(record string, value []byte) *recordReader {
	r := newRecordReader(record, value)
	if v := r.int16("version"); r.err == nil && v != consumerValueVersion {
		r.fail("value version %d (Kafka's newest is %d)", v, consumerValueVersion)
	}
	return r
}

func (r *recordReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: %s", ErrBadRecord, r.record, fmt.Sprintf(format, args...))
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

// done is the end of what r reads: bytes left over make the input bad.
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

// compactLen reads a compact length (uvarint n+1, 0 for null): -1 is null.
func (r *recordReader) compactLen(field string) int64 {
	return int64(r.uvarint(field)) - 1
}

// stringOf reads the n bytes of a string whose length was read already;
// n < 0 is null, an error unless nullable.
func (r *recordReader) stringOf(field string, n int64, nullable bool) *string {
	switch {
	case r.err != nil:
		return nil
	case n < 0 && nullable:
		return nil
	case n < 0:
		r.fail("%s: non-nullable string is null", field)
		return nil
	case n > maxStringBytes:
		r.fail("%s: string of %d bytes (Kafka's limit is %d)", field, n, maxStringBytes)
		return nil
	}
	b := r.b.Span(int(n))
	if !r.ok(field) {
		return nil
	}
	s := string(b)
	return &s
}

func (r *recordReader) nullableString(field string) *string {
	return r.stringOf(field, r.compactLen(field), true)
}

func (r *recordReader) string(field string) string {
	if s := r.stringOf(field, r.compactLen(field), false); s != nil {
		return *s
	}
	return ""
}

// keyString reads a string of a key, which is not flexible (int16 length).
func (r *recordReader) keyString(field string) string {
	if s := r.stringOf(field, int64(r.int16(field)), false); s != nil {
		return *s
	}
	return ""
}

// bytes reads non-nullable compact bytes into a fresh slice (nil if empty).
func (r *recordReader) bytes(field string) []byte {
	n := r.compactLen(field)
	if r.err == nil && n < 0 {
		r.fail("%s: non-nullable bytes are null", field)
	}
	if r.err == nil && n > int64(len(r.b.Src)) {
		r.fail("%s: truncated", field)
	}
	if r.err != nil || n == 0 {
		return nil
	}
	return append([]byte(nil), r.b.Span(int(n))...)
}

// arrayLen reads a compact array length, -1 for null (an error unless
// nullable). It checks that the input can hold that many elements of at
// least minElemBytes each, so that callers may allocate for them.
func (r *recordReader) arrayLen(field string, minElemBytes int, nullable bool) int {
	n := r.compactLen(field)
	switch {
	case r.err != nil:
		return 0
	case n < 0 && !nullable:
		r.fail("%s: non-nullable array is null", field)
		return 0
	case n > int64(len(r.b.Src)/minElemBytes):
		r.fail("%s: %d elements in %d bytes", field, n, len(r.b.Src))
		return 0
	}
	return int(n)
}

// int32List reads a compact []int32: nil if null or empty, except that a
// nullable list that is present and empty is non-nil.
func (r *recordReader) int32List(field string, nullable bool) []int32 {
	n := r.arrayLen(field, 4, nullable)
	if n < 0 || (n == 0 && !nullable) || r.err != nil {
		return nil
	}
	l := make([]int32, n)
	for i := range l {
		l[i] = r.int32(field)
	}
	return l
}

// stringList reads a non-nullable compact []string (nil if empty).
func (r *recordReader) stringList(field string) []string {
	n := r.arrayLen(field, 1, false)
	if n == 0 {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = r.string(field)
	}
	return l
}

// tags reads the tagged-field section that ends every struct of a flexible
// version. known decodes a field that the schema declares from a reader of
// exactly that field's bytes, which it must read whole, and reports whether
// it knew the tag; Kafka skips the others, and so does this.
func (r *recordReader) tags(known func(tag uint32, field *recordReader) bool) {
	n := r.uvarint("tagged fields")
	for ; n > 0 && r.err == nil; n-- {
		tag := r.uvarint("tag")
		size := r.uvarint("tagged field size")
		body := r.b.Span(int(size))
		if !r.ok("tagged field") || known == nil {
			continue
		}
		field := newRecordReader(fmt.Sprintf("%s tag %d", r.record, tag), body)
		if known(tag, field) {
			if err := field.done(); err != nil {
				r.err, r.b.Src = err, nil
			}
		}
	}
}

// recordTag is one tagged field to write: its tag and its encoded value.
type recordTag struct {
	tag  uint32
	body []byte
}

// appendTags writes a tagged-field section; tags must be in ascending order
// (Kafka writes them so) and hold only the fields that differ from their
// defaults.
func appendTags(dst []byte, tags ...recordTag) []byte {
	dst = kbin.AppendUvarint(dst, uint32(len(tags)))
	for i, t := range tags {
		if i > 0 && t.tag <= tags[i-1].tag {
			panic(fmt.Sprintf("group: tagged field %d written after %d", t.tag, tags[i-1].tag))
		}
		dst = kbin.AppendUvarint(dst, t.tag)
		dst = kbin.AppendUvarint(dst, uint32(len(t.body)))
		dst = append(dst, t.body...)
	}
	return dst
}

// checkString asserts Kafka's limit on a string to write: the strings of
// these records come from requests, whose decoding has the same limit.
func checkString(s string) string {
	if len(s) > maxStringBytes {
		panic(fmt.Sprintf("group: string of %d bytes in a consumer group record (limit %d)", len(s), maxStringBytes))
	}
	return s
}

func appendString(dst []byte, s string) []byte {
	return kbin.AppendCompactString(dst, checkString(s))
}

func appendNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return kbin.AppendCompactNullableString(dst, nil)
	}
	return appendString(dst, *s)
}

func appendStringList(dst []byte, l []string) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(l))
	for _, s := range l {
		dst = appendString(dst, s)
	}
	return dst
}

func appendInt32List(dst []byte, l []int32) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(l))
	for _, v := range l {
		dst = kbin.AppendInt32(dst, v)
	}
	return dst
}
