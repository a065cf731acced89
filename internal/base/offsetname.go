package base

import (
	"fmt"
	"math"
)

// OffsetNameDigits is how many digits an offset takes in a file name
// (segments, producer snapshots): zero-padded, as Kafka names them.
const OffsetNameDigits = 20

// OffsetName is o as a file name's 20 zero-padded digits.
func OffsetName(o Offset) string { return fmt.Sprintf("%0*d", OffsetNameDigits, int64(o)) }

// ParseOffsetName reads the offset of a file name's stem: exactly 20
// decimal digits (no sign: a name OffsetName never writes would lead to
// a file that is not there) of a non-negative int64.
func ParseOffsetName(stem string) (Offset, bool) {
	if len(stem) != OffsetNameDigits {
		return 0, false
	}
	var n int64
	for i := 0; i < len(stem); i++ {
		c := stem[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 { // n*10+d would pass MaxInt64
			return 0, false
		}
		n = n*10 + d
	}
	return Offset(n), true
}
