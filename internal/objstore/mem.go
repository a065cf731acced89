package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// NewMem returns an empty in-memory Store, for tests of packages that use
// a Store. It keeps the contract of every Store (it passes the contract
// tests); LastModified is the wall-clock time of the Put.
func NewMem() Store {
	m := &memStore{}
	m.mu.objects = make(map[string]memObject)
	return m
}

type memStore struct {
	mu struct {
		sync.Mutex
		objects map[string]memObject
	}
}

// memObject's data is never modified after the Put that made it, so a
// reader may hold it without the lock.
type memObject struct {
	data         []byte
	lastModified time.Time
}

func (m *memStore) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	if err := checkPut(ctx, key, size); err != nil {
		return err
	}
	data, err := readExactly(ctx, body, size)
	if err != nil {
		return fmt.Errorf("objstore: put %s: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.objects[key] = memObject{data: data, lastModified: time.Now()}
	return nil
}

func (m *memStore) PutFile(ctx context.Context, key, path string) error {
	return putFile(ctx, m, key, path)
}

func (m *memStore) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	o, err := m.lookup(ctx, "get", key)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(o.data)), int64(len(o.data)), nil
}

func (m *memStore) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	o, err := m.lookup(ctx, "get", key)
	if err != nil {
		return nil, err
	}
	n, err = checkRange(key, off, n, int64(len(o.data)))
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(o.data[off : off+n])), nil
}

func (m *memStore) Head(ctx context.Context, key string) (int64, error) {
	o, err := m.lookup(ctx, "head", key)
	if err != nil {
		return 0, err
	}
	return int64(len(o.data)), nil
}

func (m *memStore) lookup(ctx context.Context, op, key string) (memObject, error) {
	if err := checkKeyOp(ctx, key); err != nil {
		return memObject{}, err
	}
	m.mu.Lock()
	o, ok := m.mu.objects[key]
	m.mu.Unlock()
	if !ok {
		return memObject{}, fmt.Errorf("objstore: %s %s: %w", op, key, ErrNotFound)
	}
	return o, nil
}

func (m *memStore) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Snapshot, then call fn without the lock, so that fn may use the store.
	m.mu.Lock()
	var infos []ObjectInfo
	for k, o := range m.mu.objects {
		if strings.HasPrefix(k, prefix) {
			infos = append(infos, ObjectInfo{Key: k, Size: int64(len(o.data)), LastModified: o.lastModified})
		}
	}
	m.mu.Unlock()
	slices.SortFunc(infos, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	for _, oi := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(oi); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) Delete(ctx context.Context, key string) error {
	if err := checkKeyOp(ctx, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.objects, key)
	return nil
}

func (m *memStore) Close() error { return nil }

// checkKeyOp is the gateway of every single-key operation: a valid key and
// a live context.
func checkKeyOp(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	return ctx.Err()
}

// checkPut is checkKeyOp plus a non-negative size.
func checkPut(ctx context.Context, key string, size int64) error {
	if err := checkKeyOp(ctx, key); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("objstore: put %s: negative size %d: %w", key, size, ErrInvalidArgument)
	}
	return nil
}

// readExactly reads body, which must hold exactly size bytes.
func readExactly(ctx context.Context, body io.Reader, size int64) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := copyExactly(ctx, &buf, body, size); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyExactly copies size bytes of body to w and checks that body ends
// there: ErrSizeMismatch if it is shorter or longer. It stops early with
// ctx's error once ctx is done.
func copyExactly(ctx context.Context, w io.Writer, body io.Reader, size int64) (int64, error) {
	if body == nil {
		body = bytes.NewReader(nil)
	}
	r := ctxReader{ctx: ctx, r: body}
	n, err := io.Copy(w, io.LimitReader(r, size))
	if err != nil {
		return n, err
	}
	if n < size {
		return n, fmt.Errorf("body ended after %d of %d bytes: %w", n, size, ErrSizeMismatch)
	}
	var one [1]byte
	extra, err := io.ReadFull(r, one[:])
	if extra > 0 {
		return n, fmt.Errorf("body is longer than %d bytes: %w", size, ErrSizeMismatch)
	}
	if err != io.EOF {
		return n, err
	}
	return n, nil
}

// ctxReader fails reads once ctx is done, so that a long copy stops.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
