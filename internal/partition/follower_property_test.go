package partition

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// Random leader appends (plain, compressed, idempotent, transactional with
// commits and aborts, a coordinator's transactional batches, leader epoch
// changes) interleaved with random follower fetches (of any size, torn or
// not), truncations to random offsets, restarts and crashes of the
// follower: once it has caught up, the follower holds the leader's log
// byte for byte, with the same epoch lineage, producer state, aborted and
// open transactions and last stable offset; and, promoted to leader, it
// answers every producer's retried last batch as a duplicate, with the
// offsets the old leader gave it.
//
// Half the runs are of a compacted topic whose leader cleans its log at
// random points, which leaves gaps where the follower fetches next, or
// removes batches it has fetched already: the follower never gets stuck,
// catches up, and then holds every record the leader holds, at the same
// offsets (and more, where it fetched before a cleaning), with the same
// log end, high watermark, last stable offset and open transactions, and
// the producer state, aborted transactions and epochs its own log
// derives. A new follower then holds the leader's cleaned log byte for
// byte, with the state that log derives.
func TestFollowerMatchesLeaderProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tweak, compact := smallSegments, rapid.Bool().Draw(rt, "compact")
		if compact {
			tweak = compacted
		}
		l := newLeader(t, tweak)
		f := newFollower(t, 1, tweak)
		epoch := base.Epoch(1)
		seq := map[int64]int32{}
		open := map[int64]bool{}
		type sent struct {
			s  spec
			at base.Offset
		}
		last := map[int64]sent{}
		appendOK := func(s spec) base.Offset {
			res, wait, err := l.p.Append(batch(t, s), AcksLeader)
			if err != nil {
				rt.Fatalf("leader Append(%+v): %v", s, err)
			}
			if wait != nil {
				if err := wait(); err != nil {
					rt.Fatal(err)
				}
			}
			return res.BaseOffset
		}
		idempotent := func(pid int64, records int, transactional bool) {
			s := spec{pid: pid, seq: seq[pid], records: records, valueBytes: rapid.IntRange(1, 120).Draw(rt, "valueBytes"), transactional: transactional}
			last[pid] = sent{s, appendOK(s)}
			seq[pid] += int32(records)
		}
		lastOp := 13
		if compact {
			lastOp = 14
		}
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for range steps {
			switch op := rapid.IntRange(0, lastOp).Draw(rt, "op"); op {
			case 0, 1: // plain
				codec := rapid.SampledFrom([]record.Codec{record.CodecNone, record.CodecNone, record.CodecGzip}).Draw(rt, "codec")
				appendOK(spec{records: rapid.IntRange(1, 4).Draw(rt, "records"), valueBytes: rapid.IntRange(1, 200).Draw(rt, "valueBytes"), codec: codec})
			case 2, 3: // idempotent, not transactional
				idempotent(int64(rapid.IntRange(1, 2).Draw(rt, "pid")), rapid.IntRange(1, 3).Draw(rt, "records"), false)
			case 4, 5: // transactional
				pid := int64(rapid.IntRange(3, 4).Draw(rt, "txnPid"))
				idempotent(pid, rapid.IntRange(1, 3).Draw(rt, "records"), true)
				open[pid] = true
			case 6: // a coordinator's transactional batch
				pid := int64(rapid.IntRange(3, 4).Draw(rt, "txnPid"))
				if _, wait, err := l.p.AppendFromCoordinator(batch(t, spec{pid: pid, noSeq: true, transactional: true, records: 1})); err != nil || wait() != nil {
					rt.Fatalf("AppendFromCoordinator: %v", err)
				}
				open[pid] = true
			case 7: // a marker
				pid := int64(rapid.IntRange(3, 4).Draw(rt, "txnPid"))
				if !open[pid] {
					continue
				}
				commit := rapid.Bool().Draw(rt, "commit")
				if _, wait, err := l.p.AppendMarker(base.ProducerID(pid), 0, commit, 0); err != nil || wait() != nil {
					rt.Fatalf("AppendMarker: %v", err)
				}
				open[pid] = false
			case 8, 9, 10: // a fetch, torn or not
				maxBytes := rapid.IntRange(1, 3000).Draw(rt, "maxBytes")
				cut := rapid.IntRange(-1, 3000).Draw(rt, "cut")
				fetch(rt, l.p, f.p, maxBytes, cut)
			case 11: // the follower truncates
				off := f.p.Offsets()
				to := base.Offset(rapid.Int64Range(int64(off.LocalStart), int64(off.LogEnd)).Draw(rt, "truncateTo"))
				if err := f.p.TruncateTo(to); err != nil {
					rt.Fatalf("TruncateTo(%d): %v", to, err)
				}
				if got := f.p.Offsets(); got.LogEnd > to || got.HighWatermark > got.LogEnd || got.LastStable > got.HighWatermark {
					rt.Fatalf("after TruncateTo(%d): %+v", to, got)
				}
			case 12: // a new leader epoch
				epoch++
				if err := l.p.BecomeLeader(epoch); err != nil {
					rt.Fatal(err)
				}
				if err := f.p.BecomeFollower(epoch); err != nil {
					rt.Fatal(err)
				}
			case 13: // the follower restarts, or crashes (everything it took is synced)
				if rapid.Bool().Draw(rt, "crash") {
					o := f.e.crashCopy(t)
					f.e = &env{dir: o.Dir, clock: f.e.clock, opts: o}
					f.p = openAt(t, o)
					if err := f.p.BecomeFollower(epoch); err != nil {
						rt.Fatal(err)
					}
				} else {
					f.restart(t, epoch)
				}
			case 14: // the leader cleans what it has sealed
				if err := l.p.log.Roll(); err != nil {
					rt.Fatal(err)
				}
				cleanPasses(rt, l.p)
			}
		}
		catchUp(rt, l.p, f.p)
		if compact {
			checkCompactedReplica(t, rt, l, f, epoch)
		} else {
			sameReplicas(rt, l.p, f.p, "caught up")
			f.restart(t, epoch)
			fetch(rt, l.p, f.p, 4096, -1)
			sameReplicas(rt, l.p, f.p, "restarted")
		}

		if err := f.p.BecomeLeader(epoch + 1); err != nil {
			rt.Fatal(err)
		}
		if err := f.p.SetInSyncReplicas(1); err != nil {
			rt.Fatal(err)
		}
		for pid, b := range last {
			res, _, err := f.p.Append(batch(t, b.s), AcksLeader)
			if err != nil || !res.Duplicate || res.BaseOffset != b.at {
				rt.Fatalf("producer %d retries its last batch on the new leader: %+v, %v; want a duplicate at %d", pid, res, err, b.at)
			}
		}
	})
}

// cleanPasses runs cleaning passes on p until none is due.
func cleanPasses(t fatalfer, p *Partition) {
	t.Helper()
	cm := NewCleanerMap(1 << 20)
	nowMs := p.opts.Clock.Now().UnixMilli()
	for range 100 {
		d, err := p.PlanCleaning(nowMs)
		if err != nil {
			t.Fatalf("PlanCleaning: %v", err)
		}
		if !d.Clean {
			return
		}
		if st, err := p.Clean(d, cm, nowMs, nil); err != nil || st.Stale {
			t.Fatalf("Clean: %+v, %v", st, err)
		}
	}
	t.Fatalf("cleaning never finished")
}

// checkCompactedReplica checks a caught-up follower f of a compacted
// leader l that cleaned its log while f fetched (see
// TestFollowerMatchesLeaderProperty), then a new follower.
func checkCompactedReplica(t *testing.T, rt *rapid.T, l, f *replica, epoch base.Epoch) {
	lo, fo := l.p.Offsets(), f.p.Offsets()
	if lo.LogEnd != fo.LogEnd || lo.LogStart != fo.LogStart || lo.HighWatermark != fo.HighWatermark || lo.LastStable != fo.LastStable {
		rt.Fatalf("caught up: offsets %+v and %+v", lo, fo)
	}
	if lt, ft := l.p.OpenTxns(), f.p.OpenTxns(); !slices.Equal(lt, ft) {
		rt.Fatalf("caught up: open transactions %+v and %+v", lt, ft)
	}
	fr := recordsOf(rt, f.p)
	for o, r := range recordsOf(rt, l.p) {
		if got, ok := fr[o]; !ok || got != r {
			rt.Fatalf("caught up: the leader's record at %d (%q) is %q, %v on the follower", o, r, got, ok)
		}
	}
	if fl, derived := withData(f.p.Lineage(), fo.LogEnd), lineageOfLog(rt, f.p); !slices.Equal(fl, derived) {
		rt.Fatalf("caught up: lineage %v, the follower's batches show %v", fl, derived)
	}
	sameReplicas(rt, replayedReference(t, f), f.p, "caught up, against its log's replay")
	f.restart(t, epoch)
	fetch(rt, l.p, f.p, 4096, -1)
	sameReplicas(rt, replayedReference(t, f), f.p, "restarted, against its log's replay")

	n := newFollower(t, epoch, compacted)
	catchUp(rt, l.p, n.p)
	sameDerivedState(rt, replayedReference(t, l), n.p, "a new follower, against the leader's log's replay")
	if nl, derived := withData(n.p.Lineage(), n.p.Offsets().LogEnd), lineageOfLog(rt, l.p); !slices.Equal(nl, derived) {
		rt.Fatalf("a new follower: lineage %v, the leader's batches show %v", nl, derived)
	}
}

// recordsOf maps every offset of p's log that holds a record to the
// record's key and value.
func recordsOf(t fatalfer, p *Partition) map[base.Offset]string {
	t.Helper()
	out := map[base.Offset]string{}
	var rr record.RecordReader
	for it := record.SplitBatches(logBytes(t, p)); ; {
		b, h, ok := it.Next()
		if !ok {
			return out
		}
		if err := rr.Reset(b); err != nil {
			t.Fatalf("batch at %d: %v", h.BaseOffset, err)
		}
		for r, ok := rr.Next(); ok; r, ok = rr.Next() {
			v := "<nil>"
			if r.Value != nil {
				v = string(r.Value)
			}
			out[h.BaseOffset+base.Offset(r.OffsetDelta)] = string(r.Key) + "=" + v
		}
	}
}
