package api

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clientmetrics"
)

// TestClientInstanceConns: an instance is forgotten when the connection it
// last used closes, not when an earlier one does; connection 0 (no
// connection) is never tracked.
func TestClientInstanceConns(t *testing.T) {
	c := newClientInstanceConns()
	var mu sync.Mutex
	var forgotten []clientmetrics.InstanceID
	forget := func(id clientmetrics.InstanceID) {
		mu.Lock()
		defer mu.Unlock()
		forgotten = append(forgotten, id)
	}
	got := func() []clientmetrics.InstanceID {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(forgotten)
	}
	connA, closeA := context.WithCancel(t.Context())
	connB, closeB := context.WithCancel(t.Context())
	defer closeB()
	one, two := clientmetrics.InstanceID{1}, clientmetrics.InstanceID{2}

	c.use(connA, 1, one, forget)
	c.use(connA, 1, one, forget) // again: one watch is enough
	c.use(connA, 1, two, forget)
	c.use(connB, 2, two, forget) // two moves to connection 2
	c.use(connB, 0, one, forget) // no connection: ignored
	closeA()
	waitUntil(t, "connection 1's instance forgotten", func() bool { return len(got()) >= 1 })
	time.Sleep(50 * time.Millisecond) // a wrong second forget would show by now
	if f := got(); !slices.Equal(f, []clientmetrics.InstanceID{one}) {
		t.Fatalf("after connection 1 closed: forgotten %v, want only instance 1", f)
	}
	closeB()
	waitUntil(t, "connection 2's instance forgotten", func() bool { return len(got()) == 2 })
	if f := got(); f[1] != two {
		t.Fatalf("after connection 2 closed: forgotten %v", f)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
