package log

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// TestReplacementConcurrentWithAppendsAndReads runs replacements (each
// reading its segments through Read, as the cleaner does, and dropping
// some batches) while one goroutine appends, rolls and syncs and others
// read through every read path. Run it with -race. Every read must serve a
// batch as appended, at or after the offset asked for; in the end the log
// holds exactly the batches that no replacement dropped.
func TestReplacementConcurrentWithAppendsAndReads(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 2 << 10
	o.IndexIntervalBytes = 300
	l := mustOpen(t, o)
	defer l.Close()

	var (
		mu      sync.Mutex
		orig    = map[base.Offset][]byte{} // every appended batch, by base offset
		dropped = map[base.Offset]bool{}
	)
	original := func(b base.Offset) []byte {
		mu.Lock()
		defer mu.Unlock()
		return orig[b]
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt() // before l.Close, also when the test stops early
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
	}
	wg.Add(1)
	go func() { // the partition: the only appender
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			b := makeBatch(l.End(), 1+i%3, 60, int64(1000+i%17))
			mu.Lock()
			orig[headerOf(b).BaseOffset] = b
			mu.Unlock()
			if err := l.Append(b); err != nil {
				fail("Append: %v", err)
				return
			}
			if i%7 == 0 {
				if err := l.Sync(); err != nil {
					fail("Sync: %v", err)
					return
				}
			}
		}
	}()
	checkServed := func(what string, from base.Offset, b []byte) {
		for it := record.SplitBatches(b); ; {
			batch, h, ok := it.Next()
			if !ok {
				return
			}
			if h.NextOffset() <= from {
				fail("%s(%d) served batch [%d, %d)", what, from, h.BaseOffset, h.NextOffset())
			}
			if !bytes.Equal(batch, original(h.BaseOffset)) {
				fail("%s(%d): batch at %d differs from the one appended", what, from, h.BaseOffset)
			}
			from = h.NextOffset()
		}
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() { // fetches
			defer wg.Done()
			var buf []byte
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start, end := l.Start(), l.End()
				if end == start {
					continue
				}
				from := start + base.Offset(i*7919)%(end-start)
				var err error
				if buf, err = l.Read(from, 1500, buf[:0]); err != nil {
					fail("Read(%d): %v", from, err)
					return
				}
				checkServed("Read", from, buf)
				r, err := l.ReadRegion(from, end, 1500)
				if err != nil {
					fail("ReadRegion(%d): %v", from, err)
					return
				}
				if r.File != nil {
					b := make([]byte, r.Size)
					_, err := r.File.ReadAt(b, r.Pos)
					r.Close()
					if err != nil {
						fail("reading a region: %v", err)
						return
					}
					checkServed("ReadRegion", from, b)
				}
				l.OffsetForTimestamp(1010, l.Start())
				if _, err := l.MaxTimestampFrom(from); err != nil {
					fail("MaxTimestampFrom(%d): %v", from, err)
				}
			}
		}()
	}

	for round := 0; round < 15 && !t.Failed(); round++ {
		segs := waitSealed(l, 3)
		// Compact a different run each round, merging some.
		k := round % 2
		n := 1 + round%3
		if k+n > len(segs)-1 {
			n = len(segs) - 1 - k
		}
		var bases []base.Offset
		for _, s := range segs[k : k+n] {
			bases = append(bases, s.BaseOffset)
		}
		r, err := l.BeginReplacement(bases)
		if err != nil {
			t.Fatalf("round %d: BeginReplacement(%v): %v", round, bases, err)
		}
		rg := r.Range()
		var drops []base.Offset
		for from := rg.Start; from < rg.End; {
			b, err := l.Read(from, 1000, nil)
			if err != nil {
				t.Fatal(err)
			}
			var keep []byte
			for it := record.SplitBatches(b); ; {
				batch, h, ok := it.Next()
				if !ok || h.BaseOffset >= rg.End {
					break
				}
				if (h.BaseOffset+base.Offset(round))%3 == 0 {
					drops = append(drops, h.BaseOffset)
				} else {
					keep = append(keep, batch...)
				}
				from = h.NextOffset()
			}
			if len(keep) > 0 {
				if err := r.Append(keep); err != nil {
					t.Fatalf("round %d: Replacement.Append: %v", round, err)
				}
			}
			if len(b) == 0 || headerOf(b).BaseOffset >= rg.End {
				break
			}
		}
		if err := r.Commit(); err != nil {
			t.Fatalf("round %d: Commit: %v", round, err)
		}
		mu.Lock()
		for _, d := range drops {
			dropped[d] = true
		}
		mu.Unlock()
	}
	halt()

	got := readBatches(t, l)
	var want []base.Offset
	mu.Lock()
	for b := range orig {
		if !dropped[b] {
			want = append(want, b)
		}
	}
	mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("the log holds %d batches, want the %d not dropped", len(got), len(want))
	}
	for _, b := range got {
		if h := headerOf(b); dropped[h.BaseOffset] || !bytes.Equal(b, orig[h.BaseOffset]) {
			t.Fatalf("batch at %d was dropped or differs", h.BaseOffset)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	if again := readBatches(t, l); !bytes.Equal(concat(again), concat(got)) {
		t.Fatal("the log differs after a reopen")
	}
	if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

// waitSealed waits for at least n sealed segments and returns the
// segments.
func waitSealed(l *Log, n int) []SegmentInfo {
	for {
		if segs := l.Segments(); len(segs) > n {
			return segs
		}
		runtime.Gosched()
	}
}
