package partition

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// A follower of a compacted topic replicates its leader's cleaned log,
// gaps and all (Kafka's followers of __consumer_offsets and
// __transaction_state do it all the time).

// sentBatch is a producer's batch as the test sent it and where the
// leader put it.
type sentBatch struct {
	s  spec
	at base.Offset
}

// compactableWriter writes to a compacted leader keyed batches that
// later ones supersede.
type compactableWriter struct {
	l    *replica
	rng  *rand.Rand
	seq  map[int64]int32
	last map[int64]sentBatch // each idempotent producer's last batch
}

func newCompactableWriter(l *replica, rng *rand.Rand) *compactableWriter {
	return &compactableWriter{l: l, rng: rng, seq: map[int64]int32{}, last: map[int64]sentBatch{}}
}

// write appends rounds of plain batches (some compressed, some
// tombstones), an idempotent producer's, a transactional producer's
// committed and aborted transactions and a coordinator's transactional
// batch. With newEpoch, it starts with a batch of a key of its own, and
// the leader moves to epoch 2 halfway, with another: cleaning keeps the
// first batch of each epoch, so the epochs start where they did.
func (w *compactableWriter) write(t *testing.T, rounds int, newEpoch bool) {
	t.Helper()
	l := w.l
	key := func() string { return keyOf(w.rng.IntN(6)) }
	idem := func(pid int64, transactional bool) {
		s := spec{pid: pid, seq: w.seq[pid], keys: []string{key(), key()}, valueBytes: 30, transactional: transactional}
		res := mustAppend(t, l.p, batch(t, s), AcksAll)
		w.last[pid] = sentBatch{s, res.BaseOffset}
		w.seq[pid] += 2
	}
	if newEpoch {
		mustAppend(t, l.p, batch(t, spec{keys: []string{"epoch-1"}}), AcksAll)
	}
	for r := range rounds {
		if newEpoch && r == rounds/2 {
			if err := l.p.BecomeLeader(2); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, l.p, batch(t, spec{keys: []string{"epoch-2"}}), AcksAll)
		}
		codec := []record.Codec{record.CodecNone, record.CodecGzip, record.CodecLZ4}[r%3]
		mustAppend(t, l.p, batch(t, spec{keys: []string{key(), key(), key()}, valueBytes: 20 + r%50, codec: codec}), AcksAll)
		if r%5 == 0 {
			mustAppend(t, l.p, batch(t, spec{keys: []string{key()}, tombstone: true}), AcksAll)
		}
		idem(1, false)
		if r%4 == 0 { // a transaction, committed or aborted
			idem(3, true)
			idem(3, true)
			if r%8 == 0 {
				if _, wait, err := l.p.AppendFromCoordinator(batch(t, spec{pid: 3, noSeq: true, transactional: true, keys: []string{key()}})); err != nil || wait() != nil {
					t.Fatalf("AppendFromCoordinator: %v", err)
				}
			}
			if _, wait, err := l.p.AppendMarker(3, 0, r%12 != 0, 0); err != nil || wait() != nil {
				t.Fatalf("AppendMarker: %v", err)
			}
		}
	}
}

// replayedReference is the state a partition derives from the leader's
// log alone: a copy of its directory without producer snapshots, whose
// Open replays the whole log (the epochs come from the leader's
// checkpoint). A follower that fetched the cleaned log must end with it.
func replayedReference(t *testing.T, leader *replica) *Partition {
	t.Helper()
	o := leader.e.crashCopy(t)
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		if strings.HasSuffix(de.Name(), snapshotSuffix) {
			if err := os.Remove(filepath.Join(o.Dir, de.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return openAt(t, o)
}

// gapCount is how many offsets below the log end no batch of p's holds.
func gapCount(t *testing.T, p *Partition) int64 {
	t.Helper()
	var held int64
	for it := record.SplitBatches(logBytes(t, p)); ; {
		_, h, ok := it.Next()
		if !ok {
			break
		}
		held += int64(h.NextOffset() - h.BaseOffset)
	}
	return int64(p.Offsets().LogEnd-p.Offsets().LogStart) - held
}

// TestFollowerReplicatesCompactedLeader: a leader's compacted log has
// gaps between batches, at the ends of segments and between them; a
// follower fetches it with reads of random sizes, some cut inside a
// batch, truncates at random offsets (inside gaps too) and fetches on
// from there, restarts and crashes. It ends with the leader's bytes,
// offsets and epochs, with the producer state, transactions and last
// stable offset that the log derives, keeps them across a restart and a
// crash, and, made leader, answers every producer's retried last batch as
// a duplicate at the offsets the old leader gave it.
func TestFollowerReplicatesCompactedLeader(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, seed+1))
		l := newLeader(t, compacted)
		w := newCompactableWriter(l, rng)
		w.write(t, 40, true)
		if err := l.p.log.Roll(); err != nil {
			t.Fatal(err)
		}
		if cleanUntilDone(t, l.p, NewCleanerMap(1<<20), l.e.clock.Now().UnixMilli()) == 0 {
			t.Fatal("no cleaning pass was due")
		}
		// A tail after the cleaning, with an open transaction.
		w.write(t, 6, false)
		mustAppend(t, l.p, batch(t, spec{pid: 4, transactional: true, keys: []string{"open"}}), AcksAll)
		if n := gapCount(t, l.p); n < 50 {
			t.Fatalf("seed %d: the cleaned leader has only %d offsets in gaps", seed, n)
		}

		f := newFollower(t, 2, compacted)
		for i := 0; f.p.Offsets().LogEnd < l.p.Offsets().LogEnd; i++ {
			if i > 5000 {
				t.Fatalf("seed %d: the follower does not catch up", seed)
			}
			switch op := rng.IntN(20); {
			case op < 16: // a fetch, torn or not
				cut := -1
				if op%3 == 0 {
					cut = rng.IntN(2000)
				}
				fetch(t, l.p, f.p, 1+rng.IntN(2500), cut)
			case op < 18: // a truncation, often into a gap
				off := f.p.Offsets()
				to := off.LocalStart + base.Offset(rng.Int64N(int64(off.LogEnd-off.LocalStart)+1))
				if err := f.p.TruncateTo(to); err != nil {
					t.Fatalf("seed %d: TruncateTo(%d): %v", seed, to, err)
				}
			case op == 18:
				f.restart(t, 2)
			default: // a crash: everything fetched was synced
				o := f.e.crashCopy(t)
				f.e = &env{dir: o.Dir, clock: f.e.clock, opts: o}
				f.p = openAt(t, o)
				if err := f.p.BecomeFollower(2); err != nil {
					t.Fatal(err)
				}
			}
		}
		fetch(t, l.p, f.p, 4096, -1) // the high watermark
		what := func(s string) string { return fmt.Sprintf("%s (seed %d)", s, seed) }
		ref := replayedReference(t, l)
		sameReplicas(t, ref, f.p, what("caught up, against the log's replay"))
		checkSameAsLeader(t, l.p, f.p, what("caught up"))
		f.restart(t, 2)
		sameReplicas(t, ref, f.p, what("restarted"))
		checkSameAsLeader(t, l.p, f.p, what("restarted"))
		crashed := openAt(t, f.e.crashCopy(t))
		sameReplicas(t, ref, crashed, what("crash copy"))

		if err := f.p.BecomeLeader(3); err != nil {
			t.Fatal(err)
		}
		if err := f.p.SetInSyncReplicas(1); err != nil {
			t.Fatal(err)
		}
		for pid, b := range w.last {
			res, _, err := f.p.Append(batch(t, b.s), AcksLeader)
			if err != nil || !res.Duplicate || res.BaseOffset != b.at {
				t.Fatalf("seed %d: producer %d retries its last batch on the new leader: %+v, %v; want a duplicate at %d", seed, pid, res, err, b.at)
			}
		}
	}
}

// checkSameAsLeader: the follower holds the leader's bytes, offsets and
// epochs (the first batch of each epoch survived cleaning).
func checkSameAsLeader(t fatalfer, leader, follower *Partition, what string) {
	t.Helper()
	lo, fo := leader.Offsets(), follower.Offsets()
	if lo.LogEnd != fo.LogEnd || lo.LogStart != fo.LogStart || lo.HighWatermark != fo.HighWatermark || lo.LastStable != fo.LastStable {
		t.Fatalf("%s: offsets %+v and %+v", what, lo, fo)
	}
	if lb, fb := logBytes(t, leader), logBytes(t, follower); string(lb) != string(fb) {
		t.Fatalf("%s: the logs' bytes differ (%d and %d bytes)", what, len(lb), len(fb))
	}
	if la, lf := withData(leader.Lineage(), lo.LogEnd), withData(follower.Lineage(), fo.LogEnd); len(la) != len(lf) {
		t.Fatalf("%s: lineage %v and %v", what, la, lf)
	} else {
		for i := range la {
			if la[i] != lf[i] {
				t.Fatalf("%s: lineage %v and %v", what, la, lf)
			}
		}
	}
}
