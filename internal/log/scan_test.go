package log

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/vfs"
)

// TestBatchReaderServesTheFileAcrossWindows: every range batchReader.at
// returns is the file's bytes there, whether it lies in the current
// window, straddles its end, lies before it, or is longer than a window;
// a window re-read near the end of the file is shorter than its buffer,
// and nothing past it is served from the buffer's old bytes.
func TestBatchReaderServesTheFileAcrossWindows(t *testing.T) {
	size := 3*scanWindowBytes + 1000
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i*7 + i>>16)
	}
	path := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := vfs.Or(nil).OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := batchReader{f: f, size: int64(size)}
	for _, c := range []struct{ pos, n int }{
		{0, 100},
		{50, 61},                    // inside the window
		{scanWindowBytes - 50, 100}, // straddles its end
		{scanWindowBytes + 10, 20},  // inside the new one
		{5, 10},                     // before it
		{size - 500, 200},           // a short window at the file's end
		{size - 300, 300},           // inside it, to the end
		{size - 700, 100},           // before it again
		{size - 650, 650},           // within the buffer's capacity, past its window
		{scanWindowBytes / 2, 2*scanWindowBytes + 17}, // longer than a window
	} {
		got, err := r.at(int64(c.pos), c.n)
		if err != nil {
			t.Fatalf("at(%d, %d): %v", c.pos, c.n, err)
		}
		if !bytes.Equal(got, content[c.pos:c.pos+c.n]) {
			t.Fatalf("at(%d, %d) differs from the file", c.pos, c.n)
		}
	}
}
