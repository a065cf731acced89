package e2e

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"testing"
)

// segmentDataBytes is how many bytes of the .log file at path are
// batches: the frames from the start up to the first that is zero or
// runs past the file. The active segment's file is longer than its data
// (the log zero-fills ahead of its writes); a sealed segment's is exact.
// A file deleted meanwhile has ok false.
func segmentDataBytes(t *testing.T, path string) (n int64, ok bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	const frame = 12 // base offset, length
	for pos := 0; pos+frame <= len(data); {
		length := int32(binary.BigEndian.Uint32(data[pos+8:]))
		if length <= 0 || pos+frame+int(length) > len(data) {
			break
		}
		pos += frame + int(length)
		n = int64(pos)
	}
	return n, true
}
