package partition

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// leaderWorkload appends a bit of everything to a leader: plain and
// compressed batches, an idempotent producer, a coordinator's batch, an
// aborted and a committed transaction, a leader epoch change, and a
// transaction left open. It returns the idempotent producer's last batch
// and where the leader put it.
func leaderWorkload(t testing.TB, l *Partition) (spec, base.Offset) {
	t.Helper()
	mustAppend(t, l, batch(t, spec{records: 3, valueBytes: 100}), AcksLeader)
	mustAppend(t, l, batch(t, spec{records: 4, valueBytes: 100, codec: record.CodecGzip}), AcksLeader)
	var last spec
	var lastAt base.Offset
	for i := range 6 {
		last = spec{pid: 7, seq: int32(2 * i), records: 2, valueBytes: 80}
		lastAt = mustAppend(t, l, batch(t, last), AcksLeader).BaseOffset
	}
	mustAppend(t, l, batch(t, txn(9, 0, 2)), AcksLeader)
	if _, wait, err := l.AppendFromCoordinator(batch(t, spec{pid: 9, epoch: 0, noSeq: true, transactional: true, records: 1})); err != nil || wait() != nil {
		t.Fatalf("AppendFromCoordinator: %v", err)
	}
	mustMarker(t, l, 9, 0, false, 3)
	mustAppend(t, l, batch(t, txn(9, 2, 3)), AcksLeader)
	mustMarker(t, l, 9, 0, true, 3)
	if err := l.BecomeLeader(2); err != nil {
		t.Fatal(err)
	}
	for i := 6; i < 9; i++ {
		last = spec{pid: 7, seq: int32(2 * i), records: 2, valueBytes: 80}
		lastAt = mustAppend(t, l, batch(t, last), AcksLeader).BaseOffset
	}
	mustAppend(t, l, batch(t, txn(11, 0, 2)), AcksLeader) // left open
	mustAppend(t, l, batch(t, spec{records: 2, valueBytes: 300}), AcksLeader)
	return last, lastAt
}

// A follower fed a leader's fetch responses holds the leader's log byte
// for byte, with the same epochs, producer state, transactions and last
// stable offset, across a restart and a crash; and, made leader, catches
// a retried batch as a duplicate with its original offsets.
func TestFollowerReplicatesLeader(t *testing.T) {
	l := newLeader(t, smallSegments)
	f := newFollower(t, 1, smallSegments)
	last, lastAt := leaderWorkload(t, l.p)
	if err := f.p.BecomeFollower(2); err != nil {
		t.Fatal(err)
	}
	catchUp(t, l.p, f.p)
	sameReplicas(t, l.p, f.p, "caught up")
	if lin := f.p.Lineage(); len(lin) != 2 || lin[0].Epoch != 1 || lin[1].Epoch != 2 {
		t.Fatalf("follower lineage %v, want epochs 1 and 2", lin)
	}
	if n := len(segmentBases(f.p)); n < 3 {
		t.Fatalf("the follower has %d segments; the test wants rolls", n)
	}
	if snaps, err := listSnapshots(f.e.dir); err != nil || len(snaps) == 0 {
		t.Fatalf("the follower wrote no producer snapshot at its rolls: %v, %v", snaps, err)
	}
	if open := f.p.OpenTxns(); len(open) != 1 || open[0].ProducerID != 11 {
		t.Fatalf("open transactions %+v, want producer 11's", open)
	}
	if f.p.Offsets().LastStable >= f.p.Offsets().HighWatermark {
		t.Fatalf("last stable offset %+v ignores the open transaction", f.p.Offsets())
	}

	crashed := f.e.crashCopy(t) // synced by SyncFollower, no close-time snapshot
	f.restart(t, 2)
	fetch(t, l.p, f.p, 4096, -1) // a reopened follower takes its leader's high watermark
	sameReplicas(t, l.p, f.p, "follower restarted")

	c := &replica{e: &env{dir: crashed.Dir, clock: f.e.clock, opts: crashed}, p: openAt(t, crashed)}
	if err := c.p.BecomeFollower(2); err != nil {
		t.Fatal(err)
	}
	fetch(t, l.p, c.p, 4096, -1)
	sameReplicas(t, l.p, c.p, "follower recovered from a crash")

	// The follower becomes leader: a producer retrying its last batch is
	// answered with the original offsets, not appended again.
	if err := f.p.BecomeLeader(3); err != nil {
		t.Fatal(err)
	}
	if err := f.p.SetInSyncReplicas(1); err != nil {
		t.Fatal(err)
	}
	end := f.p.Offsets().LogEnd
	res := mustAppend(t, f.p, batch(t, last), AcksAll)
	if !res.Duplicate || res.BaseOffset != lastAt || f.p.Offsets().LogEnd != end {
		t.Fatalf("retried batch: %+v, log end %d; want a duplicate at %d", res, f.p.Offsets().LogEnd, lastAt)
	}
	next := last
	next.seq += int32(next.records) + 1 // a gap in the sequence
	if _, _, err := f.p.Append(batch(t, next), AcksLeader); err == nil {
		t.Fatal("the promoted follower took a batch out of sequence")
	}
	// Producer 11's transaction is still open on the new leader.
	mustMarker(t, f.p, 11, 0, false, 4)
	if off := f.p.Offsets(); off.LastStable != off.HighWatermark {
		t.Fatalf("after the abort %+v, want the last stable offset at the high watermark", off)
	}
}

// The leader's fetch answer can also be served as a file region; its bytes
// are the same.
func TestReadRegionLogEndServesFollower(t *testing.T) {
	l := newLeader(t)
	if err := l.p.SetInSyncReplicas(2); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		mustAppend(t, l.p, batch(t, spec{records: 2}), AcksLeader)
	}
	if hw := l.p.Offsets().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d with an ISR of 2 and no follower fetch, want 0", hw)
	}
	r, off, err := l.p.ReadRegionIsolated(0, 1<<20, ReadLogEnd)
	if err != nil {
		t.Skipf("no file region here: %v", err)
	}
	defer r.Close()
	got := make([]byte, r.Size)
	if _, err := r.File.ReadAt(got, r.Pos); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, logBytes(t, l.p)) || r.Next != off.LogEnd {
		t.Fatalf("region [%d, +%d) next %d, want the whole log to %d", r.Pos, r.Size, r.Next, off.LogEnd)
	}
	if r2, _, err := l.p.ReadRegion(0, 1<<20); err != nil || r2.File != nil {
		t.Fatalf("a client's read below a high watermark of 0: %+v, %v; want nothing", r2, err)
	}
	if _, _, err := l.p.ReadRegionIsolated(off.LogEnd+1, 1<<20, ReadLogEnd); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read past the log end: %v, want ErrOffsetOutOfRange", err)
	}
}

// A follower's batches must not overlap the log or each other, but may
// skip offsets: a compacted leader's log has gaps, which the follower's
// log takes as they are.
func TestAppendAsFollowerOffsets(t *testing.T) {
	f := newFollower(t, 1)
	b0 := stamped(batch(t, spec{records: 2}), 0, 1)
	b2 := stamped(batch(t, spec{records: 3}), 2, 1)
	over := stamped(batch(t, spec{records: 2}), 1, 1)
	for _, tc := range []struct {
		name string
		in   []byte
		want AppendOffsetError
	}{
		{"out of order", slices.Concat(b2, b0), AppendOffsetError{Want: 5, Base: 0, Last: 1, Index: 1}},
		{"overlapping batches", slices.Concat(b0, over), AppendOffsetError{Want: 2, Base: 1, Last: 2, Index: 1}},
		{"a gap, then overlapping", slices.Concat(stamped(batch(t, spec{records: 1}), 6, 1), stamped(batch(t, spec{records: 1}), 6, 1)),
			AppendOffsetError{Want: 7, Base: 6, Last: 6, Index: 1}},
	} {
		_, err := f.p.AppendAsFollower(tc.in)
		var oe *AppendOffsetError
		if !errors.Is(err, ErrUnexpectedAppendOffset) || !errors.As(err, &oe) || *oe != tc.want {
			t.Fatalf("%s: %v, want %+v", tc.name, err, tc.want)
		}
		if end := f.p.Offsets().LogEnd; end != 0 {
			t.Fatalf("%s: log end %d after a refused append", tc.name, end)
		}
	}
	fa, err := f.p.AppendAsFollower(slices.Concat(b0, b2))
	if err != nil || fa.Appended != (base.Range{Start: 0, End: 5}) || fa.Batches != 2 || fa.Bytes != len(b0)+len(b2) {
		t.Fatalf("AppendAsFollower: %+v, %v", fa, err)
	}
	for _, at := range []base.Offset{3, 4, 0} { // overlapping the log, or below it
		_, err = f.p.AppendAsFollower(stamped(batch(t, spec{records: 1}), at, 1))
		var oe *AppendOffsetError
		if !errors.As(err, &oe) || oe.Want != 5 || oe.Base != at || oe.Index != 0 {
			t.Fatalf("batch at %d below the log end 5: %v", at, err)
		}
	}
	if fa, err := f.p.AppendAsFollower(nil); err != nil || !fa.Appended.Empty() || fa.Appended.Start != 5 {
		t.Fatalf("empty fetch: %+v, %v", fa, err)
	}

	// Gaps: the first batch past the log end, and between batches.
	g8 := stamped(batch(t, spec{records: 2}), 8, 1)
	g12 := stamped(batch(t, spec{records: 1}), 12, 1)
	g20 := stamped(batch(t, spec{records: 3}), 20, 1)
	if fa, err := f.p.AppendAsFollower(g8); err != nil || fa.Appended != (base.Range{Start: 5, End: 10}) || fa.Batches != 1 {
		t.Fatalf("a batch past the log end: %+v, %v", fa, err)
	}
	if fa, err := f.p.AppendAsFollower(slices.Concat(g12, g20)); err != nil || fa.Appended != (base.Range{Start: 10, End: 23}) || fa.Batches != 2 {
		t.Fatalf("batches with a gap between them: %+v, %v", fa, err)
	}
	for _, tc := range []struct {
		from base.Offset
		want []byte
	}{
		{0, slices.Concat(b0, b2, g8, g12, g20)},
		{5, slices.Concat(g8, g12, g20)}, // in a gap: the next batch
		{7, slices.Concat(g8, g12, g20)},
		{9, slices.Concat(g8, g12, g20)}, // inside a batch: that batch
		{10, slices.Concat(g12, g20)},
		{13, g20},
		{22, g20},
	} {
		rr, err := f.p.ReadIsolated(tc.from, 1<<20, nil, ReadLogEnd)
		if err != nil || !bytes.Equal(rr.Records, tc.want) {
			t.Fatalf("ReadIsolated(%d): %d bytes, %v; want %d", tc.from, len(rr.Records), err, len(tc.want))
		}
	}
	if rr, err := f.p.ReadIsolated(23, 1<<20, nil, ReadLogEnd); err != nil || len(rr.Records) != 0 {
		t.Fatalf("ReadIsolated at the log end: %d bytes, %v", len(rr.Records), err)
	}
}

// A response cut inside its last batch appends the whole batches before
// it; bytes that cannot start a batch are refused with everything else.
func TestAppendAsFollowerTornTail(t *testing.T) {
	l := newLeader(t)
	for range 3 {
		mustAppend(t, l.p, batch(t, spec{records: 2, valueBytes: 100}), AcksLeader)
	}
	all := logBytes(t, l.p)
	h, _ := record.ParseHeader(all)
	one := h.Size()
	for _, cut := range []int{2*one + 1, 2*one + 11, 2*one + record.HeaderSize, len(all) - 1, 2 * one} {
		f := newFollower(t, 1)
		fa, err := f.p.AppendAsFollower(all[:cut])
		if err != nil || fa.Batches != 2 || fa.Bytes != 2*one || fa.Appended.End != 4 {
			t.Fatalf("cut at %d of %d: %+v, %v; want the 2 whole batches", cut, len(all), fa, err)
		}
		if got := logBytes(t, f.p); !bytes.Equal(got, all[:2*one]) {
			t.Fatalf("cut at %d: the follower holds other bytes", cut)
		}
	}
	for name, corrupt := range map[string]func([]byte){
		"length below a header": func(b []byte) { binary.BigEndian.PutUint32(b[2*one+8:], 20) },
		"magic 1":               func(b []byte) { b[2*one+16] = 1 },
	} {
		f := newFollower(t, 1)
		b := slices.Clone(all[:len(all)-1])
		corrupt(b)
		if _, err := f.p.AppendAsFollower(b); !errors.Is(err, ErrCorruptReplicaBatch) {
			t.Fatalf("%s: %v, want ErrCorruptReplicaBatch", name, err)
		}
		if end := f.p.Offsets().LogEnd; end != 0 {
			t.Fatalf("%s: log end %d after a refused append", name, end)
		}
	}
}

func TestAppendAsFollowerRefusesCorruptBatch(t *testing.T) {
	l := newLeader(t)
	for range 3 {
		mustAppend(t, l.p, batch(t, spec{records: 2, valueBytes: 100}), AcksLeader)
	}
	all := logBytes(t, l.p)
	h, _ := record.ParseHeader(all)
	for name, corrupt := range map[string]func([]byte){
		"a flipped bit in a record": func(b []byte) { b[h.Size()+record.HeaderSize+5] ^= 0x10 },
		"no leader epoch":           func(b []byte) { record.SetPartitionLeaderEpoch(b[h.Size():], -1) },
		"more records than offsets": func(b []byte) {
			binary.BigEndian.PutUint32(b[h.Size()+57:], 9)
			binary.BigEndian.PutUint32(b[h.Size()+17:], record.ComputeCRC(b[h.Size():2*h.Size()]))
		},
	} {
		f := newFollower(t, 1)
		b := slices.Clone(all)
		corrupt(b)
		if _, err := f.p.AppendAsFollower(b); !errors.Is(err, ErrCorruptReplicaBatch) {
			t.Fatalf("%s: %v, want ErrCorruptReplicaBatch", name, err)
		}
		if end := f.p.Offsets().LogEnd; end != 0 {
			t.Fatalf("%s: log end %d after a refused append", name, end)
		}
	}
	f := newFollower(t, 1)
	b := slices.Clone(all)
	b[h.Size()+record.HeaderSize+5] ^= 0x10
	_, err := f.p.AppendAsFollower(b)
	var re *record.Error
	if !errors.As(err, &re) || re.Code != record.CodeCorruptMessage {
		t.Fatalf("CRC mismatch: %v, want the record package's CORRUPT_MESSAGE", err)
	}
}

func TestFollowerRefusesClientWrites(t *testing.T) {
	f := newFollower(t, 1)
	if _, _, err := f.p.Append(batch(t, spec{}), AcksLeader); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Append: %v", err)
	}
	if _, _, err := f.p.AppendFromCoordinator(batch(t, spec{pid: 3, noSeq: true})); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("AppendFromCoordinator: %v", err)
	}
	if _, _, err := f.p.AppendMarker(3, 0, true, 0); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("AppendMarker: %v", err)
	}
	if _, err := f.p.DeleteRecords(0); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("DeleteRecords: %v", err)
	}
	if err := f.p.SetInSyncReplicas(1); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("SetInSyncReplicas: %v", err)
	}
	if f.p.AdvanceHighWatermark(5) {
		t.Fatal("AdvanceHighWatermark moved a follower's high watermark")
	}
	if f.p.IsLeader() {
		t.Fatal("IsLeader on a follower")
	}
	if end := f.p.Offsets().LogEnd; end != 0 {
		t.Fatalf("log end %d after refused writes", end)
	}

	l := newLeader(t)
	mustAppend(t, l.p, batch(t, spec{}), AcksLeader)
	if _, err := l.p.AppendAsFollower(stamped(batch(t, spec{}), 1, 1)); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("AppendAsFollower on a leader: %v", err)
	}
	if err := l.p.TruncateTo(0); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("TruncateTo on a leader: %v", err)
	}
	if err := l.p.TruncateFullyAndStartAt(0); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("TruncateFullyAndStartAt on a leader: %v", err)
	}
	if _, err := l.p.SetHighWatermarkFromLeader(0); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("SetHighWatermarkFromLeader on a leader: %v", err)
	}
	if err := l.p.SetLogStartFromLeader(1); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("SetLogStartFromLeader on a leader: %v", err)
	}
	if off := l.p.Offsets(); off.LogEnd != 1 || off.HighWatermark != 1 || off.LogStart != 0 {
		t.Fatalf("a leader changed by follower calls: %+v", off)
	}
}

func TestRoleTransitionTable(t *testing.T) {
	for _, tc := range []struct {
		from, to role
		epoch    base.Epoch // against a current epoch of 5
		want     roleOutcome
	}{
		{roleLeader, roleLeader, 4, roleIgnore},
		{roleLeader, roleLeader, 5, roleIgnore},
		{roleLeader, roleLeader, 6, roleNewEpoch},
		{roleLeader, roleFollower, 4, roleRefuse},
		{roleLeader, roleFollower, 5, roleSwitch},
		{roleLeader, roleFollower, 6, roleSwitch},
		{roleFollower, roleFollower, 4, roleIgnore},
		{roleFollower, roleFollower, 5, roleIgnore},
		{roleFollower, roleFollower, 6, roleNewEpoch},
		{roleFollower, roleLeader, 4, roleRefuse},
		{roleFollower, roleLeader, 5, roleRefuse},
		{roleFollower, roleLeader, 6, roleSwitch},
	} {
		if got := decideRole(tc.from, 5, tc.to, tc.epoch); got != tc.want {
			t.Errorf("%v in 5 -> %v in %d: %d, want %d", tc.from, tc.to, tc.epoch, got, tc.want)
		}
	}
}

func TestRoleChanges(t *testing.T) {
	r := newLeader(t)
	p := r.p
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	if err := p.BecomeLeader(3); err != nil { // leads in 3 from offset 3
		t.Fatal(err)
	}
	if err := p.BecomeFollower(2); !errors.Is(err, ErrStaleLeaderEpoch) || !p.IsLeader() {
		t.Fatalf("BecomeFollower(2) of a leader in 3: %v", err)
	}
	if err := p.BecomeFollower(3); err != nil || p.IsLeader() {
		t.Fatalf("BecomeFollower(3) of the leader in 3: %v", err)
	}
	// It led epoch 3 without appending to it: that epoch is forgotten,
	// durably.
	if lin := p.Lineage(); len(lin) != 1 || lin[0].Epoch != 1 {
		t.Fatalf("lineage %v, want epoch 1 alone", lin)
	}
	if e, ok := p.LatestEpoch(); !ok || e != 1 || p.Offsets().LeaderEpoch != 3 {
		t.Fatalf("latest epoch %d, %v; leader epoch %d; want 1 and 3", e, ok, p.Offsets().LeaderEpoch)
	}
	for _, e := range []base.Epoch{2, 3} {
		if err := p.BecomeFollower(e); err != nil {
			t.Fatalf("BecomeFollower(%d) of a follower in 3: %v", e, err)
		}
		if err := p.BecomeLeader(e); !errors.Is(err, ErrStaleLeaderEpoch) || p.IsLeader() {
			t.Fatalf("BecomeLeader(%d) of a follower in 3: %v", e, err)
		}
	}
	if err := p.BecomeFollower(4); err != nil || p.Offsets().LeaderEpoch != 4 {
		t.Fatalf("BecomeFollower(4): %v, %+v", err, p.Offsets())
	}
	if err := p.BecomeLeader(5); err != nil || !p.IsLeader() {
		t.Fatalf("BecomeLeader(5): %v", err)
	}
	if lin := p.Lineage(); len(lin) != 2 || lin[1].Epoch != 5 || lin[1].Start != 3 {
		t.Fatalf("lineage %v, want epoch 5 from 3", lin)
	}
	// Not told its ISR yet: appends do not move the high watermark and
	// acks=all is refused (min.insync.replicas is 1 here).
	p.mu.Lock()
	p.mu.cfg.MinInsyncReplicas = 1
	p.mu.Unlock()
	if _, _, err := p.Append(batch(t, spec{}), AcksAll); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all before SetInSyncReplicas: %v", err)
	}
	mustAppend(t, p, batch(t, spec{}), AcksLeader)
	if off := p.Offsets(); off.HighWatermark != 3 || off.LogEnd != 4 {
		t.Fatalf("offsets %+v, want the high watermark still at 3", off)
	}
	if err := p.SetInSyncReplicas(1); err != nil || p.Offsets().HighWatermark != 4 {
		t.Fatalf("SetInSyncReplicas(1): %v, %+v", err, p.Offsets())
	}
	if err := p.SetInSyncReplicas(0); err == nil {
		t.Fatal("an ISR of 0 replicas was taken")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// A reopened partition leads in the epoch it is opened with, and the
	// epoch cache kept its changes.
	q := r.e.open(t)
	if !q.IsLeader() || q.Offsets().LeaderEpoch != 5 {
		t.Fatalf("reopened: leader %v in %d, want leader in 5", q.IsLeader(), q.Offsets().LeaderEpoch)
	}
	if lin := q.Lineage(); len(lin) != 2 || lin[0].Epoch != 1 || lin[1].Epoch != 5 {
		t.Fatalf("reopened lineage %v", lin)
	}
}

// A leader with other in-sync replicas moves its high watermark only when
// told, forward, and never past its log end; min.insync.replicas counts
// what SetInSyncReplicas said.
func TestLeaderWithReplicasHighWatermark(t *testing.T) {
	l := newLeader(t, func(o *Options) { o.Config.MinInsyncReplicas = 2 })
	p := l.p
	if _, _, err := p.Append(batch(t, spec{}), AcksAll); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all with an ISR of 1: %v", err)
	}
	if err := p.SetInSyncReplicas(2); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		mustAppend(t, p, batch(t, spec{records: 2}), AcksAll)
	}
	// A marker waits for its sync and, with followers in the ISR, for the
	// high watermark to pass it (as a coordinator's write does).
	_, markerWait, err := p.AppendMarker(9, 0, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	markerDone := make(chan error, 1)
	go func() { markerDone <- markerWait() }()
	if off := p.Offsets(); off.HighWatermark != 0 || off.LogEnd != 9 || off.LastStable != 0 {
		t.Fatalf("offsets %+v, want nothing committed yet", off)
	}
	if rr, err := p.Read(0, 1<<20, nil); err != nil || len(rr.Records) != 0 {
		t.Fatalf("a client read below a high watermark of 0: %d bytes, %v", len(rr.Records), err)
	}
	if rr, err := p.ReadIsolated(0, 1<<20, nil, ReadLogEnd); err != nil || len(rr.Records) == 0 {
		t.Fatalf("a follower's read: %d bytes, %v", len(rr.Records), err)
	}
	if !p.AdvanceHighWatermark(4) || p.Offsets().HighWatermark != 4 {
		t.Fatalf("AdvanceHighWatermark(4): %+v", p.Offsets())
	}
	if p.AdvanceHighWatermark(2) || p.AdvanceHighWatermark(4) || p.Offsets().HighWatermark != 4 {
		t.Fatalf("the high watermark moved back or moved for nothing: %+v", p.Offsets())
	}
	// Only an ISR of the leader alone moves it to the log end.
	if err := p.SetInSyncReplicas(3); err != nil || p.Offsets().HighWatermark != 4 {
		t.Fatalf("SetInSyncReplicas(3): %v, %+v; want the high watermark still at 4", err, p.Offsets())
	}
	if hs := readAll(t, p, 0); len(hs) != 2 {
		t.Fatalf("read %d batches below a high watermark of 4, want 2", len(hs))
	}
	select {
	case err := <-markerDone:
		t.Fatalf("the marker's wait returned (%v) with the high watermark below it", err)
	default:
	}
	if !p.AdvanceHighWatermark(100) || p.Offsets().HighWatermark != 9 {
		t.Fatalf("AdvanceHighWatermark past the log end: %+v, want it at the log end", p.Offsets())
	}
	if err := <-markerDone; err != nil {
		t.Fatalf("the marker's wait once the high watermark passed it: %v", err)
	}
	// A coordinator's write whose leader becomes a follower fails.
	_, coordWait, err := p.AppendFromCoordinator(batch(t, spec{pid: 11, noSeq: true, transactional: true, records: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.BecomeFollower(p.Offsets().LeaderEpoch + 1); err != nil {
		t.Fatal(err)
	}
	if err := coordWait(); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("a coordinator's write on a leader that stepped down: %v, want ErrNotLeader", err)
	}
	if err := p.BecomeLeader(p.Offsets().LeaderEpoch + 1); err != nil {
		t.Fatal(err)
	}
	if err := p.SetInSyncReplicas(1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.AppendMarker(9, 0, true, 0); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("marker with an ISR of 1 under min.insync.replicas=2: %v", err)
	}
	mustAppend(t, p, batch(t, spec{}), AcksLeader)
	if off := p.Offsets(); off.HighWatermark != off.LogEnd {
		t.Fatalf("the leader alone in its ISR: %+v, want the high watermark at the log end", off)
	}
}

// A follower's high watermark is its leader's, bounded by its own log,
// and readers see only what is below it.
func TestFollowerHighWatermarkFromLeader(t *testing.T) {
	l := newLeader(t)
	f := newFollower(t, 1)
	mustAppend(t, l.p, batch(t, spec{records: 3}), AcksLeader)
	mustAppend(t, l.p, batch(t, txn(4, 0, 2)), AcksLeader)
	mustAppend(t, l.p, batch(t, spec{records: 3}), AcksLeader)
	fetch(t, l.p, f.p, 1, -1) // one batch
	if off := f.p.Offsets(); off.HighWatermark != 3 || off.LogEnd != 3 {
		t.Fatalf("after one batch: %+v, want the high watermark clamped to the log end 3", off)
	}
	catchUp(t, l.p, f.p)
	for _, tc := range []struct{ leaderHW, want, lastStable base.Offset }{
		{100, 8, 3},
		{5, 5, 3},
		{3, 3, 3}, // backward: a new leader's may lag
		{8, 8, 3},
	} {
		hw, err := f.p.SetHighWatermarkFromLeader(tc.leaderHW)
		off := f.p.Offsets()
		if err != nil || hw != tc.want || off.HighWatermark != tc.want || off.LastStable != tc.lastStable {
			t.Fatalf("leader's %d: %d, %v, %+v; want %d, last stable %d", tc.leaderHW, hw, err, off, tc.want, tc.lastStable)
		}
	}
	if _, err := f.p.SetHighWatermarkFromLeader(3); err != nil {
		t.Fatal(err)
	}
	if hs := readAll(t, f.p, 0); len(hs) != 1 {
		t.Fatalf("read %d batches below 3, want the first only", len(hs))
	}
	if _, err := f.p.Read(5, 1<<20, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read past the high watermark: %v", err)
	}
	// A leader's high watermark below the follower's log start (a new
	// leader's lagging one) leaves it at the log start.
	if _, err := f.p.SetHighWatermarkFromLeader(8); err != nil {
		t.Fatal(err)
	}
	if err := f.p.SetLogStartFromLeader(6); err != nil {
		t.Fatal(err)
	}
	if hw, err := f.p.SetHighWatermarkFromLeader(4); err != nil || hw != 6 || f.p.Offsets().HighWatermark != 6 {
		t.Fatalf("the leader's 4 below the log start 6: %d, %v, %+v; want 6", hw, err, f.p.Offsets())
	}
}

func TestSetLogStartFromLeader(t *testing.T) {
	f, bases := caughtUpFollower(t, 30)
	start := bases[2] + 1 // inside the third segment
	if err := f.p.SetLogStartFromLeader(start); err != nil {
		t.Fatal(err)
	}
	if off := f.p.Offsets(); off.LogStart != start || off.LocalStart != bases[2] {
		t.Fatalf("offsets %+v, want log start %d and the segments below %d deleted", off, start, bases[2])
	}
	if err := f.p.SetLogStartFromLeader(start - 1); err != nil || f.p.Offsets().LogStart != start {
		t.Fatalf("a lower leader's log start: %v, %+v", err, f.p.Offsets())
	}
	if err := f.p.SetLogStartFromLeader(f.p.Offsets().HighWatermark + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a log start past the high watermark: %v", err)
	}
	f.restart(t, 1)
	if off := f.p.Offsets(); off.LogStart != start || off.LocalStart != bases[2] {
		t.Fatalf("reopened: %+v", off)
	}
	if _, err := f.p.Read(start-1, 1<<20, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read below the log start: %v", err)
	}
}

func TestEpochCacheAssignFromLeader(t *testing.T) {
	type e = base.EpochStart
	for _, tc := range []struct {
		name   string
		have   []e
		epoch  base.Epoch
		start  base.Offset
		want   []e
		change bool
	}{
		{"empty", nil, 3, 10, lin(3, 10), true},
		{"newer", lin(1, 0), 3, 10, lin(1, 0, 3, 10), true},
		{"the latest, later", lin(1, 0, 3, 10), 3, 20, lin(1, 0, 3, 10), false},
		{"the latest, earlier", lin(1, 0, 3, 10), 3, 5, lin(1, 0, 3, 5), true},
		{"an empty epoch at the same start", lin(1, 0, 3, 10), 4, 10, lin(1, 0, 4, 10), true},
		{"older than the latest", lin(1, 0, 3, 10, 5, 20), 4, 30, lin(1, 0, 3, 10, 4, 30), true},
	} {
		c := epochCache{entries: slices.Clone(tc.have)}
		if got := c.assignFromLeader(tc.epoch, tc.start); got != tc.change || !slices.Equal(c.entries, tc.want) {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, c.entries, tc.change, tc.want)
		}
	}
}

func TestEpochCacheTruncateFromEnd(t *testing.T) {
	have := lin(1, 0, 3, 10, 5, 20)
	for _, tc := range []struct {
		end  base.Offset
		want []base.EpochStart
	}{
		{25, have},
		{21, have},
		{20, have[:2]}, // an epoch starting exactly at the end goes (Kafka)
		{11, have[:2]},
		{10, have[:1]},
		{0, nil},
	} {
		c := epochCache{entries: slices.Clone(have)}
		changed := c.truncateFromEnd(tc.end)
		if !slices.Equal(c.entries, tc.want) || changed != (len(tc.want) != len(have)) {
			t.Errorf("truncateFromEnd(%d): %v, %v; want %v", tc.end, c.entries, changed, tc.want)
		}
	}
}

// A follower's segments roll by segment.bytes, segment.ms and a full
// index as a leader's do, with a producer snapshot at each new segment's
// base, from which a restart replays.
func TestFollowerRollsAndSnapshots(t *testing.T) {
	for name, tweak := range map[string]func(*Options){
		"segment.bytes": smallSegments,
		"segment.ms":    func(o *Options) { o.Config.SegmentMaxAge = time.Minute },
		"index full":    func(o *Options) { o.Config.SegmentIndexBytes = 64; o.Config.IndexIntervalBytes = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			l := newLeader(t)
			f := newFollower(t, 1, tweak)
			for i := range 24 {
				mustAppend(t, l.p, batch(t, spec{pid: 5, seq: int32(i), records: 1, valueBytes: 200}), AcksLeader)
			}
			for f.p.Offsets().LogEnd < l.p.Offsets().LogEnd {
				f.e.clock.Advance(25 * time.Second)
				fetch(t, l.p, f.p, 1, -1)
			}
			bases := segmentBases(f.p)
			if len(bases) < 3 {
				t.Fatalf("segments %v, want rolls", bases)
			}
			snaps, err := listSnapshots(f.e.dir)
			if err != nil || len(snaps) != snapshotsKept {
				t.Fatalf("snapshots %v, %v; want the newest %d", snaps, err, snapshotsKept)
			}
			if want := bases[len(bases)-snapshotsKept:]; !slices.Equal(snaps, want) {
				t.Fatalf("snapshots at %v, want at the newest segment bases %v", snaps, want)
			}
			crashed := f.e.crashCopy(t)
			c := openAt(t, crashed)
			if err := c.BecomeFollower(1); err != nil {
				t.Fatal(err)
			}
			fetch(t, l.p, c, 1, -1)
			sameReplicas(t, l.p, c, "recovered from the snapshots")
		})
	}
}

// AppendAsFollower starts the log over only when it is empty and the first
// batch holds its log end (the leader's log start is inside that batch); a
// batch below the log end is refused otherwise, and nothing changes.
func TestAppendAsFollowerStartsOverOnlyInsideTheFirstBatch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		logStart   base.Offset // the follower starts over empty here
		fill       int         // then appends this many one-record batches
		at         base.Offset // the fetched batch's base
		records    int
		startsOver bool
	}{
		{"empty, the batch holds the log end", 10, 0, 8, 4, true},
		{"empty, the batch ends below the log end", 10, 0, 5, 2, false},
		{"empty, the batch ends just below the log end", 10, 0, 8, 2, false},
		{"not empty, the batch holds the log end", 10, 3, 12, 3, false},
		{"not empty, the batch ends at the log end", 10, 3, 11, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFollower(t, 1)
			if err := f.p.TruncateFullyAndStartAt(tc.logStart); err != nil {
				t.Fatal(err)
			}
			for i := range tc.fill {
				if _, err := f.p.AppendAsFollower(stamped(batch(t, spec{}), tc.logStart+base.Offset(i), 1)); err != nil {
					t.Fatal(err)
				}
			}
			before, bytesBefore := f.p.Offsets(), logBytes(t, f.p)
			b := stamped(batch(t, spec{records: tc.records}), tc.at, 1)
			fa, err := f.p.AppendAsFollower(b)
			off := f.p.Offsets()
			if tc.startsOver {
				end := tc.at + base.Offset(tc.records)
				if err != nil || fa.Appended != (base.Range{Start: tc.at, End: end}) {
					t.Fatalf("AppendAsFollower: %+v, %v; want a start over at %d", fa, err, tc.at)
				}
				if off.LogStart != tc.logStart || off.LocalStart != tc.at || off.LogEnd != end || off.HighWatermark != tc.logStart {
					t.Fatalf("offsets %+v after a start over at %d", off, tc.at)
				}
				return
			}
			var oe *AppendOffsetError
			if !errors.As(err, &oe) || oe.Want != before.LogEnd || oe.Base != tc.at || oe.Index != 0 {
				t.Fatalf("AppendAsFollower of [%d, %d) at the log end %d: %+v, %v; want an AppendOffsetError",
					tc.at, tc.at+base.Offset(tc.records), before.LogEnd, fa, err)
			}
			if off != before || !bytes.Equal(logBytes(t, f.p), bytesBefore) {
				t.Fatalf("a refused append changed the log: %+v, was %+v", off, before)
			}
		})
	}
}

// SyncFollower makes what the follower appended durable before it returns
// the log end its fetcher reports to the leader (which may count it in
// the high watermark that acknowledges acks=all producers).
func TestSyncFollowerMakesTheLogDurable(t *testing.T) {
	f := newFollower(t, 1)
	if _, err := f.p.AppendAsFollower(stamped(batch(t, spec{records: 3}), 0, 1)); err != nil {
		t.Fatal(err)
	}
	if f.p.DurableEnd() == 3 {
		t.Fatal("AppendAsFollower synced; the test needs it unsynced")
	}
	end, err := f.p.SyncFollower()
	if err != nil || end != 3 {
		t.Fatalf("SyncFollower: %d, %v; want 3", end, err)
	}
	if got := f.p.DurableEnd(); got != end {
		t.Fatalf("durable end %d after SyncFollower reported %d", got, end)
	}
}
