package partition

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// truncateByEpoch is a fetcher's KIP-101/KIP-279 truncation: it asks the
// leader where the follower's latest epoch ends and truncates there, or,
// when the leader knows only an older epoch, where that one ends in both
// logs. It returns the offset it truncated to.
func truncateByEpoch(t testing.TB, leader, follower *Partition) base.Offset {
	t.Helper()
	fe, ok := follower.LatestEpoch()
	if !ok {
		t.Fatal("the follower has no epoch")
	}
	le, lend, ok := leader.EndOffsetForEpoch(fe)
	if !ok {
		t.Fatalf("the leader does not answer for epoch %d", fe)
	}
	to := min(lend, follower.Offsets().LogEnd)
	if le != fe {
		if _, fend, ok := follower.EndOffsetForEpoch(le); ok {
			to = min(to, fend)
		}
	}
	if err := follower.TruncateTo(to); err != nil {
		t.Fatalf("TruncateTo(%d): %v", to, err)
	}
	return to
}

// fetchTo fetches one batch at a time until the follower's log ends at
// end, a batch boundary of the leader's; it takes no high watermark.
func fetchTo(t testing.TB, leader, follower *Partition, end base.Offset) {
	t.Helper()
	for follower.Offsets().LogEnd < end {
		rr, err := leader.ReadIsolated(follower.Offsets().LogEnd, 1, nil, ReadLogEnd)
		if err != nil {
			t.Fatal(err)
		}
		h, err := record.ParseHeader(rr.Records)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := follower.AppendAsFollower(rr.Records[:h.Size()]); err != nil {
			t.Fatal(err)
		}
	}
	if got := follower.Offsets().LogEnd; got != end {
		t.Fatalf("fetched to %d, want %d: not a batch boundary", got, end)
	}
}

// KIP-101: leader a fails; follower g, which had replicated only up to
// cut, becomes leader and appends; follower f, which had all of a's log,
// truncates where its log diverges from g's and then holds g's log: the
// same bytes, epochs, producer state, transactions. The cut is inside a
// segment, at a segment boundary, below producer snapshots, inside an
// older epoch, and exactly where a newer epoch began.
func TestTruncateToThenNewLeader(t *testing.T) {
	for _, tc := range []struct {
		name         string
		acrossEpochs bool
		// pick chooses the cut among the batch ends of phase A (and B).
		pick func(t *testing.T, f *replica, endsA, endsB []base.Offset) base.Offset
	}{
		{"inside a segment", false, func(t *testing.T, f *replica, endsA, _ []base.Offset) base.Offset {
			bases := segmentBases(f.p)
			for _, o := range slices.Backward(endsA) {
				if !slices.Contains(bases, o) && o > bases[1] {
					return o
				}
			}
			t.Fatal("no batch end inside a segment")
			return 0
		}},
		{"at a segment boundary", false, func(t *testing.T, f *replica, endsA, _ []base.Offset) base.Offset {
			bases := segmentBases(f.p)
			for _, o := range slices.Backward(bases[1 : len(bases)-1]) {
				if slices.Contains(endsA, o) {
					return o
				}
			}
			t.Fatalf("no segment base among the batch ends: %v", bases)
			return 0
		}},
		{"below producer snapshots", false, func(t *testing.T, f *replica, endsA, _ []base.Offset) base.Offset {
			snaps, err := listSnapshots(f.e.dir)
			if err != nil || len(snaps) < 2 {
				t.Fatalf("snapshots %v, %v; want two", snaps, err)
			}
			for _, o := range slices.Backward(endsA) {
				if o < snaps[0] {
					return o
				}
			}
			t.Fatalf("no batch end below the snapshots %v", snaps)
			return 0
		}},
		{"inside an older epoch", true, func(t *testing.T, f *replica, endsA, _ []base.Offset) base.Offset {
			return endsA[len(endsA)/2]
		}},
		{"where a newer epoch began", true, func(t *testing.T, f *replica, endsA, _ []base.Offset) base.Offset {
			return endsA[len(endsA)-1]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newLeader(t, smallSegments)
			f := newFollower(t, 1, smallSegments)
			g := newFollower(t, 1, smallSegments)
			if err := a.p.SetInSyncReplicas(3); err != nil {
				t.Fatal(err)
			}
			seq := map[int64]int32{}
			appendIdem := func(p *Partition, pid int64, records int) base.Offset {
				mustAppend(t, p, batch(t, spec{pid: pid, seq: seq[pid], records: records, valueBytes: 90}), AcksLeader)
				seq[pid] += int32(records)
				return p.Offsets().LogEnd
			}
			var endsA, endsB []base.Offset
			for i := range 12 {
				endsA = append(endsA, appendIdem(a.p, 7, 1+i%3))
				switch i {
				case 3:
					mustAppend(t, a.p, batch(t, txn(9, 0, 2)), AcksLeader)
					endsA = append(endsA, a.p.Offsets().LogEnd)
				case 6:
					// Not waited for: with followers in the ISR a marker's
					// wait holds until the high watermark passes it.
					if _, _, err := a.p.AppendMarker(9, 0, false, 1); err != nil {
						t.Fatal(err)
					}
					endsA = append(endsA, a.p.Offsets().LogEnd)
				}
			}
			if tc.acrossEpochs {
				for _, p := range []*Partition{f.p, g.p} {
					if err := p.BecomeFollower(2); err != nil {
						t.Fatal(err)
					}
				}
				if err := a.p.BecomeLeader(2); err != nil {
					t.Fatal(err)
				}
			}
			mustAppend(t, a.p, batch(t, txn(12, 0, 2)), AcksLeader)
			for range 6 {
				endsB = append(endsB, appendIdem(a.p, 7, 2))
			}
			catchUp(t, a.p, f.p)
			cut := tc.pick(t, f, endsA, endsB)
			fetchTo(t, a.p, g.p, cut)
			a.p.AdvanceHighWatermark(cut) // what both followers hold
			fetch(t, a.p, f.p, 1, -1)
			if _, err := g.p.SetHighWatermarkFromLeader(cut); err != nil {
				t.Fatal(err)
			}
			if hw := f.p.Offsets().HighWatermark; hw != cut {
				t.Fatalf("f's high watermark %d, want %d", hw, cut)
			}

			// a fails; g leads in epoch 3 and takes new writes: producer 7
			// again under a new epoch, a new producer, a transaction.
			if err := g.p.BecomeLeader(3); err != nil {
				t.Fatal(err)
			}
			if err := g.p.SetInSyncReplicas(1); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, g.p, batch(t, spec{pid: 7, epoch: 1, seq: 0, records: 2}), AcksLeader)
			last := spec{pid: 20, seq: 0, records: 3}
			lastAt := mustAppend(t, g.p, batch(t, last), AcksLeader).BaseOffset
			mustAppend(t, g.p, batch(t, txn(13, 0, 1)), AcksLeader)
			mustMarker(t, g.p, 13, 0, true, 2)
			for range 4 {
				mustAppend(t, g.p, batch(t, spec{records: 2, valueBytes: 200}), AcksLeader)
			}

			if err := f.p.BecomeFollower(3); err != nil {
				t.Fatal(err)
			}
			if to := truncateByEpoch(t, g.p, f.p); to != cut {
				t.Fatalf("truncated to %d, want %d", to, cut)
			}
			if off := f.p.Offsets(); off.LogEnd != cut || off.HighWatermark != cut {
				t.Fatalf("after truncation %+v, want everything at %d", off, cut)
			}
			snaps, err := listSnapshots(f.e.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range snaps {
				if s > cut {
					t.Fatalf("a producer snapshot at %d outlived the truncation to %d", s, cut)
				}
			}
			for _, tx := range f.p.AbortedTxns(0, cut+1000) {
				if tx.LastOffset >= cut {
					t.Fatalf("aborted transaction %+v outlived the truncation to %d", tx, cut)
				}
			}
			catchUp(t, g.p, f.p)
			sameReplicas(t, g.p, f.p, "caught up with the new leader")
			f.restart(t, 3)
			fetch(t, g.p, f.p, 1, -1)
			sameReplicas(t, g.p, f.p, "restarted")

			// g fails in turn: f leads and knows producer 20's last batch.
			if err := f.p.BecomeLeader(4); err != nil {
				t.Fatal(err)
			}
			if err := f.p.SetInSyncReplicas(1); err != nil {
				t.Fatal(err)
			}
			if res := mustAppend(t, f.p, batch(t, last), AcksLeader); !res.Duplicate || res.BaseOffset != lastAt {
				t.Fatalf("retried batch on the next leader: %+v, want a duplicate at %d", res, lastAt)
			}
		})
	}
}

// An offset inside a batch cuts before the batch: the log holds whole
// batches.
func TestTruncateToInsideBatch(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	for range 4 {
		mustAppend(t, l.p, batch(t, spec{records: 3}), AcksLeader)
	}
	catchUp(t, l.p, f.p)
	if err := f.p.TruncateTo(7); err != nil {
		t.Fatal(err)
	}
	if off := f.p.Offsets(); off.LogEnd != 6 || off.HighWatermark != 6 {
		t.Fatalf("truncated into the batch [6, 9): %+v, want the log end at 6", off)
	}
	catchUp(t, l.p, f.p)
	sameReplicas(t, l.p, f.p, "caught up again")
}

// TruncateTo at or past the log end cuts nothing but forgets epochs that
// start at the log end (Kafka's truncateFromEnd there).
func TestTruncateToLogEndDropsEmptyEpochs(t *testing.T) {
	r := newFollower(t, 1)
	b := stamped(batch(t, spec{records: 2}), 0, 1)
	if _, err := r.p.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	r.p.mu.Lock()
	r.p.mu.epochs.entries = append(r.p.mu.epochs.entries, base.EpochStart{Epoch: 2, Start: 2})
	r.p.mu.Unlock()
	if err := r.p.TruncateTo(5); err != nil {
		t.Fatal(err)
	}
	if lin := r.p.Lineage(); len(lin) != 1 || lin[0].Epoch != 1 {
		t.Fatalf("lineage %v, want epoch 1 alone", lin)
	}
	if off := r.p.Offsets(); off.LogEnd != 2 {
		t.Fatalf("log end %d, want 2", off.LogEnd)
	}
	data, err := os.ReadFile(filepath.Join(r.e.dir, epochCheckpointFile))
	if err != nil || string(data) != "0\n1\n1 0\n" {
		t.Fatalf("checkpoint %q, %v", data, err)
	}
}

// Truncating below the high watermark (an unclean election) is done, and
// the high watermark and last stable offset follow the new end.
func TestTruncateToBelowHighWatermark(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	mustAppend(t, l.p, batch(t, spec{records: 2}), AcksLeader)
	mustAppend(t, l.p, batch(t, txn(5, 0, 2)), AcksLeader)
	mustAppend(t, l.p, batch(t, spec{records: 2}), AcksLeader)
	catchUp(t, l.p, f.p)
	if off := f.p.Offsets(); off.HighWatermark != 6 || off.LastStable != 2 {
		t.Fatalf("before: %+v", off)
	}
	if err := f.p.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if off := f.p.Offsets(); off.HighWatermark != 2 || off.LastStable != 2 || off.LogEnd != 2 {
		t.Fatalf("after: %+v, want all at 2", off)
	}
	if open := f.p.OpenTxns(); len(open) != 0 {
		t.Fatalf("producer 5's transaction outlived its batch: %+v", open)
	}
}

// A truncation below the log start starts the log over there.
func TestTruncateToBelowLogStart(t *testing.T) {
	f, bases := caughtUpFollower(t, 20)
	if err := f.p.SetLogStartFromLeader(bases[2] + 2); err != nil {
		t.Fatal(err)
	}
	to := bases[2] + 1 // above the local log start, below the log start
	if err := f.p.TruncateTo(to); err != nil {
		t.Fatal(err)
	}
	off := f.p.Offsets()
	if off.LogStart != to || off.LocalStart != to || off.LogEnd != to || off.HighWatermark != to {
		t.Fatalf("offsets %+v, want an empty log at %d", off, to)
	}
}

// TruncateFullyAndStartAt empties the log and its state; a follower that
// then fetches from a leader whose log start is inside a batch starts over
// at that batch, keeping the leader's log start.
func TestTruncateFullyAndStartAt(t *testing.T) {
	l := newLeader(t, smallSegments)
	f := newFollower(t, 1, smallSegments)
	seq := int32(0)
	for i := range 20 {
		mustAppend(t, l.p, batch(t, spec{pid: 3, seq: seq, records: 3, valueBytes: 60}), AcksLeader)
		seq += 3
		if i == 5 {
			mustAppend(t, l.p, batch(t, txn(8, 0, 1)), AcksLeader)
			mustMarker(t, l.p, 8, 0, false, 0)
		}
	}
	catchUp(t, l.p, f.p)
	if err := f.p.TruncateFullyAndStartAt(200); err != nil {
		t.Fatal(err)
	}
	check := func(when string, at base.Offset) {
		t.Helper()
		off := f.p.Offsets()
		if off.LogStart != at || off.LocalStart != at || off.LogEnd != at || off.HighWatermark != at || off.LastStable != at {
			t.Fatalf("%s: offsets %+v, want all at %d", when, off, at)
		}
		if lin := f.p.Lineage(); len(lin) != 0 {
			t.Fatalf("%s: lineage %v", when, lin)
		}
		if ps := f.p.Producers(); len(ps) != 0 {
			t.Fatalf("%s: producers %+v", when, ps)
		}
		if ts := f.p.AbortedTxns(0, 1000); len(ts) != 0 {
			t.Fatalf("%s: aborted transactions %+v", when, ts)
		}
		if snaps, err := listSnapshots(f.e.dir); err != nil || len(snaps) > 1 || (len(snaps) == 1 && snaps[0] != at) {
			t.Fatalf("%s: snapshots %v, %v", when, snaps, err)
		}
	}
	check("after", 200)
	f.restart(t, 1)
	check("reopened", 200)

	// The leader's log start moves inside a batch ([15, 18)); the
	// follower, out of range, starts over there.
	if _, err := l.p.DeleteRecords(16); err != nil {
		t.Fatal(err)
	}
	if err := f.p.TruncateFullyAndStartAt(16); err != nil {
		t.Fatal(err)
	}
	catchUp(t, l.p, f.p)
	off := f.p.Offsets()
	if off.LogStart != 16 || off.LocalStart != 15 || off.LogEnd != l.p.Offsets().LogEnd {
		t.Fatalf("offsets %+v, want log start 16 inside the first batch at 15", off)
	}
	sameReplicas(t, l.p, f.p, "started over inside a batch")
	if _, err := f.p.Read(15, 1<<20, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read below the log start: %v", err)
	}
	f.restart(t, 1)
	if off2 := f.p.Offsets(); off2.LogStart != 16 || off2.LocalStart != 15 || off2.LogEnd != off.LogEnd {
		t.Fatalf("reopened: %+v, want %+v", off2, off)
	}
}

// A producer snapshot taken before a truncation is not written after it.
func TestSnapshotTakenBeforeTruncationIsDropped(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	mustAppend(t, l.p, batch(t, spec{pid: 2, seq: 0, records: 1}), AcksLeader)
	mustAppend(t, l.p, batch(t, spec{pid: 2, seq: 1, records: 1}), AcksLeader)
	catchUp(t, l.p, f.p)
	f.p.mu.Lock()
	snap := f.p.producerSnapshotLocked(f.p.log.End())
	f.p.mu.Unlock()
	if err := f.p.TruncateTo(1); err != nil {
		t.Fatal(err)
	}
	if err := f.p.writeSnapshot(*snap); err != nil {
		t.Fatal(err)
	}
	if snaps, _ := listSnapshots(f.e.dir); slices.Contains(snaps, snap.At) {
		t.Fatalf("the stale snapshot at %d was written: %v", snap.At, snaps)
	}
}

// A truncation below the cleaner's first dirty offset lowers it.
func TestTruncateToClampsCleanerCheckpoint(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	for range 5 {
		mustAppend(t, l.p, batch(t, spec{records: 2}), AcksLeader)
	}
	catchUp(t, l.p, f.p)
	if err := writeCleanerCheckpoint(f.e.dir, cleanerCheckpoint{FirstDirty: 8, NextHorizonMs: 5, HasNextHorizon: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.p.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	cp, ok, err := readCleanerCheckpoint(f.e.dir)
	if err != nil || !ok || cp.FirstDirty != 4 || cp.NextHorizonMs != 5 {
		t.Fatalf("checkpoint %+v, %v, %v; want first dirty 4", cp, ok, err)
	}
	if err := f.p.TruncateFullyAndStartAt(2); err != nil {
		t.Fatal(err)
	}
	if cp, _, _ := readCleanerCheckpoint(f.e.dir); cp.FirstDirty != 2 {
		t.Fatalf("checkpoint %+v after starting over at 2", cp)
	}
}

// A truncation inside the batch that holds the log start starts the log
// over at the log start, where the next fetch gets that batch again.
func TestTruncateToInsideBatchHoldingLogStart(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	for range 6 {
		mustAppend(t, l.p, batch(t, spec{records: 4}), AcksLeader)
	}
	if _, err := l.p.DeleteRecords(9); err != nil { // inside [8, 12)
		t.Fatal(err)
	}
	if err := f.p.TruncateFullyAndStartAt(9); err != nil {
		t.Fatal(err)
	}
	catchUp(t, l.p, f.p)
	if off := f.p.Offsets(); off.LogStart != 9 || off.LocalStart != 8 {
		t.Fatalf("offsets %+v, want log start 9 in the batch at 8", off)
	}
	if err := f.p.TruncateTo(10); err != nil {
		t.Fatal(err)
	}
	if off := f.p.Offsets(); off.LogStart != 9 || off.LogEnd != 9 || off.HighWatermark != 9 {
		t.Fatalf("after TruncateTo(10): %+v, want an empty log at the log start 9", off)
	}
	catchUp(t, l.p, f.p)
	sameReplicas(t, l.p, f.p, "caught up again")
}

// A cleaning pass that a truncation overtook does not record its
// checkpoint: the batches it mapped may be gone.
func TestCleanerCheckpointNotRecordedAfterTruncation(t *testing.T) {
	f := newFollower(t, 1)
	if _, err := f.p.AppendAsFollower(stamped(batch(t, spec{records: 4}), 0, 1)); err != nil {
		t.Fatal(err)
	}
	f.p.mu.Lock()
	before := f.p.mu.truncations
	f.p.mu.Unlock()
	if err := f.p.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	var stats CleanStats
	if err := f.p.recordCleaned(cleanerCheckpoint{FirstDirty: 4}, before, &stats); err != nil || !stats.Stale {
		t.Fatalf("recordCleaned after a truncation: %v, stale %v", err, stats.Stale)
	}
	if _, ok, _ := readCleanerCheckpoint(f.e.dir); ok {
		t.Fatal("the overtaken pass wrote its checkpoint")
	}
}

// Readers racing a follower's appends, truncations and high watermark
// updates always see logStart <= lastStable <= highWatermark <= logEnd,
// and never a batch at or past the high watermark they were given.
func TestFollowerConcurrentReaders(t *testing.T) {
	l := newLeader(t, smallSegments)
	f := newFollower(t, 1, smallSegments)
	txnSeq := int32(0)
	for i := range 40 {
		mustAppend(t, l.p, batch(t, spec{pid: 2, seq: int32(2 * i), records: 2, valueBytes: 50}), AcksLeader)
		if i%7 == 3 {
			mustAppend(t, l.p, batch(t, txn(5, txnSeq, 1)), AcksLeader)
			txnSeq++
			mustMarker(t, l.p, 5, 0, i%2 == 0, 0)
		}
	}
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			off := f.p.Offsets()
			if !(off.LogStart <= off.LastStable && off.LastStable <= off.HighWatermark && off.HighWatermark <= off.LogEnd) {
				errs <- errors.New("offsets out of order")
				return
			}
			rr, err := f.p.Read(off.LogStart, 1<<16, nil)
			if err != nil {
				continue // the log moved under the read; out of range is fine
			}
			for it := record.SplitBatches(rr.Records); ; {
				_, h, ok := it.Next()
				if !ok {
					break
				}
				if h.BaseOffset >= rr.Offsets.HighWatermark {
					errs <- errors.New("a batch at or past the high watermark was served")
					return
				}
			}
		}
	}()
	for round := range 6 {
		catchUp(t, l.p, f.p)
		if err := f.p.TruncateTo(f.p.Offsets().LogEnd / base.Offset(round+2)); err != nil {
			t.Fatal(err)
		}
	}
	catchUp(t, l.p, f.p)
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	sameReplicas(t, l.p, f.p, "after the races")
}

// A truncation below the local log start, and below the log start, starts
// the log over at the offset asked for, which becomes the log start: the
// log start is never left above the log end, nor after a restart.
func TestTruncateToBelowLocalLogStart(t *testing.T) {
	f, bases := caughtUpFollower(t, 20)
	if err := f.p.SetLogStartFromLeader(bases[2]); err != nil {
		t.Fatal(err)
	}
	if off := f.p.Offsets(); off.LogStart != bases[2] || off.LocalStart != bases[2] {
		t.Fatalf("offsets %+v, want the log start and the local one at %d", off, bases[2])
	}
	to := bases[1] + 1
	if err := f.p.TruncateTo(to); err != nil {
		t.Fatal(err)
	}
	want := Offsets{LogStart: to, LocalStart: to, HighWatermark: to, LogEnd: to, LeaderEpoch: 1, LastStable: to}
	if off := f.p.Offsets(); off != want {
		t.Fatalf("offsets %+v, want %+v", off, want)
	}
	f.restart(t, 1)
	if off := f.p.Offsets(); off.LogStart != to || off.LocalStart != to || off.LogEnd != to {
		t.Fatalf("reopened: %+v, want an empty log at %d", off, to)
	}
}

// An abort that a truncation removed leaves the aborted-transaction index
// file too, even once the file held it: a restart after the new leader's
// batches were fetched over its offsets must not bring it back, or
// read_committed consumers would drop the new leader's records.
func TestTruncationRemovesAbortFromIndexFile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		truncate func(p *Partition) error
		refetch  [][]byte // what the new leader's log holds after the cut
	}{
		{"TruncateTo the marker", func(p *Partition) error { return p.TruncateTo(2) }, nil},
		{"TruncateFullyAndStartAt 0", func(p *Partition) error { return p.TruncateFullyAndStartAt(0) },
			[][]byte{stamped(batch(t, txn(5, 0, 2)), 0, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFollower(t, 1)
			abort := record.AppendEndTxnMarker(nil, 5, 0, record.EndTxnMarker{}, testStart.UnixMilli())
			for _, b := range [][]byte{
				stamped(batch(t, txn(5, 0, 2)), 0, 1), // [0, 2)
				stamped(abort, 2, 1),
				stamped(batch(t, spec{}), 3, 1),
			} {
				if _, err := f.p.AppendAsFollower(b); err != nil {
					t.Fatal(err)
				}
			}
			f.restart(t, 1) // the abort is in the index file now
			if got := f.p.AbortedTxns(0, 10); len(got) != 1 {
				t.Fatalf("aborted transactions %+v before the truncation, want the one at 2", got)
			}
			if err := tc.truncate(f.p); err != nil {
				t.Fatal(err)
			}
			// The new leader's log: the transaction's batch, then a batch
			// of epoch 2 where the abort was.
			for _, b := range append(tc.refetch, stamped(batch(t, spec{}), 2, 2)) {
				if _, err := f.p.AppendAsFollower(b); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.p.AbortedTxns(0, 10); len(got) != 0 {
				t.Fatalf("aborted transactions %+v after the truncation, want none", got)
			}
			f.restart(t, 2) // a snapshot at 3, above where the abort was
			if got := f.p.AbortedTxns(0, 10); len(got) != 0 {
				t.Fatalf("reopened: aborted transactions %+v, want none", got)
			}
			if open := f.p.OpenTxns(); len(open) != 1 || open[0].FirstOffset != 0 {
				t.Fatalf("reopened: open transactions %+v, want producer 5's from 0", open)
			}
		})
	}
}
