package log

import (
	"os"
	"syscall"
	"testing"
)

func allocatedBytes(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}

// TestPreallocationIsBoundedAndReleased: a small active segment reserves
// little ahead of its data, and a sealed one keeps no reservation.
func TestPreallocationIsBoundedAndReleased(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 1, 1, 100, 1000)
	first := segmentPath(o.Dir, 0, logSuffix)
	if got := allocatedBytes(t, first); got > 2*preallocFirstStepBytes {
		t.Fatalf("a one-batch segment holds %d bytes of blocks; want at most %d", got, 2*preallocFirstStepBytes)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, 1, 100, 2000)
	fi, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := allocatedBytes(t, first); got > fi.Size()+64<<10 {
		t.Fatalf("a sealed segment of %d bytes keeps %d bytes of blocks", fi.Size(), got)
	}
}
