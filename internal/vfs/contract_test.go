package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// impl is one FS under test and a fresh directory in it.
type impl struct {
	name string
	new  func(t *testing.T) (FS, string)
}

var impls = []impl{
	{"OS", func(t *testing.T) (FS, string) { return OS(), t.TempDir() }},
	{"Mem", func(t *testing.T) (FS, string) {
		m := NewMem()
		if err := m.MkdirAll("/tmp/test", 0o755); err != nil {
			t.Fatal(err)
		}
		return m, "/tmp/test"
	}},
	{"FaultyMem", func(t *testing.T) (FS, string) {
		m := NewMem()
		if err := m.MkdirAll("/d", 0o755); err != nil {
			t.Fatal(err)
		}
		return NewFaulty(m, func(Op, string) error { return nil }), "/d"
	}},
}

// TestContract runs the same behaviours against every FS implementation.
func TestContract(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, fsys FS, dir string)
	}{
		{"CreateWriteReadStat", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			f := mustOpenFile(t, fsys, p, os.O_RDWR|os.O_CREATE|os.O_EXCL)
			mustWrite(t, f, "hello")
			if _, err := f.WriteAt([]byte("J"), 0); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 5)
			if n, err := f.ReadAt(b, 0); n != 5 || err != nil || string(b) != "Jello" {
				t.Fatalf("ReadAt = %d %v %q", n, err, b)
			}
			wantSize(t, f, 5)
			fi, err := fsys.Stat(p)
			if err != nil || fi.Size() != 5 || fi.IsDir() || fi.Name() != "a" {
				t.Fatalf("Stat = %v %v", fi, err)
			}
			mustClose(t, f)
		}},
		{"OpenErrors", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			if _, err := fsys.OpenFile(p, os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("open missing: %v", err)
			}
			mustClose(t, mustOpenFile(t, fsys, p, os.O_WRONLY|os.O_CREATE))
			if _, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("O_EXCL on existing: %v", err)
			}
			if _, err := fsys.OpenFile(filepath.Join(dir, "no", "a"), os.O_RDWR|os.O_CREATE, 0o644); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("create in missing dir: %v", err)
			}
			if _, err := fsys.Stat(filepath.Join(dir, "b")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("stat missing: %v", err)
			}
		}},
		{"TruncAndAppendFlags", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			f := mustOpenFile(t, fsys, p, os.O_WRONLY|os.O_CREATE)
			mustWrite(t, f, "0123456789")
			mustClose(t, f)
			f = mustOpenFile(t, fsys, p, os.O_WRONLY|os.O_APPEND)
			mustWrite(t, f, "ab")
			mustClose(t, f)
			wantContent(t, fsys, p, "0123456789ab")
			f = mustOpenFile(t, fsys, p, os.O_WRONLY|os.O_TRUNC)
			mustWrite(t, f, "x")
			mustClose(t, f)
			wantContent(t, fsys, p, "x")
		}},
		{"ReadPastEnd", func(t *testing.T, fsys FS, dir string) {
			f := mustOpenFile(t, fsys, filepath.Join(dir, "a"), os.O_RDWR|os.O_CREATE)
			defer f.Close()
			mustWrite(t, f, "abc")
			b := make([]byte, 5)
			if n, err := f.ReadAt(b, 1); n != 2 || err != io.EOF {
				t.Fatalf("short ReadAt = %d %v", n, err)
			}
			if n, err := f.ReadAt(b, 3); n != 0 || err != io.EOF {
				t.Fatalf("ReadAt at end = %d %v", n, err)
			}
		}},
		{"TruncateAndGapsZeroFill", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			f := mustOpenFile(t, fsys, p, os.O_RDWR|os.O_CREATE)
			mustWrite(t, f, "abcdef")
			if err := f.Truncate(2); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("Z"), 4); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(6); err != nil {
				t.Fatal(err)
			}
			mustClose(t, f)
			wantContent(t, fsys, p, "ab\x00\x00Z\x00")
		}},
		{"ReadOnlyHandleRejectsWrites", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			mustClose(t, mustOpenFile(t, fsys, p, os.O_WRONLY|os.O_CREATE))
			f := mustOpenFile(t, fsys, p, os.O_RDONLY)
			defer f.Close()
			if _, err := f.Write([]byte("x")); err == nil {
				t.Fatal("Write on a read-only handle succeeded")
			}
			if err := f.Sync(); err != nil {
				t.Fatalf("Sync on a read-only handle: %v", err)
			}
		}},
		{"ClosedFile", func(t *testing.T, fsys FS, dir string) {
			f := mustOpenFile(t, fsys, filepath.Join(dir, "a"), os.O_RDWR|os.O_CREATE)
			mustClose(t, f)
			if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, fs.ErrClosed) {
				t.Fatalf("ReadAt after Close: %v", err)
			}
			if _, err := f.Write([]byte("x")); !errors.Is(err, fs.ErrClosed) {
				t.Fatalf("Write after Close: %v", err)
			}
			if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
				t.Fatalf("second Close: %v", err)
			}
		}},
		{"RenameReplacesAndHandlesFollow", func(t *testing.T, fsys FS, dir string) {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			f := mustOpenFile(t, fsys, a, os.O_RDWR|os.O_CREATE)
			defer f.Close()
			mustWrite(t, f, "new")
			writeFile(t, fsys, b, "old")
			if err := fsys.Rename(a, b); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, f, "er") // the handle follows the file
			wantContent(t, fsys, b, "newer")
			if _, err := fsys.Stat(a); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("old name after rename: %v", err)
			}
			if err := fsys.Rename(a, b); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("rename missing: %v", err)
			}
		}},
		{"RemoveKeepsOpenHandle", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			writeFile(t, fsys, p, "data")
			f := mustOpenFile(t, fsys, p, os.O_RDONLY)
			defer f.Close()
			if err := fsys.Remove(p); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 4)
			if _, err := f.ReadAt(b, 0); err != nil || string(b) != "data" {
				t.Fatalf("read unlinked = %q %v", b, err)
			}
			if err := fsys.Remove(p); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("remove missing: %v", err)
			}
		}},
		{"Directories", func(t *testing.T, fsys FS, dir string) {
			sub := filepath.Join(dir, "x", "y")
			if err := fsys.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := fsys.MkdirAll(sub, 0o755); err != nil {
				t.Fatalf("MkdirAll of an existing dir: %v", err)
			}
			writeFile(t, fsys, filepath.Join(dir, "x", "f"), "1")
			writeFile(t, fsys, filepath.Join(dir, "b"), "2")
			if err := fsys.MkdirAll(filepath.Join(dir, "b", "c"), 0o755); err == nil {
				t.Fatal("MkdirAll through a file succeeded")
			}
			if err := fsys.Remove(filepath.Join(dir, "x")); err == nil {
				t.Fatal("Remove of a non-empty dir succeeded")
			}
			wantNames(t, fsys, dir, "b", "x")
			wantNames(t, fsys, filepath.Join(dir, "x"), "f", "y")
			if err := fsys.SyncDir(sub); err != nil {
				t.Fatal(err)
			}
			if err := fsys.SyncDir(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("SyncDir missing: %v", err)
			}
			if err := fsys.RemoveAll(filepath.Join(dir, "x")); err != nil {
				t.Fatal(err)
			}
			if err := fsys.RemoveAll(filepath.Join(dir, "x")); err != nil {
				t.Fatalf("RemoveAll missing: %v", err)
			}
			wantNames(t, fsys, dir, "b")
		}},
		{"SyncAndDatasync", func(t *testing.T, fsys FS, dir string) {
			f := mustOpenFile(t, fsys, filepath.Join(dir, "a"), os.O_RDWR|os.O_CREATE)
			mustWrite(t, f, "durable")
			if err := f.Datasync(); err != nil {
				t.Fatalf("Datasync: %v", err)
			}
			if err := f.Sync(); err != nil {
				t.Fatalf("Sync: %v", err)
			}
			mustClose(t, f)
			wantContent(t, fsys, filepath.Join(dir, "a"), "durable")
		}},
		{"RenameOntoItself", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			writeFile(t, fsys, p, "same")
			if err := fsys.Rename(p, p); err != nil {
				t.Fatalf("Rename onto itself: %v", err)
			}
			wantContent(t, fsys, p, "same")
		}},
		{"RenameAndRemoveRefusals", func(t *testing.T, fsys FS, dir string) {
			at := func(name string) string { return filepath.Join(dir, name) }
			for _, d := range []string{"d", "e", "full", "empty"} {
				if err := fsys.MkdirAll(at(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, fsys, at("f"), "f")
			writeFile(t, fsys, at("full/one"), "1") // exactly one entry
			for _, tt := range []struct {
				from, to string
				want     error
			}{
				// os.Rename never replaces a directory, empty or not.
				{"f", "d", syscall.EEXIST},
				{"d", "full", syscall.EEXIST},
				{"d", "empty", syscall.EEXIST},
				{"d", "d", syscall.EEXIST},
				{"d", "f", syscall.ENOTDIR},
				{"d", "d/sub", syscall.EINVAL},
			} {
				if err := fsys.Rename(at(tt.from), at(tt.to)); !errors.Is(err, tt.want) {
					t.Errorf("Rename %s over %s: %v, want %v", tt.from, tt.to, err, tt.want)
				}
			}
			if err := fsys.Remove(at("full")); !errors.Is(err, syscall.ENOTEMPTY) {
				t.Errorf("Remove of a directory holding one entry: %v", err)
			}
			if err := fsys.Remove(at("e")); err != nil {
				t.Errorf("Remove of an empty directory: %v", err)
			}
			if err := fsys.RemoveAll(at("missing/x")); err != nil {
				t.Errorf("RemoveAll below a missing directory: %v", err)
			}
			if err := fsys.RemoveAll(at("f/x")); !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("RemoveAll below a file: %v", err)
			}
			wantNames(t, fsys, dir, "d", "empty", "f", "full")
		}},
		{"AccessModes", func(t *testing.T, fsys FS, dir string) {
			p := filepath.Join(dir, "a")
			writeFile(t, fsys, p, "data")
			ro := mustOpenFile(t, fsys, p, os.O_RDONLY)
			if _, err := ro.Write([]byte("x")); !errors.Is(err, syscall.EBADF) {
				t.Errorf("Write on a read-only file: %v", err)
			}
			if _, err := ro.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EBADF) {
				t.Errorf("WriteAt on a read-only file: %v", err)
			}
			if err := ro.Truncate(1); err == nil {
				t.Error("Truncate on a read-only file succeeded")
			}
			mustClose(t, ro)
			wo := mustOpenFile(t, fsys, p, os.O_WRONLY)
			if err := wo.Truncate(-1); err == nil {
				t.Error("Truncate to a negative size succeeded")
			}
			if err := wo.Truncate(0); err != nil {
				t.Errorf("Truncate to 0: %v", err)
			}
			wantSize(t, wo, 0)
			mustWrite(t, wo, "data")
			if _, err := wo.ReadAt(make([]byte, 1), 0); !errors.Is(err, syscall.EBADF) {
				t.Errorf("ReadAt on a write-only file: %v", err)
			}
			mustClose(t, wo)
			d := mustOpenFile(t, fsys, dir, os.O_RDONLY)
			if _, err := d.ReadAt(make([]byte, 1), 0); !errors.Is(err, syscall.EISDIR) {
				t.Errorf("ReadAt on a directory: %v", err)
			}
			if err := d.Sync(); err != nil {
				t.Errorf("Sync of a directory: %v", err)
			}
			if fi, err := d.Stat(); err != nil || !fi.IsDir() {
				t.Errorf("Stat of a directory: %v, %v", fi, err)
			}
			mustClose(t, d)
			wantContent(t, fsys, p, "data")
		}},
		{"AtomicHelpers", func(t *testing.T, fsys FS, dir string) {
			for _, content := range []string{"one", "two"} {
				if err := WriteFileAtomicFS(fsys, dir, "f", []byte(content)); err != nil {
					t.Fatal(err)
				}
				wantContent(t, fsys, filepath.Join(dir, "f"), content)
			}
			wantNames(t, fsys, dir, "f")
			nested := filepath.Join(dir, "p", "q")
			if err := MkdirAllSynced(fsys, nested); err != nil {
				t.Fatal(err)
			}
			writeFile(t, fsys, filepath.Join(nested, "z"), "z")
			if err := RemoveDirFS(fsys, nested); err != nil {
				t.Fatal(err)
			}
			if err := RemoveDirFS(fsys, nested); err != nil {
				t.Fatalf("RemoveDirFS of a missing dir: %v", err)
			}
			wantNames(t, fsys, filepath.Join(dir, "p"))
		}},
	}
	for _, im := range impls {
		for _, c := range cases {
			t.Run(im.name+"/"+c.name, func(t *testing.T) {
				fsys, dir := im.new(t)
				c.run(t, fsys, dir)
			})
		}
	}
}

func mustOpenFile(t *testing.T, fsys FS, p string, flag int) File {
	t.Helper()
	f, err := fsys.OpenFile(p, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustWrite(t *testing.T, f File, s string) {
	t.Helper()
	if n, err := f.Write([]byte(s)); n != len(s) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
}

func mustClose(t *testing.T, f File) {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, fsys FS, p, s string) {
	t.Helper()
	f := mustOpenFile(t, fsys, p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	mustWrite(t, f, s)
	mustClose(t, f)
}

func wantSize(t *testing.T, f File, n int64) {
	t.Helper()
	fi, err := f.Stat()
	if err != nil || fi.Size() != n {
		t.Fatalf("size = %v %v, want %d", fi, err, n)
	}
}

func wantContent(t *testing.T, fsys FS, p, want string) {
	t.Helper()
	b, err := ReadFile(fsys, p)
	if err != nil || string(b) != want {
		t.Fatalf("%s = %q %v, want %q", p, b, err, want)
	}
}

func wantNames(t *testing.T, fsys FS, dir string, want ...string) {
	t.Helper()
	es, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ReadDir(%s) = %q, want %q", dir, got, want)
	}
}
