package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// impl is one Store implementation under the contract. setup runs once
// per implementation (it may start a server) and returns a factory of
// empty stores, one per behaviour.
type impl struct {
	name  string
	setup func(t *testing.T) func(t *testing.T) Store
}

var impls = []impl{
	{"Dir", func(*testing.T) func(*testing.T) Store {
		return func(t *testing.T) Store {
			s, err := NewDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}},
	{"Mem", func(*testing.T) func(*testing.T) Store {
		return func(*testing.T) Store { return NewMem() }
	}},
	{"FaultyMem", func(*testing.T) func(*testing.T) Store {
		return func(*testing.T) Store {
			return NewFaulty(NewMem(), func(Op, string) error { return nil })
		}
	}},
	{"S3", func(t *testing.T) func(*testing.T) Store {
		gw := startVersityGW(t)
		return func(t *testing.T) Store { return gw.newStore(t, gw.newBucket(t), "") }
	}},
	{"S3Prefixed", func(t *testing.T) func(*testing.T) Store {
		gw := startVersityGW(t)
		bucket := gw.newBucket(t)
		var n int
		return func(t *testing.T) Store {
			n++ // the factory runs on the parent test's goroutine
			p := fmt.Sprintf("tenant%d", n)
			// Objects just outside the prefix, which no behaviour may see.
			root := gw.newStore(t, bucket, "")
			put(t, root, p+"x/a", []byte("noise"))
			put(t, root, p+"-a", []byte("noise"))
			return gw.newStore(t, bucket, p)
		}
	}},
}

// contractCase is one behaviour that every Store must have.
type contractCase struct {
	name string
	run  func(t *testing.T, s Store)
}

// TestContract runs every behaviour of contractCases against every
// implementation, including S3 against a real S3-compatible server.
func TestContract(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			newStore := im.setup(t)
			for _, c := range contractCases {
				s := newStore(t)
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, s)
				})
			}
		})
	}
}

// The helpers below fail the test on an unexpected error; they take a
// context with a bound, so that a stuck server fails instead of hanging.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func put(t *testing.T, s Store, key string, data []byte) {
	t.Helper()
	if err := s.Put(testCtx(t), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", key, len(data), err)
	}
}

func get(t *testing.T, s Store, key string) []byte {
	t.Helper()
	rc, size, err := s.Get(testCtx(t), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q) reading: %v", key, err)
	}
	if int64(len(data)) != size {
		t.Fatalf("Get(%q): size %d, read %d bytes", key, size, len(data))
	}
	return data
}

func getRange(t *testing.T, s Store, key string, off, n int64) ([]byte, error) {
	t.Helper()
	rc, err := s.GetRange(testCtx(t), key, off, n)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("GetRange(%q, %d, %d) reading: %v", key, off, n, err)
	}
	return data, nil
}

func list(t *testing.T, s Store, prefix string) []ObjectInfo {
	t.Helper()
	var out []ObjectInfo
	if err := s.List(testCtx(t), prefix, func(oi ObjectInfo) error {
		out = append(out, oi)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return out
}

func listKeys(t *testing.T, s Store, prefix string) []string {
	t.Helper()
	var keys []string
	for _, oi := range list(t, s, prefix) {
		keys = append(keys, oi.Key)
	}
	return keys
}

func wantKeys(t *testing.T, s Store, prefix string, want ...string) {
	t.Helper()
	if got := listKeys(t, s, prefix); !slices.Equal(got, want) {
		t.Fatalf("List(%q) = %q, want %q", prefix, got, want)
	}
}

func wantNotFound(t *testing.T, s Store, key string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := s.Head(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Head(%q) = %v, want ErrNotFound", key, err)
	}
	if _, _, err := s.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(%q) = %v, want ErrNotFound", key, err)
	}
	if _, err := s.GetRange(ctx, key, 0, 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetRange(%q) = %v, want ErrNotFound", key, err)
	}
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
