package recordwire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Tag is one tagged field to write: its tag and its encoded value.
type Tag struct {
	Tag  uint32
	Body []byte
}

// AppendTags writes a tagged-field section; tags must be in ascending
// order (Kafka writes them so) and hold only the fields that differ from
// their defaults.
func AppendTags(dst []byte, tags ...Tag) []byte {
	dst = kbin.AppendUvarint(dst, uint32(len(tags)))
	for i, t := range tags {
		if i > 0 && t.Tag <= tags[i-1].Tag {
			panic(fmt.Sprintf("recordwire: tagged field %d written after %d", t.Tag, tags[i-1].Tag))
		}
		dst = kbin.AppendUvarint(dst, t.Tag)
		dst = kbin.AppendUvarint(dst, uint32(len(t.Body)))
		dst = append(dst, t.Body...)
	}
	return dst
}

// CheckString asserts Kafka's limit on a string to write: the strings of
// these records come from requests, whose decoding has the same limit.
func CheckString(s string) string {
	if len(s) > MaxStringBytes {
		panic(fmt.Sprintf("recordwire: string of %d bytes in a coordinator record (limit %d)", len(s), MaxStringBytes))
	}
	return s
}

// AppendString writes a compact string.
func AppendString(dst []byte, s string) []byte {
	return kbin.AppendCompactString(dst, CheckString(s))
}

// AppendNullableString writes a compact nullable string.
func AppendNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return kbin.AppendCompactNullableString(dst, nil)
	}
	return AppendString(dst, *s)
}

// AppendStringList writes a compact []string.
func AppendStringList(dst []byte, l []string) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(l))
	for _, s := range l {
		dst = AppendString(dst, s)
	}
	return dst
}

// AppendInt32List writes a compact []int32.
func AppendInt32List(dst []byte, l []int32) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(l))
	for _, v := range l {
		dst = kbin.AppendInt32(dst, v)
	}
	return dst
}
