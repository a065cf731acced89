package recordwire

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
)

var errBad = errors.New("bad record")

func TestReaderRoundTrip(t *testing.T) {
	name := "n"
	b := kbin.AppendInt16(nil, 7)
	b = AppendString(b, "hello")
	b = AppendNullableString(b, nil)
	b = AppendNullableString(b, &name)
	b = AppendStringList(b, []string{"a", "b"})
	b = AppendInt32List(b, []int32{1, 2, 3})
	b = AppendTags(b, Tag{Tag: 0, Body: kbin.AppendInt64(nil, 9)}, Tag{Tag: 5, Body: []byte{1, 2}})
	r := NewReader(errBad, "Test", b)
	var tagged int64
	got := []any{r.Int16("a"), r.CompactString("b"), r.NullableString("c"), *r.NullableString("d"), r.StringList("e"), r.Int32List("f", false)}
	r.Tags(func(tag uint32, f *Reader) bool {
		if tag != 0 {
			return false // skipped, as Kafka skips unknown tags
		}
		tagged = f.Int64("tag0")
		return true
	})
	if err := r.Done(); err != nil || got[0] != int16(7) || got[1] != "hello" || got[2] != (*string)(nil) || got[3] != "n" || tagged != 9 {
		t.Fatalf("read %v (tag %d): %v", got, tagged, err)
	}
	for cut := range b {
		r := NewReader(errBad, "Test", b[:cut])
		r.Int16("a")
		r.CompactString("b")
		r.NullableString("c")
		r.NullableString("d")
		r.StringList("e")
		r.Int32List("f", false)
		r.Tags(nil)
		if err := r.Done(); !errors.Is(err, errBad) {
			t.Fatalf("cut at %d: %v, want an error wrapping the sentinel", cut, err)
		}
	}
}

// A length prefix larger than the bytes left fails without allocating.
func TestReaderRefusesLengthsPastTheInput(t *testing.T) {
	r := NewReader(errBad, "Test", kbin.AppendUvarint(nil, 1<<30))
	if n := r.ArrayLen("l", 4, false); n != 0 || !errors.Is(r.Err(), errBad) {
		t.Fatalf("array of 2^30 elements in 5 bytes: %d, %v", n, r.Err())
	}
}
