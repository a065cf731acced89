package log

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/vfs"
)

func TestZeroRunway(t *testing.T) {
	const seg = 1 << 30
	for _, c := range []struct {
		size, segmentBytes, want int64
	}{
		{0, seg, zeroFillMinAheadBytes},     // a new segment: the minimum
		{1 << 20, seg, 1 << 20},             // as far as it holds data
		{64 << 20, seg, zeroFillAheadBytes}, // at most the maximum
		{seg - 100, seg, 100},               // never past segment.bytes
		{seg, seg, 0},                       // full
		{seg + 10, seg, 0},                  // one oversized batch
		{10, 700, 690},                      // small segments
		{1 << 20, 1<<20 + zeroFillMinAheadBytes/2, zeroFillMinAheadBytes / 2}, // clamped
	} {
		s := &segment{sizeBytes: c.size}
		if got := s.zeroRunway(c.segmentBytes); got != c.want {
			t.Errorf("size %d segment.bytes %d: run-way %d, want %d", c.size, c.segmentBytes, got, c.want)
		}
	}
}

// TestWantsZeroFill: the active segment asks for zeros when less than half
// its run-way past the data is zeroed (the data may have run past the
// zeros), and never once zero-filling failed for it.
func TestWantsZeroFill(t *testing.T) {
	const seg = 1 << 30
	runway := int64(zeroFillMinAheadBytes) // the run-way of a new segment
	for _, c := range []struct {
		size, zeroedEnd int64
		off             bool
		want            bool
	}{
		{0, 0, false, true},                 // nothing zeroed
		{0, runway/2 - 1, false, true},      // short of half
		{0, runway / 2, false, false},       // exactly half left
		{0, runway, false, false},           // all of it
		{100, runway/2 + 99, false, true},   // short of half past the data
		{100, runway/2 + 100, false, false}, // half past the data
		{runway, runway / 2, false, true},   // the data ran past the zeros
		{0, 0, true, false},                 // zero-filling failed here
		{seg, seg, false, false},            // a full segment has no run-way
	} {
		s := &segment{sizeBytes: c.size, zeroedEnd: c.zeroedEnd, zeroFillOff: c.off}
		if got := s.wantsZeroFill(seg); got != c.want {
			t.Errorf("size %d zeroed to %d off %v: wants zeros %v, want %v", c.size, c.zeroedEnd, c.off, got, c.want)
		}
	}
}

// fileSize is the size of path on fsys.
func fileSize(t *testing.T, fsys vfs.FS, path string) int64 {
	t.Helper()
	fi, err := fsys.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestAppendsGoIntoTheZeros: the filler makes the file longer than its data
// with zeros, appends overwrite them without growing the file, and reads
// see only the data.
func TestAppendsGoIntoTheZeros(t *testing.T) {
	o := crashOptions(vfs.NewMem())
	l := mustOpen(t, o)
	defer l.Close()
	first := appendN(t, l, 1, 1, 20, 0)
	if err := l.fillZeros(); err != nil {
		t.Fatal(err)
	}
	path := segFile(o, 0, logSuffix)
	if got := fileSize(t, o.FS, path); got != o.SegmentBytes {
		t.Fatalf(".log is %d bytes after a fill, want %d (zeros to segment.bytes)", got, o.SegmentBytes)
	}
	more := appendN(t, l, 3, 1, 20, 1)
	if got := fileSize(t, o.FS, path); got != o.SegmentBytes {
		t.Fatalf(".log grew to %d bytes with appends into the zeros", got)
	}
	if got, want := readAll(t, l), concat(append(first, more...)); !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d appended", len(got), len(want))
	}
}

// TestRollAndCloseCutTheZerosDurably: what is durable after a roll and the
// next sync (which moves the recovery point past the sealed segment), and
// after Close, is the data alone, without the zeros.
func TestRollAndCloseCutTheZerosDurably(t *testing.T) {
	mem := vfs.NewMem()
	o := crashOptions(mem)
	o.SegmentBytes = 1 << 20
	l := mustOpen(t, o)
	appendN(t, l, 3, 1, 50, 0)
	if err := l.fillZeros(); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	sealedSize := l.Segments()[0].SizeBytes
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 2, 1, 50, 3)
	if err := l.fillZeros(); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if rp, ok, err := readRecoveryPoint(mem.Crash(), o.Dir); err != nil || !ok || rp != 3 {
		t.Fatalf("durable recovery point %d (%v, %v), want 3: past the sealed segment", rp, ok, err)
	}
	if got := fileSize(t, mem.Crash(), segFile(o, 0, logSuffix)); got != sealedSize {
		t.Fatalf("durable sealed .log is %d bytes, want its %d bytes of data", got, sealedSize)
	}
	activeSize := l.Segments()[1].SizeBytes
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, mem.Crash(), segFile(o, 3, logSuffix)); got != activeSize {
		t.Fatalf("durable .log after Close is %d bytes, want its %d bytes of data", got, activeSize)
	}
}

// TestRecoveryTakesAZeroTailForTheEnd: a sealed segment whose cut was lost
// (zeros after its data) is cut again on open, and the segments after it
// stay; a tail of anything else is damage, and they go, as before.
func TestRecoveryTakesAZeroTailForTheEnd(t *testing.T) {
	for _, c := range []struct {
		name      string
		tail      []byte
		keepsNext bool
	}{
		{"zeros", make([]byte, 3000), true},
		{"garbage", append(make([]byte, 100), 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			l := mustOpen(t, o)
			first := appendN(t, l, 3, 2, 30, 0)
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			second := appendN(t, l, 2, 2, 30, 10)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(segFile(o, 0, logSuffix), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(c.tail); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()

			l = mustOpen(t, o)
			defer l.Close()
			want := concat(first)
			if c.keepsNext {
				want = append(want, concat(second)...)
			}
			if got := readAll(t, l); !bytes.Equal(got, want) {
				t.Fatalf("after open: %d bytes, want %d (segments after kept: %v)", len(got), len(want), c.keepsNext)
			}
			if got := fileSize(t, vfs.Default, segFile(o, 0, logSuffix)); got != int64(len(concat(first))) {
				t.Fatalf("the first .log is %d bytes after open, want its data, %d", got, len(concat(first)))
			}
		})
	}
}

// TestZeroFillUnderLoad runs the filler goroutine on real files while a
// producer appends and a follower syncs, with segments small enough to roll
// under it; everything appended reads back after a clean reopen, and every
// sealed .log holds exactly its data.
func TestZeroFillUnderLoad(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 3 << 20
	o.ZeroFill = true
	l := mustOpen(t, o)
	var (
		appended [][]byte
		wg       sync.WaitGroup
		stop     = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := l.Sync(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	clk := o.Clock.(*clock.Manual)
	for i := 0; i < 600; i++ {
		appended = append(appended, appendN(t, l, 1, 4, 4000, int64(i))...)
		clk.Advance(10 * time.Millisecond) // ~1.6 MB/s: slow enough to zero-fill
	}
	close(stop)
	wg.Wait()
	// The filler ran: the active .log is longer than its data (polled: the
	// filler is a goroutine).
	active := l.Segments()[len(l.Segments())-1]
	deadline := time.Now().Add(5 * time.Second)
	for fileSize(t, vfs.Default, segFile(o, active.BaseOffset, logSuffix)) <= active.SizeBytes {
		if time.Now().After(deadline) {
			t.Fatal("the active .log never grew past its data: the filler did not run")
		}
		time.Sleep(time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	segs := l.Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments; the load was meant to roll several", len(segs))
	}
	for _, s := range segs {
		if got := fileSize(t, vfs.Default, segFile(o, s.BaseOffset, logSuffix)); got != s.SizeBytes {
			t.Fatalf("segment %d: .log is %d bytes, its data %d", s.BaseOffset, got, s.SizeBytes)
		}
	}
	if got, want := readAll(t, l), concat(appended); !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d appended", len(got), len(want))
	}
}

// TestZeroFillOnlyWhenAppendsAreSlow: a log appending faster than
// zeroFillMaxBytesPerSec writes no zeros; once its rate falls, it does.
func TestZeroFillOnlyWhenAppendsAreSlow(t *testing.T) {
	o := crashOptions(vfs.NewMem())
	o.SegmentBytes = 64 << 20
	l := mustOpen(t, o)
	defer l.Close()
	clk := o.Clock.(*clock.Manual)
	for range 2 { // two windows of 5 MiB a second each
		appendN(t, l, 80, 4, 16<<10, 0)
		clk.Advance(time.Second)
	}
	if err := l.fillZeros(); err != nil {
		t.Fatal(err)
	}
	path := segFile(o, 0, logSuffix)
	data := l.Segments()[0].SizeBytes
	if got := fileSize(t, o.FS, path); got != data {
		t.Fatalf(".log is %d bytes, its data %d: zeros written at more than %d B/s", got, data, zeroFillMaxBytesPerSec)
	}
	clk.Advance(10 * time.Second)
	appendN(t, l, 1, 1, 100, 0) // closes the fast window over a pause
	if err := l.fillZeros(); err != nil {
		t.Fatal(err)
	}
	if got, data := fileSize(t, o.FS, path), l.Segments()[0].SizeBytes; got <= data {
		t.Fatalf(".log is %d bytes, its data %d: no zeros once appends slowed down", got, data)
	}
}

// TestFillZerosFailures: a failed write of zeros turns zero-filling off
// for the segment and is no error (only speed is lost; appends go on), and
// the filler stops rather than retrying it; a failed fdatasync of the
// zeros fails the log, since it may have consumed an error that a data
// sync would otherwise have reported.
func TestFillZerosFailures(t *testing.T) {
	for _, failOp := range []vfs.Op{vfs.OpWrite, vfs.OpDatasync} {
		t.Run(failOp.String(), func(t *testing.T) {
			var fail atomic.Bool
			o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
				if op == failOp && filepath.Ext(path) == logSuffix && fail.Load() {
					return errors.New("injected: " + op.String() + " failed")
				}
				return nil
			}))
			l := mustOpen(t, o) // closed at the end: a filler still running would hold Close up
			appendN(t, l, 1, 1, 100, 0)
			fail.Store(true)
			done := make(chan error, 1)
			go func() { done <- l.fillZeros() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("fillZeros still running 10 s after its write failed")
			}
			fail.Store(false)
			size, data := fileSize(t, o.FS, segFile(o, 0, logSuffix)), l.Segments()[0].SizeBytes
			if failOp == vfs.OpWrite {
				l.mu.Lock()
				off := l.activeLocked().zeroFillOff
				l.mu.Unlock()
				if err != nil || !off || size != data {
					t.Fatalf("fillZeros over a failing write = %v, zero-filling off %v, .log %d bytes of data %d; want nil, off, no zeros",
						err, off, size, data)
				}
				appendN(t, l, 1, 1, 100, 0)
				if err := l.Sync(); err != nil {
					t.Fatalf("Sync after a failed zero fill: %v", err)
				}
				l.stop(t, true)
				return
			}
			if err == nil {
				t.Fatal("fillZeros over a failing fdatasync = nil, want the error")
			}
			if err := l.Append(makeBatch(l.End(), 1, 100, 0)); err == nil {
				t.Fatal("Append on a log whose zeros failed to sync succeeded, want the log failed")
			}
			l.Close()
		})
	}
}

// TestAllZero looks at every byte, across the zero chunk's length.
func TestAllZero(t *testing.T) {
	oneAt := func(n, i int) []byte {
		b := make([]byte, n)
		b[i] = 1
		return b
	}
	const c = len(zeroChunk)
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"empty", nil, true},
		{"one zero", []byte{0}, true},
		{"one byte set", []byte{1}, false},
		{"the last of two set", []byte{0, 1}, false},
		{"a chunk and one, all zero", make([]byte, c+1), true},
		{"a chunk and one, the last set", oneAt(c+1, c), false},
		{"two chunks, the first of the second set", oneAt(2*c, c), false},
	} {
		if got := allZero(tc.b); got != tc.want {
			t.Errorf("%s: allZero %v, want %v", tc.name, got, tc.want)
		}
	}
}
