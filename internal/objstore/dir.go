package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// tempPrefix names the directory store's temporary files. Keys cannot
// contain a component that starts with reservedPrefix, so a temporary file
// never shadows an object.
const tempPrefix = reservedPrefix + "tmp-"

// NewDir returns a Store kept in the directory root (created if missing):
// the object under "a/b/c" is the file root/a/b/c. Puts are crash-safe:
// write a temporary file in the object's directory → fsync → rename over
// the object → fsync the directory, so after a crash an object is whole or
// absent. NewDir, and List as it walks, remove the temporary files that
// crashed Puts left behind, once older than tempFileGrace (the directory
// may be shared by several brokers, each with Puts in flight).
//
// Unlike S3, a directory cannot hold both "a" and "a/b": a Put that would
// need that fails (with an error naming the path), and so does it with
// versitygw's posix backend. Tiered-storage keys never do that.
func NewDir(root string) (Store, error) {
	if root == "" {
		return nil, fmt.Errorf("objstore: directory store: empty root path: %w", ErrInvalidArgument)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("objstore: directory store %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("objstore: directory store %s: cannot create it (check the path and its permissions): %w", abs, err)
	}
	d := &dirStore{root: abs}
	if err := d.removeTempFiles(); err != nil {
		return nil, err
	}
	return d, nil
}

type dirStore struct {
	root string
}

func (d *dirStore) path(key string) string { return filepath.Join(d.root, filepath.FromSlash(key)) }

func (d *dirStore) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	if err := checkPut(ctx, key, size); err != nil {
		return err
	}
	if err := d.put(ctx, d.path(key), body, size); err != nil {
		return fmt.Errorf("objstore: put %s: %w", key, err)
	}
	return nil
}

func (d *dirStore) put(ctx context.Context, path string, body io.Reader, size int64) error {
	dir := filepath.Dir(path)
	f, err := d.createTemp(dir)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = copyExactly(ctx, f, body, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
		if fi, serr := os.Stat(path); err != nil && serr == nil && fi.IsDir() {
			err = fmt.Errorf("%s is a directory of objects, so it cannot also be an object: %w", path, err)
		}
	}
	if err != nil {
		_ = os.Remove(tmp) // best effort; NewDir removes what is left
		return err
	}
	return syncDir(dir)
}

// createTemp creates a temporary file in dir, creating dir (durably) if
// needed. A concurrent Delete may remove dir once it is empty, between our
// mkdir and our create; then we create it again, a bounded number of times.
func (d *dirStore) createTemp(dir string) (*os.File, error) {
	const attemptsMax = 8
	var err error
	for range attemptsMax {
		err = d.mkdirAllSynced(dir)
		if err == nil {
			var f *os.File
			if f, err = os.CreateTemp(dir, tempPrefix+"*"); err == nil {
				return f, nil
			}
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, err
}

// mkdirAllSynced creates dir and its missing parents below the root, and
// fsyncs the parent of each directory it creates, so that an object made
// durable inside cannot vanish with its directory in a crash.
func (d *dirStore) mkdirAllSynced(dir string) error {
	rel, err := filepath.Rel(d.root, dir)
	if err != nil || rel == "." {
		return err
	}
	parent := d.root
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		p := filepath.Join(parent, c)
		err := os.Mkdir(p, 0o755)
		switch {
		case err == nil:
			if err := syncDir(parent); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
			if fi, serr := os.Stat(p); serr == nil && !fi.IsDir() {
				return fmt.Errorf("%s is an object, so it cannot also be a directory of objects", p)
			}
		default:
			return err
		}
		parent = p
	}
	return nil
}

func (d *dirStore) PutFile(ctx context.Context, key, path string) error {
	return putFile(ctx, d, key, path)
}

func (d *dirStore) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	f, size, err := d.open(ctx, "get", key)
	if err != nil {
		return nil, 0, err
	}
	return f, size, nil
}

func (d *dirStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	f, size, err := d.open(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	n, err = checkRange(key, off, n, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	return sectionReadCloser{io.NewSectionReader(f, off, n), f}, nil
}

type sectionReadCloser struct {
	*io.SectionReader
	io.Closer
}

// open opens the object's file; a missing file, a directory, or a path
// through a file are all "no such object".
func (d *dirStore) open(ctx context.Context, op, key string) (*os.File, int64, error) {
	if err := checkKeyOp(ctx, key); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(d.path(key))
	if err != nil {
		return nil, 0, d.opError(op, key, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		f.Close()
		return nil, 0, d.opError(op, key, err)
	}
	return f, fi.Size(), nil
}

func (d *dirStore) Head(ctx context.Context, key string) (int64, error) {
	if err := checkKeyOp(ctx, key); err != nil {
		return 0, err
	}
	fi, err := os.Stat(d.path(key))
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return 0, d.opError("head", key, err)
	}
	return fi.Size(), nil
}

func (d *dirStore) opError(op, key string, err error) error {
	if isNotExist(err) {
		return fmt.Errorf("objstore: %s %s: %w", op, key, ErrNotFound)
	}
	return fmt.Errorf("objstore: %s %s: %w", op, key, err)
}

func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// Delete unlinks the object's file and fsyncs its directory. One unlink is
// atomic, so no ".deleted" rename is needed. Then it removes the emptied
// directories up to the root, best effort: an empty directory left by a
// crash or a race is harmless (List shows files only).
func (d *dirStore) Delete(ctx context.Context, key string) error {
	if err := checkKeyOp(ctx, key); err != nil {
		return err
	}
	p := d.path(key)
	fi, err := os.Lstat(p)
	if isNotExist(err) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !isNotExist(err) {
		return fmt.Errorf("objstore: delete %s: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil && !isNotExist(err) {
		return fmt.Errorf("objstore: delete %s: %w", key, err)
	}
	for dir := filepath.Dir(p); dir != d.root; dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty (or gone): its parents are not empty either
		}
	}
	return nil
}

func (d *dirStore) Close() error { return nil }

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
