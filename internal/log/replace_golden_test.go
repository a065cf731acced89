package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// TestReplaceSyncOrderGolden pins, as TestSyncOrderGolden does for the rest
// of the log, the order of the operations that decide what survives a
// crash during a replacement: a Commit, a Commit that must first bring the
// recovery point up, a Commit that fails past its commit point, and the
// Open that finishes that swap. Review a diff of
// testdata/replace_sync_order.golden against the protocol in replace.go,
// then rerun with -update.
func TestReplaceSyncOrderGolden(t *testing.T) {
	var out strings.Builder
	failRename := "" // fail the rename of the file with this name, once
	o := crashOptions(nil)
	o.FS = vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		switch op {
		case vfs.OpCreate, vfs.OpTruncate, vfs.OpSync, vfs.OpDatasync, vfs.OpSyncDir,
			vfs.OpRename, vfs.OpRemove, vfs.OpRemoveAll, vfs.OpMkdirAll:
			fmt.Fprintf(&out, "  %-9s %s\n", op, relPath(o.Dir, path))
		}
		if op == vfs.OpRename && failRename != "" && filepath.Base(path) == failRename {
			failRename = ""
			fmt.Fprintf(&out, "  (injected failure)\n")
			return errors.New("injected")
		}
		return nil
	})
	step := func(name string, wantErr bool, f func() error) {
		t.Helper()
		fmt.Fprintf(&out, "%s\n", name)
		if err := f(); (err != nil) != wantErr {
			t.Fatalf("%s: %v (want an error: %v)", name, err, wantErr)
		}
	}
	var (
		l       *Log
		r       *Replacement
		batches [][]byte
	)
	open := func() (err error) { l, err = Open(o); return err }
	appendThree := func() error { batches = append(batches, appendN(t, l, 3, 1, 50, 0)...); return nil }
	begin := func(bases ...base.Offset) func() error {
		return func() (err error) { r, err = l.BeginReplacement(bases); return err }
	}
	keep := func(i ...int) func() error {
		return func() error {
			for _, k := range i {
				if err := r.Append(batches[k]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	step("Open (new log)", false, open)
	step("Append [0, 3)", false, appendThree)
	step("Roll", false, func() error { return l.Roll() })
	step("Append [3, 6)", false, appendThree)
	step("Roll", false, func() error { return l.Roll() })
	step("Append [6, 9)", false, appendThree)
	step("Sync", false, func() error { return l.Sync() })
	step("BeginReplacement(0, 3)", false, begin(0, 3))
	step("Replacement.Append 1, 4", false, keep(1, 4))
	step("Commit", false, func() error { return r.Commit() })
	step("Roll", false, func() error { return l.Roll() })
	step("BeginReplacement(6)", false, begin(6))
	step("Replacement.Append 7", false, keep(7))
	step("Commit (brings the recovery point up to 9 first)", false, func() error { return r.Commit() })
	step("Close", false, func() error { return l.Close() })
	step("Open (clean)", false, open)
	step("Append [9, 12)", false, appendThree)
	step("Roll", false, func() error { return l.Roll() })
	step("Sync", false, func() error { return l.Sync() })
	step("BeginReplacement(9)", false, begin(9))
	step("Replacement.Append 10", false, keep(10))
	failRename = "00000000000000000009.log"
	step("Commit (fails renaming the old segment: the log fails)", true, func() error { return r.Commit() })
	step("Close", true, func() error { return l.Close() })
	step("Open (finishes the swap)", false, open)
	step("Close", false, func() error { return l.Close() })

	path := filepath.Join("testdata", "replace_sync_order.golden")
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if out.String() != string(want) {
		t.Fatalf("operation order changed; rerun with -update if deliberate.\ngot:\n%s\nwant:\n%s", out.String(), want)
	}
}
