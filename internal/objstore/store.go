package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Store is an object store: a flat namespace of immutable byte strings
// named by keys (see ValidateKey). Every method is safe for concurrent use.
// Every error is an operational error; classify it with errors.Is against
// the Err* values of this package and with IsTransient.
type Store interface {
	// Put stores exactly size bytes read from body under key, replacing any
	// object there. It is atomic: a reader sees the whole old object or the
	// whole new one, never a part; a failed Put leaves the old object (or
	// no object) in place. If body yields fewer or more than size bytes the
	// Put fails with ErrSizeMismatch. Pass an io.ReadSeeker (a file, a
	// bytes.Reader) where you can: the S3 store sends it as is and can
	// retry it, but buffers any other body in memory, and refuses one over
	// 64 MiB (ErrInvalidArgument).
	Put(ctx context.Context, key string, body io.Reader, size int64) error

	// PutFile is Put of the whole regular file at path.
	PutFile(ctx context.Context, key, path string) error

	// Get opens the whole object and returns its size. The caller closes the
	// reader. ErrNotFound if there is no object under key.
	Get(ctx context.Context, key string) (io.ReadCloser, int64, error)

	// GetRange opens the bytes [off, off+n) of the object, or [off, size)
	// if n < 0; a range past the end is cut at the end, so the reader yields
	// min(n, size-off) bytes. off == size gives an empty reader; off > size
	// is ErrInvalidRange; off < 0 is ErrInvalidArgument. ErrNotFound if
	// there is no object under key.
	GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error)

	// Head returns the size of the object. ErrNotFound if there is none.
	Head(ctx context.Context, key string) (sizeBytes int64, err error)

	// List calls fn for every object whose key starts with prefix, in
	// lexical (byte) order of keys. An empty prefix lists everything. If fn
	// returns an error, List stops and returns that error as is. fn may
	// call other methods of the store, including Delete of the key it was
	// given; objects put or deleted while List runs may or may not be seen.
	// Stores page through large listings underneath; fn sees one stream.
	List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error

	// Delete removes the object under key. Deleting a missing key is not an
	// error (as in S3), so a retried delete is idempotent.
	Delete(ctx context.Context, key string) error

	// Close releases what the store holds (idle connections). The store
	// must not be used afterwards.
	Close() error
}

// ObjectInfo describes one object in a List.
type ObjectInfo struct {
	Key          string
	Size         int64
	LastModified time.Time
}

// DeletePrefix deletes every object whose key starts with prefix and
// returns how many it deleted. prefix must be non-empty: deleting a whole
// store is never what a caller means by an empty string. It stops at the
// first error; calling it again resumes the work (Delete is idempotent).
func DeletePrefix(ctx context.Context, s Store, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("objstore: DeletePrefix with an empty prefix: %w", ErrInvalidKey)
	}
	// Collect a bounded batch, then delete it, so that no store is asked to
	// keep a listing open across many deletes.
	const batchMax = 1000
	deleted := 0
	prevFirst := ""
	for {
		var batch []string
		err := s.List(ctx, prefix, func(oi ObjectInfo) error {
			batch = append(batch, oi.Key)
			if len(batch) == batchMax {
				return errBatchFull
			}
			return nil
		})
		if err != nil && err != errBatchFull {
			return deleted, err
		}
		if len(batch) > 0 && batch[0] == prevFirst {
			// A store that acknowledged deletes it did not do would loop here.
			return deleted, fmt.Errorf("objstore: DeletePrefix %s: %s still listed after its delete", prefix, prevFirst)
		}
		if len(batch) > 0 {
			prevFirst = batch[0]
		}
		for _, k := range batch {
			if err := s.Delete(ctx, k); err != nil {
				return deleted, err
			}
			deleted++
		}
		if len(batch) < batchMax {
			return deleted, nil
		}
	}
}

var errBatchFull = errors.New("objstore: batch full")

// putFile is PutFile for every store: the size comes from the open file,
// and the *os.File is an io.ReadSeeker, so stores that retry can.
func putFile(ctx context.Context, s Store, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("objstore: put %s from file: %w", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("objstore: put %s from file: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("objstore: put %s from file: %s is not a regular file: %w", key, path, ErrInvalidArgument)
	}
	return s.Put(ctx, key, f, fi.Size())
}

// checkRange validates GetRange's arguments against the object's size and
// returns the number of bytes the reader will yield.
func checkRange(key string, off, n, sizeBytes int64) (int64, error) {
	if off < 0 {
		return 0, fmt.Errorf("objstore: get %s: negative offset %d: %w", key, off, ErrInvalidArgument)
	}
	if off > sizeBytes {
		return 0, fmt.Errorf("objstore: get %s: offset %d past the end (size %d): %w", key, off, sizeBytes, ErrInvalidRange)
	}
	if n < 0 || n > sizeBytes-off {
		return sizeBytes - off, nil
	}
	return n, nil
}
