package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// DupOS hands out a descriptor that outlives the file's closing and
// removal, as a sendfile in flight needs; only OS files have one.
func TestDupOS(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seg")
	f := mustOpenFile(t, OS(), p, os.O_RDWR|os.O_CREATE)
	mustWrite(t, f, "segment bytes")
	dup, err := DupOS(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dup.Close()
	mustClose(t, f)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(io.NewSectionReader(dup, 0, 64))
	if err != nil || string(b) != "segment bytes" {
		t.Fatalf("read through the duplicate: %q, %v", b, err)
	}
	m := NewMem()
	mf := mustOpenFile(t, m, "/f", os.O_RDWR|os.O_CREATE)
	if _, err := DupOS(mf); !errors.Is(err, ErrNoDescriptor) {
		t.Fatalf("DupOS of a memory file: %v", err)
	}
	if err := Preallocate(mf, 0, 4096); !errors.Is(err, ErrNoDescriptor) {
		t.Fatalf("Preallocate of a memory file: %v", err)
	}
}

// Preallocate reserves blocks without changing the file's size.
func TestPreallocateKeepsTheSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seg")
	f := mustOpenFile(t, OS(), p, os.O_RDWR|os.O_CREATE)
	defer mustClose(t, f)
	mustWrite(t, f, "abc")
	err := Preallocate(f, 0, 1<<20)
	if errors.Is(err, unix.EOPNOTSUPP) {
		t.Skip("the test directory's file system cannot preallocate")
	}
	if err != nil {
		t.Fatal(err)
	}
	wantSize(t, f, 3)
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 < 1<<20 {
		t.Fatalf("%d bytes allocated after preallocating 1 MiB", st.Blocks*512)
	}
}
