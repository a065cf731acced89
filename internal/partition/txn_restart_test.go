package partition

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
)

// txnView is what a restart must restore of a partition's transactions.
type txnView struct {
	LogEnd, HighWatermark, LastStable base.Offset
	Open                              []producers.OpenTxn
	Aborted                           []AbortedTxn
}

func viewTxns(p *Partition) txnView {
	off := p.Offsets()
	return txnView{off.LogEnd, off.HighWatermark, off.LastStable, p.OpenTxns(), p.AbortedTxns(0, off.LogEnd+1)}
}

func requireView(t *testing.T, what string, got, want txnView) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// txnScenario writes, over many small segments, transactions of two
// producers that commit and abort, plain batches, a third producer's
// transaction and a coordinator's that stay open. The last abort is after
// the newest producer snapshot, in dir.
func txnScenario(t *testing.T, dir string, p *Partition) {
	t.Helper()
	seq := map[int64]int32{}
	send := func(pid int64, transactional bool) {
		mustAppend(t, p, batch(t, spec{pid: pid, seq: seq[pid], valueBytes: 150, transactional: transactional}), AcksLeader)
		seq[pid]++
	}
	for round := range 8 {
		send(1, true)
		send(2, true)
		mustAppend(t, p, batch(t, spec{valueBytes: 150}), AcksLeader)
		send(1, true)
		mustMarker(t, p, 1, 0, round%2 == 0, 0)
		mustMarker(t, p, 2, 0, round%3 == 0, 0)
	}
	send(3, true)
	if _, _, err := p.AppendFromCoordinator(batch(t, spec{pid: 9, noSeq: true, transactional: true, valueBytes: 150})); err != nil {
		t.Fatal(err)
	}
	send(4, false)
	for {
		mustAppend(t, p, batch(t, spec{pid: 5, seq: seq[5], valueBytes: 1, transactional: true}), AcksLeader)
		seq[5]++
		m := mustMarker(t, p, 5, 0, false, 0)
		if snaps := snapshotFiles(t, dir); len(snaps) > 0 && snaps[len(snaps)-1] < m {
			break
		}
	}
}

func TestTransactionsSurviveRestart(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	txnScenario(t, e.dir, p)
	want := viewTxns(p)
	if len(want.Open) != 2 || len(want.Aborted) < 5 || want.LastStable >= want.HighWatermark {
		t.Fatalf("scenario too weak: %+v", want)
	}
	crashed := openAt(t, e.crashCopy(t))
	requireView(t, "after a crash", viewTxns(crashed), want)
	// The crash replayed from a roll snapshot: aborts below it came from
	// the index file, the ones after it from the log.
	snaps := snapshotFiles(t, e.dir)
	newest := snaps[len(snaps)-1]
	if want.Aborted[0].LastOffset >= newest || want.Aborted[len(want.Aborted)-1].LastOffset < newest {
		t.Fatalf("aborts %v do not straddle the newest snapshot %d", want.Aborted, newest)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	requireView(t, "after a clean restart", viewTxns(p), want)

	// Both go on where they stopped.
	for _, q := range []*Partition{p, crashed} {
		mustMarker(t, q, 3, 0, false, 0)
		mustMarker(t, q, 9, 0, true, 0)
		off := q.Offsets()
		if off.LastStable != off.HighWatermark {
			t.Fatalf("LastStable %d after every transaction ended, high watermark %d", off.LastStable, off.HighWatermark)
		}
		got := q.AbortedTxns(0, off.LogEnd)
		if len(got) != len(want.Aborted)+1 || got[len(got)-1].ProducerID != 3 {
			t.Fatalf("aborted after the restart: %v", got)
		}
	}
}

// Regression guard for the durability rule: a producer snapshot taken
// after an ABORT marker means a restart replays nothing before it, so the
// abort must already be in the index file.
func TestAbortBeforeSnapshotSurvivesCrash(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader)
	m := mustMarker(t, p, 1, 0, false, 0)
	for len(segmentBases(p)) < 3 {
		mustAppend(t, p, batch(t, spec{valueBytes: 200}), AcksLeader)
	}
	snaps := snapshotFiles(t, e.dir)
	if len(snaps) == 0 || snaps[len(snaps)-1] <= m {
		t.Fatalf("snapshots %v, want one past the marker at %d", snaps, m)
	}
	want := []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: m, LastStableOffset: m + 1}}
	o := e.crashCopy(t)
	file, err := readAbortedIndex(o.Dir)
	if err != nil || !slices.Equal(file.entries, want) {
		t.Fatalf("index file holds %v, %v; want %v", file.entries, err, want)
	}
	if got := openAt(t, o).AbortedTxns(0, 1000); !slices.Equal(got, want) {
		t.Fatalf("after a crash AbortedTxns = %v, want %v", got, want)
	}

	// The premise: without the file, the replay from the snapshot cannot
	// know the abort.
	o2 := e.crashCopy(t)
	if err := os.Remove(filepath.Join(o2.Dir, abortedIndexFile)); err != nil {
		t.Fatal(err)
	}
	if got := openAt(t, o2).AbortedTxns(0, 1000); len(got) != 0 {
		t.Fatalf("without the index file the abort is still known (%v): the test proves nothing", got)
	}
}

// crashWithIndex makes a crash copy whose index file is edited by edit.
func crashWithIndex(t *testing.T, e *env, edit func([]byte) []byte) Options {
	t.Helper()
	o := e.crashCopy(t)
	path := filepath.Join(o.Dir, abortedIndexFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestAbortedIndexRecovery(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	txnScenario(t, e.dir, p)
	want := viewTxns(p)
	end := want.LogEnd
	beyond := appendAbortedEntry(nil, AbortedTxn{ProducerID: 1, FirstOffset: end, LastOffset: end + 5, LastStableOffset: end + 6})
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"torn last entry", func(b []byte) []byte { return append(b, beyond[:20]...) }},
		{"entry past the log end", func(b []byte) []byte { return append(b, beyond...) }},
		{"corrupt first entry", func(b []byte) []byte { binary.BigEndian.PutUint16(b, 9); return b }},
		{"corrupt order", func(b []byte) []byte { copy(b[abortedEntryBytes:], b[:abortedEntryBytes]); return b }},
		{"empty", func([]byte) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := crashWithIndex(t, e, tc.edit)
			q := openAt(t, o)
			got := viewTxns(q)
			if tc.name == "empty" {
				// Only what the replay from the snapshot derives is left:
				// an empty file loses what it alone knew.
				if len(got.Aborted) >= len(want.Aborted) {
					t.Fatalf("an emptied index lost nothing: %v", got.Aborted)
				}
				return
			}
			requireView(t, "after recovery", got, want)
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			file, err := readAbortedIndex(o.Dir)
			if err != nil || file.torn || file.corrupt != nil || !slices.Equal(file.entries, want.Aborted) {
				t.Fatalf("index file after Close: %+v, %v; want %v", file, err, want.Aborted)
			}
		})
	}
}

func TestAbortedPrunedWhenLogStartMoves(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	var all []AbortedTxn
	for i := range 4 {
		first := mustAppend(t, p, batch(t, txn(1, int32(i), 1)), AcksLeader).BaseOffset
		m := mustMarker(t, p, 1, 0, false, 0)
		all = append(all, AbortedTxn{ProducerID: 1, FirstOffset: first, LastOffset: m, LastStableOffset: m + 1})
	}
	if err := p.flushAbortedIndex(); err != nil {
		t.Fatal(err)
	}
	fileEntries := func() []AbortedTxn {
		t.Helper()
		f, err := readAbortedIndex(e.dir)
		if err != nil {
			t.Fatal(err)
		}
		return f.entries
	}
	if got := fileEntries(); !slices.Equal(got, all) {
		t.Fatalf("file %v, want %v", got, all)
	}
	// The first marker's offset still counts: a transaction goes once it
	// is wholly below the log start.
	if _, err := p.DeleteRecords(all[0].LastOffset); err != nil {
		t.Fatal(err)
	}
	if got := p.AbortedTxns(0, 100); !slices.Equal(got, all) {
		t.Fatalf("AbortedTxns = %v, want all", got)
	}
	if _, err := p.DeleteRecords(all[0].LastOffset + 1); err != nil {
		t.Fatal(err)
	}
	if got := p.AbortedTxns(0, 100); !slices.Equal(got, all[1:]) {
		t.Fatalf("AbortedTxns = %v, want %v", got, all[1:])
	}
	if got := fileEntries(); len(got) != 4 {
		t.Fatalf("file rewritten with a quarter prunable: %v", got)
	}
	// A clean restart in between drops the pruned entry from the list.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if got := p.AbortedTxns(0, 100); !slices.Equal(got, all[1:]) {
		t.Fatalf("after a restart AbortedTxns = %v, want %v", got, all[1:])
	}
	if _, err := p.DeleteRecords(all[2].LastOffset + 1); err != nil {
		t.Fatal(err)
	}
	if got := p.AbortedTxns(0, 100); !slices.Equal(got, all[3:]) {
		t.Fatalf("AbortedTxns = %v, want %v", got, all[3:])
	}
	if got := fileEntries(); !slices.Equal(got, all[3:]) {
		t.Fatalf("file after the log start passed most entries: %v, want %v", got, all[3:])
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.open(t).AbortedTxns(0, 100); !slices.Equal(got, all[3:]) {
		t.Fatalf("after a restart AbortedTxns = %v, want %v", got, all[3:])
	}
}

// Snapshots of version 1 (before transactions) still restore.
func TestOpenReadsVersion1Snapshot(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	mustAppend(t, p, batch(t, spec{pid: 3, seq: 0}), AcksLeader)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// A version 1 file of the same state: producer 3, epoch 0, one batch.
	v1 := make([]byte, 14, 14+19+32)
	copy(v1, "SPST")
	binary.BigEndian.PutUint16(v1[4:], 1)
	binary.BigEndian.PutUint32(v1[10:], 1)
	v1 = binary.BigEndian.AppendUint64(v1, 3)
	v1 = binary.BigEndian.AppendUint16(v1, 0)
	v1 = binary.BigEndian.AppendUint64(v1, uint64(testStart.UnixMilli()))
	v1 = append(v1, 1)
	v1 = binary.BigEndian.AppendUint32(v1, 0)
	v1 = binary.BigEndian.AppendUint32(v1, 0)
	v1 = binary.BigEndian.AppendUint64(v1, 0)
	v1 = binary.BigEndian.AppendUint64(v1, 0)
	v1 = binary.BigEndian.AppendUint64(v1, uint64(testStart.UnixMilli()))
	binary.BigEndian.PutUint32(v1[6:], crcCastagnoli(v1[10:]))
	if err := os.WriteFile(filepath.Join(e.dir, snapshotName(1)), v1, 0o644); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if !mustAppend(t, p, batch(t, spec{pid: 3, seq: 0}), AcksLeader).Duplicate {
		t.Fatal("the version 1 snapshot's producer is unknown")
	}
}

func crcCastagnoli(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// Transactions of several producers, their markers, rolls (snapshots and
// index flushes), DeleteRecords (index compaction) and reads run at once;
// every abort is kept until the log start passes it, and a restart
// restores what was there.
func TestConcurrentTransactions(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	const producerCount, txns = 3, 20
	var wg sync.WaitGroup
	for i := range producerCount {
		pid := int64(i + 1)
		wg.Go(func() {
			seq := int32(0)
			for n := range txns {
				for range 2 {
					if _, _, err := p.Append(batch(t, spec{pid: pid, seq: seq, valueBytes: 100, transactional: true}), AcksLeader); err != nil {
						t.Errorf("producer %d: %v", pid, err)
						return
					}
					seq++
				}
				_, wait, err := p.AppendMarker(base.ProducerID(pid), 0, n%2 == 0, 0)
				if err == nil {
					err = wait()
				}
				if err != nil {
					t.Errorf("producer %d marker: %v", pid, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			off := p.Offsets()
			if _, err := p.DeleteRecords(off.LogStart + (off.HighWatermark-off.LogStart)/4); err != nil {
				t.Errorf("DeleteRecords: %v", err)
				return
			}
			_ = p.AbortedTxns(0, off.LogEnd)
			if _, err := p.ReadIsolated(p.Offsets().LogStart, 1<<12, nil, ReadCommitted); err != nil && !errors.Is(err, ErrOffsetOutOfRange) {
				t.Errorf("ReadIsolated: %v", err)
				return
			}
		}
	})
	wg.Wait()
	want := viewTxns(p)
	if want.LastStable != want.HighWatermark || len(want.Open) != 0 {
		t.Fatalf("transactions left open: %+v", want)
	}
	for _, a := range want.Aborted {
		if a.LastOffset < p.Offsets().LogStart {
			t.Fatalf("abort %+v below the log start %d is still listed", a, p.Offsets().LogStart)
		}
	}
	crashed := openAt(t, e.crashCopy(t))
	requireView(t, "after a crash", viewTxns(crashed), want)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	requireView(t, "after a clean restart", viewTxns(e.open(t)), want)
}

// Open leaves out the index file's entries below the log start (the file
// is compacted only once half of it is such entries), and counts only the
// entries it kept as written: an abort after the reopen still reaches the
// file before a snapshot past it, so a second restart keeps it.
func TestAbortAfterReopenWithEntriesBelowLogStartSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	abort := func(p *Partition, pid int64) base.Offset {
		t.Helper()
		mustAppend(t, p, batch(t, txn(pid, 0, 1)), AcksAll)
		return mustMarker(t, p, base.ProducerID(pid), 0, false, 0)
	}
	first := abort(p, 1) // [0, 1]
	abort(p, 2)          // [2, 3]
	abort(p, 3)          // [4, 5]
	// Close writes the three to the file.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if _, err := p.DeleteRecords(first + 1); err != nil { // one entry of three below the start: no compaction
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	last := abort(p, 4) // [6, 7]
	// Close writes a snapshot at 8, past the new abort.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	got := p.AbortedTxns(0, 100)
	if len(got) != 3 || got[len(got)-1].LastOffset != last {
		t.Fatalf("aborted after two restarts: %+v, want producers 2, 3 and 4 (its marker at %d)", got, last)
	}
}
