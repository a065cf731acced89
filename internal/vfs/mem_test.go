package vfs

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestMemCrashKeepsOnlyWhatIsDurable(t *testing.T) {
	m := NewMem()
	if err := MkdirAllSynced(m, "/d"); err != nil {
		t.Fatal(err)
	}
	// synced: data synced and entry synced.
	synced := mustOpenFile(t, m, "/d/synced", os.O_RDWR|os.O_CREATE)
	mustWrite(t, synced, "durable")
	if err := synced.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, synced, "+lost")
	// An unsynced rename and an unsynced remove are undone.
	writeFile(t, m, "/d/old", "o")
	writeFile(t, m, "/d/gone", "g")
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/d/old", "/d/new"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("/d/gone"); err != nil {
		t.Fatal(err)
	}
	// nameless: data synced, entry never synced.
	nameless := mustOpenFile(t, m, "/d/nameless", os.O_RDWR|os.O_CREATE)
	mustWrite(t, nameless, "x")
	if err := nameless.Datasync(); err != nil {
		t.Fatal(err)
	}
	// An unsynced directory is lost with its files.
	if err := m.MkdirAll("/e", 0o755); err != nil {
		t.Fatal(err)
	}

	c := m.Crash()
	wantNames(t, c, "/", "d")
	wantNames(t, c, "/d", "gone", "old", "synced")
	wantContent(t, c, "/d/synced", "durable")
	// Nothing was synced in gone and old: the entries survive, empty.
	wantContent(t, c, "/d/old", "")

	// m is unchanged and still usable; c is independent of it.
	wantContent(t, m, "/d/synced", "durable+lost")
	mustWrite(t, synced, "!")
	wantContent(t, c, "/d/synced", "durable")
	writeFile(t, c, "/d/synced", "c")
	wantContent(t, m, "/d/synced", "durable+lost!")
}

func TestMemCrashTornKeepsAPrefixOfTheUnsyncedTail(t *testing.T) {
	m := NewMem()
	f := mustOpenFile(t, m, "/f", os.O_RDWR|os.O_CREATE)
	mustWrite(t, f, "abc")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, "defgh")
	seen := map[string]bool{}
	for seed := range uint64(200) {
		b, err := ReadFile(m.CrashTorn(seed), "/f")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix("abcdefgh", string(b)) || len(b) < 3 {
			t.Fatalf("seed %d: %q is not durable content plus a prefix of the tail", seed, b)
		}
		again, _ := ReadFile(m.CrashTorn(seed), "/f")
		if string(again) != string(b) {
			t.Fatalf("seed %d: %q then %q", seed, b, again)
		}
		seen[string(b)] = true
	}
	if len(seen) != 6 {
		t.Fatalf("torn crashes gave %d distinct contents, want all 6: %v", len(seen), seen)
	}
}

// TestWriteFileAtomicFSCrashAtEveryStep crashes before each operation of
// WriteFileAtomicFS and checks that the file holds the old or the new content.
func TestWriteFileAtomicFSCrashAtEveryStep(t *testing.T) {
	errCrash := errors.New("crash")
	for k := 1; ; k++ {
		m := NewMem()
		if err := MkdirAllSynced(m, "/d"); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomicFS(m, "/d", "f", []byte("old")); err != nil {
			t.Fatal(err)
		}
		n, crashed := 0, []*Mem(nil)
		faulty := NewFaulty(m, func(op Op, path string) error {
			if n++; n == k {
				crashed = append(crashed, m.Crash(), m.CrashTorn(uint64(k)))
			}
			if n >= k {
				return errCrash
			}
			return nil
		})
		err := WriteFileAtomicFS(faulty, "/d", "f", []byte("new"))
		if crashed == nil {
			if err != nil {
				t.Fatal(err)
			}
			if k < 5 {
				t.Fatalf("only %d operations", k-1)
			}
			return
		}
		if !errors.Is(err, errCrash) {
			t.Fatalf("step %d: error %v, want the injected one", k, err)
		}
		for _, c := range crashed {
			b, err := ReadFile(c, "/d/f")
			if err != nil || (string(b) != "old" && string(b) != "new") {
				t.Fatalf("crash before step %d: %q %v", k, b, err)
			}
		}
	}
}

func TestFaultyInjectsAndNames(t *testing.T) {
	boom := errors.New("boom")
	var trace []string
	fsys := NewFaulty(NewMem(), func(op Op, path string) error {
		trace = append(trace, op.String()+" "+path)
		if op == OpSync {
			return boom
		}
		return nil
	})
	if err := WriteFileAtomicFS(fsys, "/", "f", []byte("x")); !errors.Is(err, boom) {
		t.Fatalf("WriteFileAtomicFS = %v, want the injected error", err)
	}
	want := "create /f.tmp|write /f.tmp|sync /f.tmp|close /f.tmp|remove /f.tmp"
	if got := strings.Join(trace, "|"); got != want {
		t.Fatalf("trace %s\nwant  %s", got, want)
	}
	if _, err := fsys.Stat("/f.tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp file left behind: %v", err)
	}
	for op := OpOpen; op <= OpSyncDir; op++ {
		if op.String() == "op?" || op.IsSync() != (op == OpSync || op == OpDatasync || op == OpSyncDir) {
			t.Fatalf("op %d: %q", int(op), op)
		}
	}
}

// MkdirAllSynced makes every directory it creates durable, the parents of
// the deepest too.
func TestMkdirAllSyncedSurvivesACrash(t *testing.T) {
	m := NewMem()
	if err := MkdirAllSynced(m, "/a/b/c"); err != nil {
		t.Fatal(err)
	}
	c := m.Crash()
	wantNames(t, c, "/", "a")
	wantNames(t, c, "/a", "b")
	wantNames(t, c, "/a/b", "c")
}

// The helpers return the fault of any step, and the faulty FS names each
// operation: opening without O_CREATE is an open, not a create.
func TestHelpersReturnInjectedFaults(t *testing.T) {
	boom := errors.New("boom")
	failing := func(fail Op) (FS, *[]string) {
		var trace []string
		m := NewMem()
		if err := m.MkdirAll("/d/x", 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, m, "/d/f", "f")
		return NewFaulty(m, func(op Op, path string) error {
			trace = append(trace, op.String()+" "+path)
			if op == fail {
				return boom
			}
			return nil
		}), &trace
	}
	fsys, _ := failing(OpSyncDir)
	if err := MkdirAllSynced(fsys, "/d/n/m"); !errors.Is(err, boom) {
		t.Errorf("MkdirAllSynced with a failing SyncDir: %v", err)
	}
	fsys, _ = failing(OpRename)
	if err := RemoveDirFS(fsys, "/d/x"); !errors.Is(err, boom) {
		t.Errorf("RemoveDirFS with a failing rename: %v", err)
	}
	fsys, trace := failing(OpDatasync)
	f, err := fsys.OpenFile("/d/f", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); !errors.Is(err, boom) {
		t.Errorf("Datasync with a fault: %v", err)
	}
	mustClose(t, f)
	if got, want := strings.Join(*trace, "|"), "open /d/f|datasync /d/f|close /d/f"; got != want {
		t.Errorf("trace %s, want %s", got, want)
	}
	for _, op := range []Op{0, OpSyncDir + 1} {
		if op.String() != "op?" {
			t.Errorf("Op(%d) = %q, want op?", int(op), op)
		}
	}
}

func TestOrDefaultsToTheOS(t *testing.T) {
	m := NewMem()
	if Or(nil) != Default || Or(m) != m {
		t.Fatal("Or does not default a nil FS to the OS and keep another")
	}
}
