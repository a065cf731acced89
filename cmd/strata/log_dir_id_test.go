package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogDirID: a directory's id is drawn once and read back the same; a
// garbled file is refused with a line that names it.
func TestLogDirID(t *testing.T) {
	dir := t.TempDir()
	first, err := logDirID(dir)
	if err != nil || first == [16]byte{} {
		t.Fatalf("drawing: %x, %v", first, err)
	}
	again, err := logDirID(dir)
	if err != nil || again != first {
		t.Fatalf("reading back: %x, %v, want %x", again, err, first)
	}
	other, err := logDirID(t.TempDir())
	if err != nil || other == first {
		t.Fatalf("another directory: %x, %v", other, err)
	}
	if err := os.WriteFile(filepath.Join(dir, logDirIDFile), []byte("not hex\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := logDirID(dir); err == nil || !strings.Contains(err.Error(), logDirIDFile) {
		t.Fatalf("garbled file: %v", err)
	}
}
