package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Op names a Store operation, for error injection.
type Op int

const (
	OpPut    Op = iota + 1 // Put and PutFile
	OpGet                  // Get and GetRange
	OpHead                 // Head
	OpList                 // List; the key given to inject is the prefix
	OpDelete               // Delete
)

var opNames = [...]string{OpPut: "put", OpGet: "get", OpHead: "head", OpList: "list", OpDelete: "delete"}

func (o Op) String() string {
	if o <= 0 || int(o) >= len(opNames) {
		return "op?"
	}
	return opNames[o]
}

// ErrDropped, returned by an inject function, makes the operation report
// success without doing anything: a lost write or a lost delete.
var ErrDropped = errors.New("objstore: operation dropped by fault injection")

// After, returned by an inject function, makes the operation happen and
// then fail with err: the outcome a client sees when its connection breaks
// after the server acted (an upload that landed but whose caller believes
// it failed leaves an orphan; a delete that looked failed was done).
func After(err error) error { return &afterError{err: err} }

type afterError struct{ err error }

func (a *afterError) Error() string { return "after the operation: " + a.err.Error() }
func (a *afterError) Unwrap() error { return a.err }

// NewFaulty wraps inner so that inject is called before every operation
// with the operation and its key (the prefix for List). If inject returns
// nil the operation runs; ErrDropped skips it and reports success (a
// dropped Get, GetRange or Head reports ErrNotFound, a dropped List sees
// nothing); After(e)
// runs it and then returns e (or the operation's own error); any other
// error is returned and the operation is not done. inject may sleep (to
// add latency), keep a trace, and is called concurrently. Keys are
// validated before inject sees them. Close is passed through, never
// injected.
func NewFaulty(inner Store, inject func(op Op, key string) error) Store {
	return &faultyStore{inner: inner, inject: inject}
}

type faultyStore struct {
	inner  Store
	inject func(op Op, key string) error
}

// do runs one operation under injection and reports whether inject
// dropped it.
func (f *faultyStore) do(op Op, key string, checkKey func(string) error, run func() error) (dropped bool, err error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	ierr := f.inject(op, key)
	var after *afterError
	switch {
	case ierr == nil:
		return false, run()
	case errors.Is(ierr, ErrDropped):
		return true, nil
	case errors.As(ierr, &after):
		if err := run(); err != nil {
			return false, err
		}
		return false, after.err
	default:
		return false, ierr
	}
}

func (f *faultyStore) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	_, err := f.do(OpPut, key, ValidateKey, func() error { return f.inner.Put(ctx, key, body, size) })
	return err
}

func (f *faultyStore) PutFile(ctx context.Context, key, path string) error {
	return putFile(ctx, f, key, path)
}

// Get and GetRange close the reader of an operation that ran but was made
// to fail (After), since the caller gets no reader to close.
func (f *faultyStore) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	var rc io.ReadCloser
	var size int64
	dropped, err := f.do(OpGet, key, ValidateKey, func() (err error) {
		rc, size, err = f.inner.Get(ctx, key)
		return err
	})
	if err == nil && dropped {
		err = droppedRead("get", key)
	}
	if err != nil {
		closeIfNotNil(rc)
		return nil, 0, err
	}
	return rc, size, nil
}

func (f *faultyStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	var rc io.ReadCloser
	dropped, err := f.do(OpGet, key, ValidateKey, func() (err error) {
		rc, err = f.inner.GetRange(ctx, key, off, n)
		return err
	})
	if err == nil && dropped {
		err = droppedRead("get", key)
	}
	if err != nil {
		closeIfNotNil(rc)
		return nil, err
	}
	return rc, nil
}

func (f *faultyStore) Head(ctx context.Context, key string) (int64, error) {
	var size int64
	dropped, err := f.do(OpHead, key, ValidateKey, func() (err error) {
		size, err = f.inner.Head(ctx, key)
		return err
	})
	if err == nil && dropped {
		return 0, droppedRead("head", key)
	}
	return size, err
}

func (f *faultyStore) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	_, err := f.do(OpList, prefix, validatePrefix, func() error { return f.inner.List(ctx, prefix, fn) })
	return err
}

func (f *faultyStore) Delete(ctx context.Context, key string) error {
	_, err := f.do(OpDelete, key, ValidateKey, func() error { return f.inner.Delete(ctx, key) })
	return err
}

func (f *faultyStore) Close() error { return f.inner.Close() }

func closeIfNotNil(rc io.ReadCloser) {
	if rc != nil {
		rc.Close()
	}
}

// droppedRead is what a dropped read returns: a lost write looks, to a
// reader, like no write at all.
func droppedRead(op, key string) error {
	return fmt.Errorf("objstore: %s %s (dropped by fault injection): %w", op, key, ErrNotFound)
}
