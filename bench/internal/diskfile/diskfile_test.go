package diskfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/vfs"
)

func TestZeroFillWritesExactlySize(t *testing.T) {
	for _, size := range []int64{0, 1, 1 << 20, 1<<20 + 4097} {
		name := filepath.Join(t.TempDir(), "f")
		f, err := vfs.OS().OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := ZeroFill(f, size); err != nil {
			t.Fatalf("ZeroFill(%d): %v", size, err)
		}
		f.Close()
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != size || !bytes.Equal(got, make([]byte, size)) {
			t.Errorf("ZeroFill(%d): file of %d bytes, want %d zeros", size, len(got), size)
		}
	}
}
