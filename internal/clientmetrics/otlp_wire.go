package clientmetrics

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrMalformedMetrics is wrapped by every DecodeMetrics error.
var ErrMalformedMetrics = errors.New("clientmetrics: malformed OTLP metrics")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedMetrics, fmt.Sprintf(format, args...))
}

// Bounds on array and key-value list attribute values: how deep they
// nest, so that a hostile payload cannot recurse deeply, and how many
// elements one holds, so that rendering it allocates little.
const (
	maxValueDepth    = 16
	maxValueElements = 1 << 12
)

// field is one protobuf field of a message: its number and wire type, and
// its value (u64 for varint and fixed fields, bytes for length-delimited
// ones; groups are skipped and carry nothing).
type field struct {
	num   protowire.Number
	typ   protowire.Type
	u64   uint64
	bytes []byte
}

// is reports whether f is field num with wire type typ. A known field
// number with another wire type is an unknown field, as protobuf parsers
// treat it.
func (f field) is(num protowire.Number, typ protowire.Type) bool {
	return f.num == num && f.typ == typ
}

// str is f's bytes as a proto3 string, which must be UTF-8.
func (f field) str() (string, error) {
	if !utf8.Valid(f.bytes) {
		return "", malformed("field %d is not valid UTF-8", f.num)
	}
	return string(f.bytes), nil
}

// fields calls fn for each field of the message b, in order. Every length
// is checked against what remains before it is used.
func fields(b []byte, fn func(field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed("tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u64, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			f.u64, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.u64 = uint64(v)
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return malformed("field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// decodeKeyValue decodes a common.v1.KeyValue into an attribute.
func decodeKeyValue(b []byte, depth int) (Attribute, error) {
	var kv Attribute
	err := fields(b, func(f field) error {
		var err error
		switch {
		case f.is(1, protowire.BytesType):
			kv.Key, err = f.str()
		case f.is(2, protowire.BytesType):
			kv.Value, err = anyValueString(f.bytes, depth)
		}
		return err
	})
	return kv, err
}

// anyValueString renders a common.v1.AnyValue as a string: strings as
// they are, booleans and numbers as Go formats them, bytes in standard
// base64, arrays as [a,b] and key-value lists as {k=v,k2=v2}. An unset
// value is "". Of several values of the oneof, the last wins.
func anyValueString(b []byte, depth int) (string, error) {
	if depth > maxValueDepth {
		return "", malformed("attribute values nested deeper than %d", maxValueDepth)
	}
	var s string
	err := fields(b, func(f field) error {
		var err error
		switch {
		case f.is(1, protowire.BytesType):
			s, err = f.str()
		case f.is(2, protowire.VarintType):
			s = strconv.FormatBool(f.u64 != 0)
		case f.is(3, protowire.VarintType):
			s = strconv.FormatInt(int64(f.u64), 10)
		case f.is(4, protowire.Fixed64Type):
			s = strconv.FormatFloat(math.Float64frombits(f.u64), 'g', -1, 64)
		case f.is(5, protowire.BytesType):
			s, err = joinValues(f.bytes, depth+1, "[", "]", func(b []byte) (string, error) {
				return anyValueString(b, depth+1)
			})
		case f.is(6, protowire.BytesType):
			s, err = joinValues(f.bytes, depth+1, "{", "}", func(b []byte) (string, error) {
				kv, err := decodeKeyValue(b, depth+1)
				return kv.Key + "=" + kv.Value, err
			})
		case f.is(7, protowire.BytesType):
			s = base64.StdEncoding.EncodeToString(f.bytes)
		}
		return err
	})
	return s, err
}

// joinValues renders the repeated field 1 of an ArrayValue or a
// KeyValueList, each element with render.
func joinValues(b []byte, depth int, open, close string, render func([]byte) (string, error)) (string, error) {
	if depth > maxValueDepth {
		return "", malformed("attribute values nested deeper than %d", maxValueDepth)
	}
	var parts []string
	err := fields(b, func(f field) error {
		if !f.is(1, protowire.BytesType) {
			return nil
		}
		if len(parts) == maxValueElements {
			return malformed("attribute value with more than %d elements", maxValueElements)
		}
		s, err := render(f.bytes)
		parts = append(parts, s)
		return err
	})
	return open + strings.Join(parts, ",") + close, err
}

// mergeAttributes returns base and over as one list sorted by key, with
// unique keys: of two equal keys the later wins, and over comes after base.
func mergeAttributes(base, over []Attribute) []Attribute {
	if len(base)+len(over) == 0 {
		return nil
	}
	all := make([]Attribute, 0, len(base)+len(over))
	all = append(append(all, base...), over...)
	slices.SortStableFunc(all, func(a, b Attribute) int { return strings.Compare(a.Key, b.Key) })
	out := all[:0]
	for i, a := range all {
		if i+1 < len(all) && all[i+1].Key == a.Key {
			continue // a later one of the same key wins
		}
		out = append(out, a)
	}
	return out
}
