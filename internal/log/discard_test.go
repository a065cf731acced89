package log

import (
	"errors"
	"sync"
	"testing"

	"github.com/strata-broker/strata/internal/vfs"
)

// Discard closes every file and makes nothing durable: no sync of data,
// indexes or the directory, no recovery point or clean-shutdown marker;
// the log then refuses work as a closed one does.
func TestDiscardSyncsNothing(t *testing.T) {
	var (
		mu        sync.Mutex
		discarded bool
		after     []string // durable or writing operations once Discard began
		closes    int
	)
	mem := vfs.NewMem()
	o := crashOptions(vfs.NewFaulty(mem, func(op vfs.Op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		if !discarded {
			return nil
		}
		switch {
		case op == vfs.OpClose:
			closes++
		case op.IsSync(), op == vfs.OpCreate, op == vfs.OpWrite, op == vfs.OpRename, op == vfs.OpTruncate:
			after = append(after, op.String()+" "+path)
		}
		return nil
	}))
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 12, 1, 50, 0) // several segments, the tail never synced
	segs := len(l.Segments())
	if segs < 2 {
		t.Fatalf("%d segments; the test wants several", segs)
	}
	mu.Lock()
	discarded = true
	mu.Unlock()
	l.Discard()
	l.Discard() // twice is harmless
	mu.Lock()
	defer mu.Unlock()
	if len(after) > 0 {
		t.Fatalf("Discard did durable or writing work: %v", after)
	}
	if closes < segs {
		t.Fatalf("Discard closed %d files for %d segments", closes, segs)
	}
	if err := l.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Discard: %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close after Discard: %v", err)
	}
}
