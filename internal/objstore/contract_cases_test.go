package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var contractCases = []contractCase{
	{"RoundTripSizes", func(t *testing.T, s Store) {
		for _, n := range []int{0, 1, 5 << 20} {
			key := fmt.Sprintf("rt/%d", n)
			want := randomBytes(n, uint64(n))
			put(t, s, key, want)
			if got := get(t, s, key); !bytes.Equal(got, want) {
				t.Fatalf("Get(%q): %d bytes differ from the %d put", key, len(got), n)
			}
			if size, err := s.Head(testCtx(t), key); err != nil || size != int64(n) {
				t.Fatalf("Head(%q) = %d, %v; want %d", key, size, err, n)
			}
		}
	}},
	{"Overwrite", func(t *testing.T, s Store) {
		put(t, s, "k", []byte("first version"))
		put(t, s, "k", []byte("second"))
		if got := get(t, s, "k"); string(got) != "second" {
			t.Fatalf("Get after overwrite = %q", got)
		}
		wantKeys(t, s, "", "k")
	}},
	{"GetRange", func(t *testing.T, s Store) {
		data := randomBytes(1000, 7)
		put(t, s, "r", data)
		for _, c := range []struct{ off, n, wantFrom, wantTo int64 }{
			{0, 10, 0, 10},         // start
			{500, 100, 500, 600},   // middle
			{990, 10, 990, 1000},   // tail
			{990, 100, 990, 1000},  // cut at the end
			{100, -1, 100, 1000},   // to the end
			{0, -1, 0, 1000},       // everything
			{1000, -1, 1000, 1000}, // empty, at the end
			{1000, 5, 1000, 1000},
			{3, 0, 3, 3},                  // empty
			{10, math.MaxInt64, 10, 1000}, // off+n overflows
		} {
			got, err := getRange(t, s, "r", c.off, c.n)
			if err != nil || !bytes.Equal(got, data[c.wantFrom:c.wantTo]) {
				t.Fatalf("GetRange(%d, %d) = %d bytes, %v; want bytes [%d, %d)", c.off, c.n, len(got), err, c.wantFrom, c.wantTo)
			}
		}
		if _, err := getRange(t, s, "r", 1001, -1); !errors.Is(err, ErrInvalidRange) {
			t.Fatalf("GetRange past the end = %v, want ErrInvalidRange", err)
		}
		if _, err := getRange(t, s, "r", -1, 5); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("GetRange at -1 = %v, want ErrInvalidArgument", err)
		}
		put(t, s, "empty", nil)
		if got, err := getRange(t, s, "empty", 0, -1); err != nil || len(got) != 0 {
			t.Fatalf("GetRange of an empty object = %q, %v", got, err)
		}
	}},
	{"MissingKey", func(t *testing.T, s Store) {
		put(t, s, "dir/present", []byte("x"))
		for _, k := range []string{"absent", "dir/absent", "dir", "dir/present/below"} {
			wantNotFound(t, s, k)
		}
		_, err := s.Head(testCtx(t), "absent")
		if IsTransient(err) {
			t.Fatalf("a missing key is transient: %v", err)
		}
	}},
	{"DeleteIsIdempotent", func(t *testing.T, s Store) {
		ctx := testCtx(t)
		if err := s.Delete(ctx, "never/was"); err != nil {
			t.Fatalf("Delete of a missing key: %v", err)
		}
		put(t, s, "d/x", []byte("1"))
		put(t, s, "d/y", []byte("2"))
		for range 2 {
			if err := s.Delete(ctx, "d/x"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		}
		wantNotFound(t, s, "d/x")
		wantKeys(t, s, "", "d/y")
		if err := s.Delete(ctx, "d"); err != nil { // a "directory", not an object
			t.Fatalf("Delete of a key prefix: %v", err)
		}
		wantKeys(t, s, "", "d/y")
	}},
	{"ListPrefixAndOrder", func(t *testing.T, s Store) {
		// '-' < '/' < '0': a per-directory walk gets "a-c" and "a/b" wrong.
		keys := []string{"a/b", "a-c", "a0", "ab/x", "a/c/d", "b", "a/c-e", "a/c/e/f"}
		for i, k := range keys {
			put(t, s, k, bytes.Repeat([]byte{'x'}, i))
		}
		all := slices.Sorted(slices.Values(keys))
		wantKeys(t, s, "", all...)
		wantKeys(t, s, "a", "a-c", "a/b", "a/c-e", "a/c/d", "a/c/e/f", "a0", "ab/x")
		wantKeys(t, s, "a/", "a/b", "a/c-e", "a/c/d", "a/c/e/f")
		wantKeys(t, s, "a/c", "a/c-e", "a/c/d", "a/c/e/f")
		wantKeys(t, s, "a/c/", "a/c/d", "a/c/e/f")
		wantKeys(t, s, "a/b", "a/b")
		wantKeys(t, s, "zz")
		wantKeys(t, s, "nothing/here/")
		for _, oi := range list(t, s, "") {
			i := slices.Index(keys, oi.Key)
			if oi.Size != int64(i) || oi.LastModified.IsZero() {
				t.Fatalf("List gave %+v; want size %d and a LastModified", oi, i)
			}
		}
	}},
	{"ListStopsOnCallbackError", func(t *testing.T, s Store) {
		for i := range 5 {
			put(t, s, fmt.Sprintf("s/%d", i), []byte{byte(i)})
		}
		errStop := errors.New("stop")
		var seen []string
		err := s.List(testCtx(t), "s/", func(oi ObjectInfo) error {
			seen = append(seen, oi.Key)
			if len(seen) == 2 {
				return errStop
			}
			return nil
		})
		if err != errStop || !slices.Equal(seen, []string{"s/0", "s/1"}) {
			t.Fatalf("List = %v after %q; want errStop after 2 keys", err, seen)
		}
	}},
	{"ListPaginatesPast1000", func(t *testing.T, s Store) {
		const n = 1100 // S3 pages hold 1000 keys
		var keys []string
		for i := range n {
			keys = append(keys, fmt.Sprintf("p/%02d/%04d", i%7, i))
		}
		putConcurrently(t, s, keys, 16)
		got := listKeys(t, s, "p/")
		if !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
			t.Fatalf("List gave %d keys (sorted: %v), want %d sorted", len(got), slices.IsSorted(got), n)
		}
		if deleted, err := DeletePrefix(testCtx(t), s, "p/00/"); err != nil || deleted != 158 {
			t.Fatalf("DeletePrefix(p/00/) = %d, %v; want 158", deleted, err)
		}
		if got := listKeys(t, s, ""); len(got) != n-158 || slices.ContainsFunc(got, func(k string) bool { return strings.HasPrefix(k, "p/00/") }) {
			t.Fatalf("after DeletePrefix: %d keys left", len(got))
		}
	}},
	{"ConcurrentPutsOfDifferentKeys", func(t *testing.T, s Store) {
		var keys []string
		for i := range 64 {
			keys = append(keys, fmt.Sprintf("c/%d/k%d", i%3, i))
		}
		putConcurrently(t, s, keys, len(keys))
		for _, k := range keys {
			if got := get(t, s, k); string(got) != k {
				t.Fatalf("Get(%q) = %q", k, got)
			}
		}
		wantKeys(t, s, "", slices.Sorted(slices.Values(keys))...)
	}},
	{"InvalidKeys", func(t *testing.T, s Store) {
		ctx := testCtx(t)
		for _, k := range invalidKeys {
			errs := []error{s.Put(ctx, k, strings.NewReader("x"), 1), s.Delete(ctx, k)}
			_, err := s.Head(ctx, k)
			errs = append(errs, err)
			_, _, err = s.Get(ctx, k)
			errs = append(errs, err)
			_, err = s.GetRange(ctx, k, 0, 1)
			errs = append(errs, err)
			for i, err := range errs {
				if !errors.Is(err, ErrInvalidKey) || IsTransient(err) {
					t.Fatalf("op %d on key %q = %v, want ErrInvalidKey", i, k, err)
				}
			}
		}
		for _, p := range []string{"/a", "a/../", "../", "a//", "x\x00"} {
			if err := s.List(ctx, p, func(ObjectInfo) error { return nil }); !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("List(%q) = %v, want ErrInvalidKey", p, err)
			}
		}
		if _, err := DeletePrefix(ctx, s, ""); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("DeletePrefix(\"\") = %v, want ErrInvalidKey", err)
		}
		wantKeys(t, s, "")
	}},
	{"PutChecksTheSize", func(t *testing.T, s Store) {
		ctx := testCtx(t)
		put(t, s, "k", []byte("old"))
		for _, c := range []struct {
			body io.Reader
			size int64
		}{
			{strings.NewReader("short"), 10},
			{strings.NewReader("too long"), 3},
			{io.LimitReader(strings.NewReader("short"), 5), 10}, // not a Seeker
			{io.LimitReader(strings.NewReader("too long"), 8), 3},
			{strings.NewReader("short"), 6}, // one byte off either way
			{strings.NewReader("too long"), 7},
			{io.LimitReader(strings.NewReader("short"), 5), 6},
			{io.LimitReader(strings.NewReader("too long"), 8), 7},
		} {
			if err := s.Put(ctx, "k", c.body, c.size); !errors.Is(err, ErrSizeMismatch) {
				t.Fatalf("Put with size %d = %v, want ErrSizeMismatch", c.size, err)
			}
		}
		if err := s.Put(ctx, "k", strings.NewReader(""), -1); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Put with size -1 = %v, want ErrInvalidArgument", err)
		}
		if got := get(t, s, "k"); string(got) != "old" {
			t.Fatalf("a failed Put changed the object to %q", got)
		}
		if err := s.Put(ctx, "stream", io.LimitReader(strings.NewReader("stream"), 6), 6); err != nil {
			t.Fatalf("Put of a non-seeking body: %v", err)
		}
		if got := get(t, s, "stream"); string(got) != "stream" {
			t.Fatalf("Get = %q", got)
		}
	}},
	{"FailedBodyPublishesNothing", func(t *testing.T, s Store) {
		errBody := errors.New("disk read failed")
		for _, c := range []struct {
			name string
			size int64
		}{
			{"Midway", 100},
			// The body failed where it should have ended, so whether it
			// held more (a size mismatch) is unknown.
			{"AtTheDeclaredEnd", int64(len("partial"))},
		} {
			body := io.MultiReader(strings.NewReader("partial"), errReader{errBody})
			if err := s.Put(testCtx(t), "f", body, c.size); !errors.Is(err, errBody) {
				t.Fatalf("%s: Put with a failing body = %v, want its error", c.name, err)
			}
			wantNotFound(t, s, "f")
		}
		wantKeys(t, s, "")
	}},
	{"CancelDuringPutPublishesNothing", func(t *testing.T, s Store) {
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		// A body that cannot seek is read while the Put runs; it cancels
		// the Put once its first bytes are read.
		body := io.MultiReader(strings.NewReader("first"), cancelReader{cancel}, strings.NewReader("rest"))
		if err := s.Put(ctx, "c", body, int64(len("firstrest"))); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put cancelled midway = %v, want context.Canceled", err)
		}
		wantNotFound(t, s, "c")
		wantKeys(t, s, "")
	}},
	{"PutReadsFromTheBodysPosition", func(t *testing.T, s Store) {
		body := strings.NewReader("header:payload")
		if _, err := body.Seek(int64(len("header:")), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(testCtx(t), "k", body, int64(len("payload"))); err != nil {
			t.Fatalf("Put of a body read past its start: %v", err)
		}
		if got := get(t, s, "k"); string(got) != "payload" {
			t.Fatalf("Get = %q, want the bytes from the body's position", got)
		}
	}},
	{"PutFile", func(t *testing.T, s Store) {
		data := randomBytes(70_000, 3)
		path := filepath.Join(t.TempDir(), "segment.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.PutFile(testCtx(t), "seg/00000000000000000000.log", path); err != nil {
			t.Fatal(err)
		}
		if got := get(t, s, "seg/00000000000000000000.log"); !bytes.Equal(got, data) {
			t.Fatal("PutFile: content differs")
		}
		err := s.PutFile(testCtx(t), "seg/x", filepath.Join(t.TempDir(), "missing"))
		if !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNotFound) {
			t.Fatalf("PutFile of a missing file = %v, want a file-system not-exist (not ErrNotFound)", err)
		}
	}},
	{"CancelledContext", func(t *testing.T, s Store) {
		put(t, s, "k", []byte("v"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, getErr := s.Get(ctx, "k")
		_, headErr := s.Head(ctx, "k")
		for i, err := range []error{
			s.Put(ctx, "new", strings.NewReader("v"), 1), getErr, headErr,
			s.List(ctx, "", func(ObjectInfo) error { return nil }),
		} {
			if !errors.Is(err, context.Canceled) || IsTransient(err) {
				t.Fatalf("op %d with a cancelled context = %v", i, err)
			}
		}
		wantKeys(t, s, "", "k")
	}},
}

// invalidKeys break one rule of ValidateKey each.
var invalidKeys = []string{
	"", "/a", "a/", "a//b", ".", "..", "a/../b", "a/./b", "../x", "a\x00b", "a\nb", "a\x7fb",
	"\xff\xfe", ".strata-tmp-123", "x/.strata-anything",
	strings.Repeat("k", keyMaxBytes+1), strings.Repeat("c", componentMaxBytes+1) + "/x",
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// cancelReader cancels its context when read, and yields nothing.
type cancelReader struct{ cancel context.CancelFunc }

func (r cancelReader) Read([]byte) (int, error) {
	r.cancel()
	return 0, io.EOF
}

// putConcurrently puts each key (its own name as content) from workers
// goroutines.
func putConcurrently(t *testing.T, s Store, keys []string, workers int) {
	t.Helper()
	ctx := testCtx(t)
	work := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range work {
				if err := s.Put(ctx, k, strings.NewReader(k), int64(len(k))); err != nil {
					select {
					case errs <- err:
					default: // one error a worker is enough
					}
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
