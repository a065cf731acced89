package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// The recovery-point file is 16 bytes, big-endian:
//
//	version uint32 (1) | offset int64 | crc32c uint32 of the first 12 bytes
//
// Every segment wholly below the offset has a durable .log and durable index
// files, so recovery trusts it without a scan.
// A file that fails its checks is treated as absent, which scans everything.
const (
	recoveryPointVersion = 1
	recoveryPointSize    = 16
)

func encodeRecoveryPoint(o base.Offset) []byte {
	b := make([]byte, 0, recoveryPointSize)
	b = binary.BigEndian.AppendUint32(b, recoveryPointVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(o))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeRecoveryPoint(b []byte) (base.Offset, bool) {
	if len(b) != recoveryPointSize ||
		binary.BigEndian.Uint32(b) != recoveryPointVersion ||
		binary.BigEndian.Uint32(b[12:]) != crc32.Checksum(b[:12], castagnoli) {
		return 0, false
	}
	o := base.Offset(binary.BigEndian.Uint64(b[4:]))
	return o, o >= 0
}

// readRecoveryPoint returns the persisted recovery point, if a valid one exists.
func readRecoveryPoint(fsys vfs.FS, dir string) (base.Offset, bool, error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(dir, recoveryPointName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("log: read recovery point: %w", err)
	}
	o, ok := decodeRecoveryPoint(b)
	return o, ok, nil
}

func writeRecoveryPoint(fsys vfs.FS, dir string, o base.Offset) error {
	return writeFileAtomic(fsys, dir, recoveryPointName, encodeRecoveryPoint(o))
}
