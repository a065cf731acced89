package partition

import (
	"bytes"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// fatalfer is what the replication helpers need of a *testing.T or a
// *rapid.T.
type fatalfer interface {
	Helper()
	Fatalf(format string, args ...any)
}

// replica is one partition of a replication test, with the environment to
// reopen it.
type replica struct {
	e *env
	p *Partition
}

// newLeader opens a leader in epoch 1 (testOptions' LeaderEpoch).
func newLeader(t testing.TB, tweaks ...func(*Options)) *replica {
	t.Helper()
	e := newEnv(t, tweaks...)
	return &replica{e: e, p: e.open(t)}
}

// newFollower opens a follower of the leader of epoch.
func newFollower(t testing.TB, epoch base.Epoch, tweaks ...func(*Options)) *replica {
	t.Helper()
	r := newLeader(t, tweaks...)
	if err := r.p.BecomeFollower(epoch); err != nil {
		t.Fatalf("BecomeFollower(%d): %v", epoch, err)
	}
	return r
}

// restart closes r cleanly and reopens it, a follower again in epoch.
func (r *replica) restart(t testing.TB, epoch base.Epoch) {
	t.Helper()
	if err := r.p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	r.p = r.e.open(t)
	if err := r.p.BecomeFollower(epoch); err != nil {
		t.Fatalf("BecomeFollower(%d) after reopen: %v", epoch, err)
	}
}

// fetch is one round of a follower's fetcher against leader: it reads up
// to maxBytes at its log end with ReadLogEnd, appends what it got (cut to
// cutBytes when cutBytes >= 0, as a torn response), syncs, and takes the
// leader's high watermark and log start. It returns the batches appended.
func fetch(t fatalfer, leader, follower *Partition, maxBytes, cutBytes int) int {
	t.Helper()
	from := follower.Offsets().LogEnd
	rr, err := leader.ReadIsolated(from, maxBytes, nil, ReadLogEnd)
	if err != nil {
		t.Fatalf("leader ReadIsolated(%d, ReadLogEnd): %v", from, err)
	}
	recs := rr.Records
	if cutBytes >= 0 && cutBytes < len(recs) {
		recs = recs[:cutBytes]
	}
	fa, err := follower.AppendAsFollower(recs)
	if err != nil {
		t.Fatalf("AppendAsFollower at %d: %v", from, err)
	}
	// A start over inside the first batch appends from below from.
	if fa.Appended.Start > from || fa.Appended.End < from || fa.Bytes > len(recs) {
		t.Fatalf("AppendAsFollower at %d: %+v for %d bytes", from, fa, len(recs))
	}
	if _, err := follower.SyncFollower(); err != nil {
		t.Fatalf("SyncFollower: %v", err)
	}
	if _, err := follower.SetHighWatermarkFromLeader(rr.Offsets.HighWatermark); err != nil {
		t.Fatalf("SetHighWatermarkFromLeader: %v", err)
	}
	if err := follower.SetLogStartFromLeader(rr.Offsets.LogStart); err != nil {
		t.Fatalf("SetLogStartFromLeader(%d): %v", rr.Offsets.LogStart, err)
	}
	return fa.Batches
}

// catchUp fetches until the follower holds the leader's whole log and its
// high watermark.
func catchUp(t fatalfer, leader, follower *Partition) {
	t.Helper()
	for range 10_000 {
		if follower.Offsets().LogEnd == leader.Offsets().LogEnd {
			fetch(t, leader, follower, 4096, -1) // the high watermark
			return
		}
		if fetch(t, leader, follower, 4096, -1) == 0 {
			t.Fatalf("the follower at %d does not advance towards %d", follower.Offsets().LogEnd, leader.Offsets().LogEnd)
		}
	}
	t.Fatalf("the follower does not catch up")
}

// caughtUpFollower opens a leader and a follower in epoch 1, both of
// small segments, appends batchCount batches of two 100-byte records to
// the leader and catches the follower up. It returns the follower and its
// segments' base offsets, at least four: callers move the log start inside
// or below the third segment, which is then not the active one.
func caughtUpFollower(t testing.TB, batchCount int) (*replica, []base.Offset) {
	t.Helper()
	l := newLeader(t, smallSegments)
	f := newFollower(t, 1, smallSegments)
	for range batchCount {
		mustAppend(t, l.p, batch(t, spec{records: 2, valueBytes: 100}), AcksLeader)
	}
	catchUp(t, l.p, f.p)
	bases := segmentBases(f.p)
	if len(bases) < 4 {
		t.Fatalf("segments %v, want several", bases)
	}
	return f, bases
}

// logBytes reads every batch of p's local log from its log start, past
// the high watermark.
func logBytes(t fatalfer, p *Partition) []byte {
	t.Helper()
	var out []byte
	off := p.Offsets()
	for from := max(off.LocalStart, off.LogStart); ; {
		rr, err := p.ReadIsolated(from, 1<<20, out, ReadLogEnd)
		if err != nil {
			t.Fatalf("ReadIsolated(%d, ReadLogEnd): %v", from, err)
		}
		if len(rr.Records) == 0 {
			return rr.Buf
		}
		out = rr.Buf
		it := record.SplitBatches(rr.Records)
		for {
			_, h, ok := it.Next()
			if !ok {
				break
			}
			from = h.NextOffset()
		}
	}
}

// sameReplicas checks that b holds what a holds: the same log bytes from
// the log start (local segments below it may differ), the
// same epoch lineage, the same producer state (so the same duplicates are
// caught), the same aborted transactions and open ones, and, with the same
// high watermark, the same last stable offset.
func sameReplicas(t fatalfer, a, b *Partition, what string) {
	t.Helper()
	sameDerivedState(t, a, b, what)
	ao, bo := a.Offsets(), b.Offsets()
	if la, lb := withData(a.Lineage(), ao.LogEnd), withData(b.Lineage(), bo.LogEnd); !slices.Equal(la, lb) {
		t.Fatalf("%s: lineage %v and %v", what, la, lb)
	}
}

// sameDerivedState is sameReplicas without the epoch lineage: for a
// replica whose epochs come from a checkpoint that may name offsets whose
// batches the cleaner removed since.
func sameDerivedState(t fatalfer, a, b *Partition, what string) {
	t.Helper()
	ao, bo := a.Offsets(), b.Offsets()
	if ao.LogEnd != bo.LogEnd || ao.LogStart != bo.LogStart {
		t.Fatalf("%s: offsets %+v and %+v", what, ao, bo)
	}
	if !bytes.Equal(logBytes(t, a), logBytes(t, b)) {
		t.Fatalf("%s: the logs' bytes differ", what)
	}
	if ea, eb := a.Producers(), b.Producers(); !slices.EqualFunc(ea, eb, sameEntry) {
		t.Fatalf("%s: producers\n%+v\n%+v", what, ea, eb)
	}
	if ta, tb := a.AbortedTxns(0, ao.LogEnd), b.AbortedTxns(0, bo.LogEnd); !slices.Equal(ta, tb) {
		t.Fatalf("%s: aborted transactions\n%+v\n%+v", what, ta, tb)
	}
	if oa, ob := a.OpenTxns(), b.OpenTxns(); !slices.Equal(oa, ob) {
		t.Fatalf("%s: open transactions %+v and %+v", what, oa, ob)
	}
	if ao.HighWatermark == bo.HighWatermark && ao.LastStable != bo.LastStable {
		t.Fatalf("%s: last stable offsets %d and %d at high watermark %d", what, ao.LastStable, bo.LastStable, ao.HighWatermark)
	}
}

// lineageOfLog is the epoch lineage that p's batches show: each epoch
// starts at the first batch that carries it (Kafka's rule for a follower:
// a newer epoch starts at its first batch).
func lineageOfLog(t fatalfer, p *Partition) []base.EpochStart {
	t.Helper()
	var out []base.EpochStart
	for it := record.SplitBatches(logBytes(t, p)); ; {
		_, h, ok := it.Next()
		if !ok {
			return out
		}
		if e := base.Epoch(h.PartitionLeaderEpoch); len(out) == 0 || e > out[len(out)-1].Epoch {
			out = append(out, base.EpochStart{Epoch: e, Start: h.BaseOffset})
		}
	}
}

// withData drops the last epoch of a lineage when it starts at the log
// end: a leader's epoch before its first append, which its followers learn
// of only from batches.
func withData(lin []base.EpochStart, end base.Offset) []base.EpochStart {
	if n := len(lin); n > 0 && lin[n-1].Start >= end {
		return lin[:n-1]
	}
	return lin
}

func sameEntry(x, y producers.Entry) bool {
	return x.ProducerID == y.ProducerID && x.Epoch == y.Epoch && slices.Equal(x.Batches, y.Batches) &&
		x.LastTimestampMs == y.LastTimestampMs && x.CoordinatorEpoch == y.CoordinatorEpoch &&
		x.CurrentTxnFirstOffset == y.CurrentTxnFirstOffset
}

// stamped returns b as the leader of epoch would have written it at
// offset at, for tests that hand-make a leader's record set.
func stamped(b []byte, at base.Offset, epoch base.Epoch) []byte {
	record.SetBaseOffset(b, at)
	record.SetPartitionLeaderEpoch(b, epoch)
	return b
}
