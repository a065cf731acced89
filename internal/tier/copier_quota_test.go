package tier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// storedBytes is the size of every object in r's store.
func (r *rig) storedBytes() int64 {
	r.t.Helper()
	var n int64
	if err := r.inner.List(r.t.Context(), "", func(oi objstore.ObjectInfo) error {
		n += oi.Size
		return nil
	}); err != nil {
		r.t.Fatal(err)
	}
	return n
}

// TestCopyQuotaPacesUploads: with a copy quota (KIP-956) the uploads of
// every partition together take about their bytes over the rate: at least
// what exceeds the one-second burst, and not much more.
func TestCopyQuotaPacesUploads(t *testing.T) {
	const perSec = 128 << 10
	l := newTestLog(t, 150, 32<<10)
	r := newRig(t, objstore.NewMem())
	r.copier.Quota = NewByteRate(perSec, clock.Real{})
	start := time.Now()
	segs := r.copyAll(l)
	elapsed := time.Since(start)
	total := r.storedBytes()
	if len(segs) < 2 || total < perSec*3/2 {
		t.Fatalf("copied %d segments, %d bytes: too little to pace", len(segs), total)
	}
	minWait := time.Duration(float64(total-perSec) / perSec * float64(time.Second))
	if elapsed < minWait*9/10 || elapsed > minWait+2*time.Second {
		t.Fatalf("%d bytes at %d B/s took %v, want about %v", total, perSec, elapsed, minWait)
	}
	t.Logf("%d segments, %d bytes at %d B/s: %v (floor %v)", len(segs), total, perSec, elapsed, minWait)
}

// TestCopyQuotaWaitEndsWithContext: a copy waiting for the quota stops
// when its context ends, and its attempt is marked DANGLING like any
// failed copy, so the next pass deletes what it uploaded.
func TestCopyQuotaWaitEndsWithContext(t *testing.T) {
	l := newTestLog(t, 60, 1<<20)
	r := newRig(t, objstore.NewMem())
	r.copier.Quota = NewByteRate(1000, clock.Real{}) // the .log alone waits for seconds
	local := LocalSegmentsOf(l.Segments())[0]
	task := CopyTask{Segment: local, Range: local.Range(), LeaderEpochs: epoch0}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.copier.Copy(ctx, task, LogSource{Log: l}, testTopicID, testTP, 0)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("Copy under a tiny quota with a 200ms deadline: %v after %v", err, time.Since(start))
	}
	segs := r.meta.view().Segments()
	if len(segs) != 1 || segs[0].State != remotemeta.Dangling {
		t.Fatalf("metadata after the abandoned copy: %+v", segs)
	}
}
