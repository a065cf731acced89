package objstore

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// List walks the tree under the deepest directory that the prefix names,
// visiting only the subtrees that can hold keys with the prefix.
//
// Lexical order of keys is not the order of a walk that sorts each
// directory by name: "a-c" < "a/b" because '-' < '/', yet the name "a"
// sorts before "a-c". Sorting a directory's subdirectories by name+"/"
// and its files by name gives exactly the key order (a file "x" and a
// directory "x" cannot both exist).
func (d *dirStore) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	start := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i+1]
	}
	return d.walk(ctx, start, prefix, fn)
}

// walk lists the directory of keys starting with rel ("" or ending in
// '/'), calling fn for the files whose keys start with prefix.
func (d *dirStore) walk(ctx context.Context, rel, prefix string, fn func(ObjectInfo) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(d.path(rel))
	if err != nil {
		if isNotExist(err) {
			return nil // nothing under this prefix, or deleted while we walked
		}
		return fmt.Errorf("objstore: list %s: %w", prefix, err)
	}
	type entry struct {
		sortKey string
		de      fs.DirEntry
	}
	sorted := make([]entry, 0, len(entries))
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), tempPrefix) {
			// A Put in flight, or debris of a crashed one: the debris goes
			// once old (the reconciler's listings sweep it).
			d.removeStaleTemp(filepath.Join(d.path(rel), de.Name()), de)
			continue
		}
		k := rel + de.Name()
		if de.IsDir() {
			k += "/"
		}
		sorted = append(sorted, entry{k, de})
	}
	slices.SortFunc(sorted, func(a, b entry) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, e := range sorted {
		k := e.sortKey
		if e.de.IsDir() {
			if strings.HasPrefix(k, prefix) || strings.HasPrefix(prefix, k) {
				if err := d.walk(ctx, k, prefix, fn); err != nil {
					return err
				}
			}
			continue
		}
		if !e.de.Type().IsRegular() || !strings.HasPrefix(k, prefix) {
			continue
		}
		fi, err := e.de.Info()
		if err != nil {
			if isNotExist(err) {
				continue // deleted since ReadDir
			}
			return fmt.Errorf("objstore: list %s: %w", prefix, err)
		}
		if err := fn(ObjectInfo{Key: k, Size: fi.Size(), LastModified: fi.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// tempFileGrace is how old a temporary file must be for NewDir to take it
// for one a crash left: a directory store may be shared by the brokers of
// a cluster (and opened by strata inspect tier while a broker runs), and a
// younger one may belong to a Put still running elsewhere.
const tempFileGrace = time.Hour

// removeStaleTemp removes the temporary file at p when it is older than
// tempFileGrace, best effort: a later listing tries again.
func (d *dirStore) removeStaleTemp(p string, de fs.DirEntry) {
	if fi, err := de.Info(); err == nil && fi.ModTime().Before(time.Now().Add(-tempFileGrace)) {
		_ = os.Remove(p)
	}
}

// removeTempFiles deletes the temporary files of Puts that a crash
// interrupted (those older than tempFileGrace). Their objects were never
// acknowledged. Files and directories that vanish meanwhile (removed by
// another user of the store) are skipped.
func (d *dirStore) removeTempFiles() error {
	cutoff := time.Now().Add(-tempFileGrace)
	err := filepath.WalkDir(d.root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if isNotExist(err) && p != d.root {
				return nil
			}
			return err
		}
		if de.IsDir() || !strings.HasPrefix(de.Name(), tempPrefix) {
			return nil
		}
		fi, err := de.Info()
		if isNotExist(err) || (err == nil && fi.ModTime().After(cutoff)) {
			return nil
		}
		if err == nil {
			err = os.Remove(p)
		}
		if err != nil && !isNotExist(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("objstore: directory store %s: removing temporary files of interrupted puts: %w", d.root, err)
	}
	return nil
}
