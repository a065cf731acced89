package log

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// A recovery point is used only if every check holds; any other file is
// treated as absent (recovery scans everything).
func TestDecodeRecoveryPoint(t *testing.T) {
	sealed := func(version uint32, o int64) []byte {
		b := binary.BigEndian.AppendUint32(nil, version)
		b = binary.BigEndian.AppendUint64(b, uint64(o))
		return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	flipped := encodeRecoveryPoint(42)
	flipped[11] ^= 1
	for _, tc := range []struct {
		name string
		b    []byte
		want base.Offset
		ok   bool
	}{
		{"valid", encodeRecoveryPoint(42), 42, true},
		{"zero", encodeRecoveryPoint(0), 0, true},
		{"a flipped bit", flipped, 0, false},
		{"another version", sealed(2, 42), 0, false},
		{"a negative offset", sealed(recoveryPointVersion, -1), 0, false},
		{"short", encodeRecoveryPoint(42)[:15], 0, false},
		{"long", append(encodeRecoveryPoint(42), 0), 0, false},
	} {
		got, ok := decodeRecoveryPoint(tc.b)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
