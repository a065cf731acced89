package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// producerLoop is the life of a test producer that writes from a goroutine
// of its own: halt ends its loop, cancel also fails the records still
// buffered (for a test that ends without stop), done closes when the loop
// returns.
type producerLoop struct {
	cl       *kgo.Client
	halt     chan struct{}
	haltOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
}

// start runs loop on a goroutine until it returns or the loop is halted
// (loop watches halt); the test's cleanup stops it if the test does not.
func (l *producerLoop) start(t *testing.T, cl *kgo.Client, loop func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	l.cl, l.halt, l.cancel, l.done = cl, make(chan struct{}), cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		loop(ctx)
	}()
	t.Cleanup(func() {
		l.cancel()
		l.halted()
	})
}

// halted ends the producing loop and waits for it.
func (l *producerLoop) halted() {
	l.haltOnce.Do(func() { close(l.halt) })
	<-l.done
}

// stop ends producing and waits until every record produced has its answer.
func (l *producerLoop) stop(t *testing.T) {
	t.Helper()
	l.halted()
	if err := l.cl.Flush(testContext(t, 60*time.Second)); err != nil {
		t.Fatalf("flushing the producer: %v", err)
	}
}

// finished reports whether the loop has returned (halted, or done with
// everything it had to write).
func (l *producerLoop) finished() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// failures counts a producer's failed records and keeps the first error.
type failures struct {
	n     int
	first error
}

func (f *failures) add(err error) {
	f.n++
	if f.first == nil {
		f.first = err
	}
}

func (f failures) String() string { return fmt.Sprintf("%d failed (first: %v)", f.n, f.first) }
