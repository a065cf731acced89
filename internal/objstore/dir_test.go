package objstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func newDirAt(t *testing.T, root string) Store {
	t.Helper()
	s, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tempFiles lists the temporary files under root.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(de.Name(), tempPrefix) {
			found = append(found, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestDirObjectIsAPlainFile: root/a/b/c holds the object "a/b/c", so an
// operator can look at the remote tier of a laptop broker with ls.
func TestDirObjectIsAPlainFile(t *testing.T) {
	root := t.TempDir()
	s := newDirAt(t, root)
	put(t, s, "topic/0/00000000000000000000.log", []byte("batch bytes"))
	data, err := os.ReadFile(filepath.Join(root, "topic", "0", "00000000000000000000.log"))
	if err != nil || string(data) != "batch bytes" {
		t.Fatalf("file = %q, %v", data, err)
	}
}

// TestDirCrashLeavesTempFile: a Put interrupted by a crash leaves a
// temporary file, never a partial object: List does not show it, Get does
// not find it, and the next NewDir removes it once it is older than
// tempFileGrace. A younger one may be a Put running in another process
// that shares the directory (the brokers of a cluster): NewDir leaves it.
func TestDirCrashLeavesTempFile(t *testing.T) {
	root := t.TempDir()
	s := newDirAt(t, root)
	put(t, s, "a/b", []byte("acknowledged"))
	debris := []string{
		filepath.Join(root, "a", tempPrefix+"123456"),
		filepath.Join(root, tempPrefix+"9"),
	}
	inFlight := filepath.Join(root, "a", tempPrefix+"777")
	old := time.Now().Add(-tempFileGrace - time.Minute)
	for _, p := range append(debris, inFlight) {
		if err := os.WriteFile(p, []byte("half an upl"), 0o644); err != nil {
			t.Fatal(err)
		}
		if p != inFlight {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantKeys(t, s, "", "a/b")
	wantKeys(t, s, "a/", "a/b")

	s = newDirAt(t, root) // the restart
	if left := tempFiles(t, root); len(left) != 1 || left[0] != inFlight {
		t.Fatalf("NewDir left %q, want only the young %s", left, inFlight)
	}
	// Once it is old too, a listing sweeps it.
	if err := os.Chtimes(inFlight, old, old); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "", "a/b")
	if left := tempFiles(t, root); len(left) != 0 {
		t.Fatalf("List left %q", left)
	}
	if got := get(t, s, "a/b"); string(got) != "acknowledged" {
		t.Fatalf("after restart Get = %q", got)
	}
}

// TestDirFailedPutLeavesNothing: a Put whose body fails removes its
// temporary file and keeps the old object.
func TestDirFailedPutLeavesNothing(t *testing.T) {
	root := t.TempDir()
	s := newDirAt(t, root)
	put(t, s, "k/v", []byte("old"))
	errBody := errors.New("read failed")
	if err := s.Put(testCtx(t), "k/v", errReader{errBody}, 10); !errors.Is(err, errBody) {
		t.Fatalf("Put = %v", err)
	}
	if left := tempFiles(t, root); len(left) != 0 {
		t.Fatalf("failed Put left %q", left)
	}
	if got := get(t, s, "k/v"); string(got) != "old" {
		t.Fatalf("Get = %q", got)
	}
}

// TestDirDeletePrunesEmptyDirectories: directories emptied by Delete go,
// up to (not including) the root.
func TestDirDeletePrunesEmptyDirectories(t *testing.T) {
	root := t.TempDir()
	s := newDirAt(t, root)
	put(t, s, "a/b/c", []byte("1"))
	put(t, s, "a/x", []byte("2"))
	ctx := testCtx(t)
	if err := s.Delete(ctx, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a/b still there: %v", err)
	}
	if err := s.Delete(ctx, "a/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a still there: %v", err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("root removed: %v", err)
	}
}

// TestDirPutRacesPrune: a Put into a directory that a concurrent Delete
// empties and removes must still succeed.
func TestDirPutRacesPrune(t *testing.T) {
	s := newDirAt(t, t.TempDir())
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Go(func() {
			key := fmt.Sprintf("x/y/z/%d", w)
			for range 300 {
				err := s.Put(ctx, key, strings.NewReader("v"), 1)
				if err == nil {
					err = s.Delete(ctx, key)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestDirKeyConflict: a directory cannot hold both "a" and "a/b"; such a
// Put fails with a clear error and changes nothing.
func TestDirKeyConflict(t *testing.T) {
	s := newDirAt(t, t.TempDir())
	put(t, s, "a", []byte("file"))
	put(t, s, "x/y", []byte("below"))
	ctx := testCtx(t)
	err := s.Put(ctx, "a/b", strings.NewReader("v"), 1)
	if err == nil || !strings.Contains(err.Error(), "cannot also be a directory") {
		t.Fatalf("Put(a/b) over object a = %v", err)
	}
	err = s.Put(ctx, "x", strings.NewReader("v"), 1)
	if err == nil || !strings.Contains(err.Error(), "cannot also be an object") {
		t.Fatalf("Put(x) over directory x = %v", err)
	}
	wantKeys(t, s, "", "a", "x/y")
}

func TestNewDirErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDir(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("NewDir on a file = %v", err)
	}
	if _, err := NewDir(""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NewDir(\"\") = %v", err)
	}
	if err := newDirAt(t, t.TempDir()).PutFile(testCtx(t), "k", t.TempDir()); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("PutFile of a directory = %v, want ErrInvalidArgument", err)
	}
}
