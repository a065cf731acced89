package log

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// crashedLog appends 3 segments of 10 batches each ([0,10) [10,20) [20,30),
// 2 records per batch) and crashes, leaving no clean-shutdown marker.
func crashedLog(t *testing.T, sync bool) (Options, [][]byte) {
	return stoppedLog(t, sync, false)
}

// stoppedLog is crashedLog's log, closed cleanly when clean is set.
func stoppedLog(t *testing.T, sync, clean bool) (Options, [][]byte) {
	o := testOptions(t)
	o.IndexIntervalBytes = 100
	l := mustOpen(t, o)
	var batches [][]byte
	for i := 0; i < 3; i++ {
		if i > 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		batches = append(batches, appendN(t, l, 5, 2, 60, int64(i*10))...)
	}
	if sync {
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	l.stop(t, clean)
	return o, batches
}

func sizeOf(t *testing.T, p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func reopenExpect(t *testing.T, o Options, want [][]byte) *Log {
	t.Helper()
	l := mustOpen(t, o)
	t.Cleanup(func() { l.Close() })
	if got := readAll(t, l); !bytes.Equal(got, concat(want)) {
		t.Fatalf("recovered %d bytes, want %d (%d batches)", len(got), len(concat(want)), len(want))
	}
	wantEnd := base.Offset(2 * len(want))
	if l.End() != wantEnd || l.DurableEnd() != wantEnd {
		t.Fatalf("End %d DurableEnd %d, want %d", l.End(), l.DurableEnd(), wantEnd)
	}
	// The recovered log must take appends at its end.
	if err := l.Append(makeBatch(wantEnd, 1, 1, 0)); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
	return l
}

func TestRecoveryTornTail(t *testing.T) {
	o, batches := crashedLog(t, false)
	p := segFile(o, 20, ".log")
	size := sizeOf(t, p)
	// Cut the last batch in half.
	if err := os.Truncate(p, size-int64(len(batches[14]))/2); err != nil {
		t.Fatal(err)
	}
	reopenExpect(t, o, batches[:14])
	if got := sizeOf(t, p); got != size-int64(len(batches[14]))+int64(len(makeBatch(28, 1, 1, 0))) {
		t.Fatalf(".log is %d bytes after recovery, want the torn batch cut off", got)
	}
}

// TestRecoveryTornTailAfterACleanClose: a tail torn after a clean close
// (the disk, not the broker) fails the clean load's checks and is
// recovered like a crash's: cut in its records, it is not trusted up to
// the end its header claims; cut in its header, the bytes short of one are
// damage, not a failed read.
func TestRecoveryTornTailAfterACleanClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		left func(batch int) int64 // bytes of the last batch left
	}{
		{"in its records", func(n int) int64 { return int64(n) / 2 }},
		{"in its header", func(int) int64 { return record.HeaderSize / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, batches := stoppedLog(t, false, true)
			p := segFile(o, 20, ".log")
			last := len(batches[14])
			if err := os.Truncate(p, sizeOf(t, p)-int64(last)+tc.left(last)); err != nil {
				t.Fatal(err)
			}
			reopenExpect(t, o, batches[:14])
		})
	}
}

func TestRecoveryTornTailInEarlierSegmentDropsLaterSegments(t *testing.T) {
	o, batches := crashedLog(t, false)
	p := segFile(o, 10, ".log")
	if err := os.Truncate(p, sizeOf(t, p)-3); err != nil {
		t.Fatal(err)
	}
	reopenExpect(t, o, batches[:9])
	for _, suf := range []string{".log", ".index", ".timeindex"} {
		if exists(segFile(o, 20, suf)) {
			t.Errorf("segment after the cut still has %s", suf)
		}
	}
}

func TestRecoveryFlippedBitInLastBatch(t *testing.T) {
	o, batches := crashedLog(t, false)
	p := segFile(o, 20, ".log")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	pos := sizeOf(t, p) - 10 // inside the last batch's records
	var b [1]byte
	if _, err := f.ReadAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x10
	if _, err := f.WriteAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
	f.Close()
	reopenExpect(t, o, batches[:14])
}

// TestRecoveryLengthPastTheFile: a last batch whose length field claims
// more bytes than the file holds (one more, past the file by its own
// position plus one, or gigabytes) is cut like a torn one; recovery
// neither reads past the file nor fails.
func TestRecoveryLengthPastTheFile(t *testing.T) {
	for _, extra := range []string{"one", "position", "huge"} {
		o, batches := crashedLog(t, false)
		p := segFile(o, 20, ".log")
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := batches[len(batches)-1]
		pos := sizeOf(t, p) - int64(len(last))
		more := map[string]uint32{"one": 1, "position": uint32(pos) + 1, "huge": 1 << 30}[extra]
		length := binary.BigEndian.AppendUint32(nil, uint32(len(last)-record.LogOverhead)+more)
		if _, err := f.WriteAt(length, pos+8); err != nil {
			t.Fatal(err)
		}
		f.Close()
		reopenExpect(t, o, batches[:14])
	}
}

func TestRecoveryMissingIndexes(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(map[bool]string{true: "clean", false: "crashed"}[clean], func(t *testing.T) {
			o, batches := crashedLog(t, true)
			if clean {
				l := mustOpen(t, o)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			var want [][]byte
			for _, b := range []base.Offset{0, 10, 20} {
				for _, suf := range []string{".index", ".timeindex"} {
					want = append(want, mustRead(t, segFile(o, b, suf)))
					if err := os.Remove(segFile(o, b, suf)); err != nil {
						t.Fatal(err)
					}
				}
			}
			l := reopenExpect(t, o, batches)
			l.Close()
			i := 0
			for _, b := range []base.Offset{0, 10, 20} {
				for _, suf := range []string{".index", ".timeindex"} {
					if got := mustRead(t, segFile(o, b, suf)); !bytes.Equal(got, want[i]) && b != 20 {
						t.Errorf("rebuilt %d%s differs from the original", b, suf)
					}
					i++
				}
			}
		})
	}
}

func TestRecoveryCorruptIndexWithCleanMarkerIsRebuilt(t *testing.T) {
	o, batches := crashedLog(t, true)
	l := mustOpen(t, o)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn entry, and an entry pointing past the end of the .log.
	if err := os.WriteFile(segFile(o, 0, ".index"), []byte{0, 0, 0, 1, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(segFile(o, 10, ".index"), []byte{0, 0, 0, 1, 0, 1, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	reopenExpect(t, o, batches)
	if got := sizeOf(t, segFile(o, 0, ".index")); got%offsetEntrySize != 0 || got == 0 {
		t.Fatalf("rebuilt index is %d bytes", got)
	}
}

// A time index whose last entry names the offset where the segment's data
// ends (no record is there) cannot be trusted even after a clean shutdown:
// the index is rebuilt from the .log.
func TestRecoveryTimeIndexAtTheDataEndIsRebuilt(t *testing.T) {
	o, batches := crashedLog(t, true)
	l := mustOpen(t, o)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Segment 0 holds offsets [0, 10); an entry for relative offset 10.
	entry := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(headerOf(batches[4]).MaxTimestamp)), 10)
	if err := os.WriteFile(segFile(o, 0, ".timeindex"), entry, 0o644); err != nil {
		t.Fatal(err)
	}
	l = reopenExpect(t, o, batches)
	checkIndexes(t, l)
}

// An offset index whose last entry names a batch by another base offset
// than the batch's own cannot be trusted even after a clean shutdown: the
// index is rebuilt from the .log.
func TestRecoveryOffsetIndexNamingAnotherOffsetIsRebuilt(t *testing.T) {
	o, batches := crashedLog(t, true)
	l := mustOpen(t, o)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The batch at offset 4 of segment 0, named as offset 3.
	pos := uint32(len(batches[0]) + len(batches[1]))
	entry := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 3), pos)
	if err := os.WriteFile(segFile(o, 0, ".index"), entry, 0o644); err != nil {
		t.Fatal(err)
	}
	l = reopenExpect(t, o, batches)
	checkIndexes(t, l)
}

func TestOpenRemovesLeftovers(t *testing.T) {
	o, batches := crashedLog(t, false)
	for _, name := range []string{
		"00000000000000000099.log.deleted", "recovery-point.tmp", "00000000000000000000.log.cleaned",
		"00000000000000000500.index", // orphan index
	} {
		if err := os.WriteFile(filepath.Join(o.Dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := reopenExpect(t, o, batches)
	l.Close()
	for _, n := range dirNames(t, o.Dir) {
		switch filepath.Ext(n) {
		case ".log", ".index", ".timeindex":
		default:
			if n != recoveryPointName && n != cleanShutdownName {
				t.Errorf("leftover %s", n)
			}
		}
	}
	if exists(filepath.Join(o.Dir, "00000000000000000500.index")) {
		t.Error("orphan index kept")
	}
}

func TestRecoveryPointAdvancesOnSyncAfterRoll(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	appendN(t, l, 3, 1, 10, 0)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 3, 1, 10, 0)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	rp, ok, err := readRecoveryPoint(vfs.Default, o.Dir)
	if err != nil || !ok || rp != 3 {
		t.Fatalf("recovery point %d, %v, %v; want 3", rp, ok, err)
	}
	if l.DurableEnd() != 6 {
		t.Fatalf("DurableEnd %d", l.DurableEnd())
	}
	l.crash()
	// The sealed segment is below the recovery point, so recovery trusts it
	// and does not check CRCs there. Prove it with a flipped bit that a scan
	// would cut at.
	p := segFile(o, 0, ".log")
	b := mustRead(t, p)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if l.End() != 6 {
		t.Fatalf("End %d: the trusted segment was scanned", l.End())
	}
}

func TestSyncGroupCommit(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 8 << 10 // rolls race with sync rounds
	l := mustOpen(t, o)
	defer l.Close()
	var mu sync.Mutex // serializes appenders, as the partition does
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				mu.Lock()
				if err := l.Append(makeBatch(l.End(), 1, 100, 0)); err != nil {
					mu.Unlock()
					t.Error(err)
					return
				}
				end := l.End()
				mu.Unlock()
				if err := l.Sync(); err != nil {
					t.Error(err)
					return
				}
				if d := l.DurableEnd(); d < end {
					t.Errorf("Sync returned with DurableEnd %d < appended end %d", d, end)
					return
				}
				if i%10 == 0 {
					if _, err := l.Read(0, 1000, nil); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if l.DurableEnd() != 400 || len(l.Segments()) < 8 {
		t.Fatalf("DurableEnd %d, %d segments", l.DurableEnd(), len(l.Segments()))
	}
	rp, ok, err := readRecoveryPoint(vfs.Default, o.Dir)
	if segs := l.Segments(); err != nil || !ok || rp != segs[len(segs)-1].BaseOffset {
		t.Fatalf("recovery point %d, %v, %v; want the active segment's base", rp, ok, err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenMakesWhatItRecoveredDurable: after a killed process, Open finds
// batches that were never synced (the page cache kept them) and reports
// them durable (DurableEnd == End), so it must sync them, in every segment,
// with their rebuilt indexes, before it returns: a power loss right after
// loses none of them.
func TestOpenMakesWhatItRecoveredDurable(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(t)
	o.FS = mem
	l := mustOpen(t, o)
	want := appendN(t, l, 3, 2, 50, 0)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	want = append(want, appendN(t, l, 3, 2, 50, 10)...)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	want = append(want, appendN(t, l, 3, 2, 50, 20)...)
	l.crash() // nothing was synced
	l = mustOpen(t, o)
	if l.DurableEnd() != 18 {
		t.Fatalf("DurableEnd %d after recovery, want 18", l.DurableEnd())
	}
	l.crash()
	o.FS = mem.Crash() // power loss: only what was synced is left
	l = reopenExpect(t, o, want)
	checkIndexes(t, l)
}
