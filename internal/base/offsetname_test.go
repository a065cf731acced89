package base

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestParseOffsetName(t *testing.T) {
	for _, tc := range []struct {
		stem string
		want Offset
		ok   bool
	}{
		{"00000000000000000042", 42, true},
		{"00000000000000000000", 0, true},
		{"09223372036854775807", math.MaxInt64, true},
		{"09223372036854775808", 0, false}, // past int64
		{"99999999999999999999", 0, false}, // past uint64 too
		{"18446744073709551620", 0, false}, // 2^64 + 4: must not wrap to 4
		{"0000000000000000042", 0, false},  // 19 digits
		{"000000000000000000042", 0, false},
		{"0000000000000000004x", 0, false},
		{"-0000000000000000001", 0, false},
		{"+0000000000000000001", 0, false},
		{" 0000000000000000001", 0, false},
		{"", 0, false},
	} {
		got, ok := ParseOffsetName(tc.stem)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseOffsetName(%q) = %d, %v; want %d, %v", tc.stem, got, ok, tc.want, tc.ok)
		}
	}
}

func TestOffsetNameRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := Offset(rapid.Int64Range(0, math.MaxInt64).Draw(t, "offset"))
		name := OffsetName(o)
		if got, ok := ParseOffsetName(name); !ok || got != o || len(name) != OffsetNameDigits {
			t.Fatalf("%d named %q parses as %d, %v", o, name, got, ok)
		}
	})
}
