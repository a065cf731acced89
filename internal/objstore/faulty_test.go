package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// traced returns a faulty Mem whose inject consults faults[op] (if set)
// and records every call.
func traced(faults map[Op]error) (Store, *[]string, *sync.Mutex) {
	var mu sync.Mutex
	var trace []string
	s := NewFaulty(NewMem(), func(op Op, key string) error {
		mu.Lock()
		defer mu.Unlock()
		trace = append(trace, op.String()+" "+key)
		return faults[op]
	})
	return s, &trace, &mu
}

func TestFaultyTracesEveryOp(t *testing.T) {
	s, trace, _ := traced(nil)
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("file"), 0o644); err != nil {
		t.Fatal(err)
	}
	put(t, s, "a", []byte("x"))
	if err := s.PutFile(ctx, "b", path); err != nil {
		t.Fatal(err)
	}
	get(t, s, "a")
	if _, err := getRange(t, s, "a", 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	listKeys(t, s, "p/")
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	_ = s.Delete(ctx, "/invalid") // refused before inject sees it
	want := []string{"put a", "put b", "get a", "get a", "head a", "list p/", "delete a"}
	if !slices.Equal(*trace, want) {
		t.Fatalf("trace = %q, want %q", *trace, want)
	}
}

// TestFaultyFailedUpload: an injected error fails the operation and it is
// not done; the error keeps its classification.
func TestFaultyFailedUpload(t *testing.T) {
	errDown := fmt.Errorf("bucket unreachable: %w", ErrTransient)
	s, _, _ := traced(map[Op]error{OpPut: errDown, OpDelete: errDown})
	err := s.Put(testCtx(t), "seg", strings.NewReader("data"), 4)
	if !errors.Is(err, errDown) || !IsTransient(err) {
		t.Fatalf("Put = %v", err)
	}
	wantNotFound(t, s, "seg")
	if err := s.Delete(testCtx(t), "seg"); !errors.Is(err, errDown) {
		t.Fatalf("Delete = %v", err)
	}
}

// TestFaultyAfter: the operation happens and the caller sees an error —
// an upload that left an object its caller believes failed (an orphan).
func TestFaultyAfter(t *testing.T) {
	errCut := errors.New("connection reset after the request was sent")
	s, _, _ := traced(map[Op]error{OpPut: After(errCut), OpDelete: After(errCut), OpGet: After(errCut)})
	if err := s.Put(testCtx(t), "orphan", strings.NewReader("data"), 4); !errors.Is(err, errCut) {
		t.Fatalf("Put = %v", err)
	}
	wantKeys(t, s, "", "orphan")
	if _, _, err := s.Get(testCtx(t), "orphan"); !errors.Is(err, errCut) {
		t.Fatalf("Get = %v", err)
	}
	if err := s.Delete(testCtx(t), "orphan"); !errors.Is(err, errCut) {
		t.Fatalf("Delete = %v", err)
	}
	wantKeys(t, s, "")
	// The operation's own error wins over the injected one.
	if _, _, err := s.Get(testCtx(t), "orphan"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key = %v, want ErrNotFound", err)
	}
}

// TestFaultyDropped: a dropped delete reports success and leaves the
// object (a lost delete); a dropped put stores nothing; dropped reads see
// nothing.
func TestFaultyDropped(t *testing.T) {
	inner := NewMem()
	put(t, inner, "kept", []byte("v"))
	var mu sync.Mutex
	drop := map[Op]bool{}
	s := NewFaulty(inner, func(op Op, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		if drop[op] {
			return ErrDropped
		}
		return nil
	})
	setDrop := func(ops ...Op) {
		mu.Lock()
		defer mu.Unlock()
		clear(drop)
		for _, op := range ops {
			drop[op] = true
		}
	}
	ctx := testCtx(t)
	setDrop(OpDelete, OpPut)
	if err := s.Delete(ctx, "kept"); err != nil {
		t.Fatalf("dropped Delete = %v", err)
	}
	if err := s.Put(ctx, "lost", strings.NewReader("v"), 1); err != nil {
		t.Fatalf("dropped Put = %v", err)
	}
	wantKeys(t, inner, "", "kept")
	setDrop(OpGet, OpHead, OpList)
	wantNotFound(t, s, "kept")
	wantKeys(t, s, "")
}

// TestDeletePrefixStopsOnLostDeletes: when deletes are acknowledged but
// not done, DeletePrefix reports it instead of looping forever.
func TestDeletePrefixStopsOnLostDeletes(t *testing.T) {
	inner := NewMem()
	for i := range 1001 {
		put(t, inner, fmt.Sprintf("t/%04d", i), nil)
	}
	s := NewFaulty(inner, func(op Op, _ string) error {
		if op == OpDelete {
			return ErrDropped
		}
		return nil
	})
	if _, err := DeletePrefix(testCtx(t), s, "t/"); err == nil || !strings.Contains(err.Error(), "still listed") {
		t.Fatalf("DeletePrefix = %v", err)
	}
}

func TestFaultyClosesReaderOfFailedGet(t *testing.T) {
	closed := 0
	inner := &closeCounter{Store: NewMem(), closed: &closed}
	put(t, inner, "k", []byte("v"))
	s := NewFaulty(inner, func(Op, string) error { return After(errors.New("cut")) })
	_, _, _ = s.Get(testCtx(t), "k")
	_, _ = s.GetRange(testCtx(t), "k", 0, 1)
	if closed != 2 {
		t.Fatalf("%d of 2 readers closed", closed)
	}
}

type closeCounter struct {
	Store
	closed *int
}

func (c *closeCounter) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	rc, n, err := c.Store.Get(ctx, key)
	return countingCloser{rc, c.closed}, n, err
}

func (c *closeCounter) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	rc, err := c.Store.GetRange(ctx, key, off, n)
	return countingCloser{rc, c.closed}, err
}

type countingCloser struct {
	io.ReadCloser
	closed *int
}

func (c countingCloser) Close() error { *c.closed++; return c.ReadCloser.Close() }

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{OpPut: "put", OpGet: "get", OpHead: "head", OpList: "list", OpDelete: "delete", 0: "op?", 99: "op?"} {
		if op.String() != want {
			t.Errorf("Op(%d) = %q, want %q", int(op), op.String(), want)
		}
	}
}
