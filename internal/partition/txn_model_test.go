package partition

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// txnModel is what a partition's transactions should look like, kept
// naively: the open transactions and every abort, with the last stable
// offset computed from them.
type txnModel struct {
	open     map[base.ProducerID]base.Offset // producer -> its open transaction's first offset
	aborted  []AbortedTxn
	logStart base.Offset
	end      base.Offset
}

// firstOpenOther is the first offset of the oldest transaction open other
// than pid's.
func (m *txnModel) firstOpenOther(pid base.ProducerID) (base.Offset, bool) {
	first, ok := base.Offset(0), false
	for q, f := range m.open {
		if q != pid && (!ok || f < first) {
			first, ok = f, true
		}
	}
	return first, ok
}

func (m *txnModel) lastStable() base.Offset {
	if f, ok := m.firstOpenOther(-1); ok {
		return min(max(f, m.logStart), m.end)
	}
	return m.end
}

func (m *txnModel) openTxns() []producers.OpenTxn {
	var out []producers.OpenTxn
	for pid, f := range m.open {
		out = append(out, producers.OpenTxn{ProducerID: pid, FirstOffset: f})
	}
	slices.SortFunc(out, func(a, b producers.OpenTxn) int { return int(a.FirstOffset - b.FirstOffset) })
	return out
}

// Random transactional and plain appends, a coordinator's transactional
// batches, commits, aborts, DeleteRecords, clean restarts and crashes: the
// last stable offset, the open transactions and the aborted list always
// equal the model's, and a read_committed read never passes the last
// stable offset.
func TestTransactionsAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := newEnv(t, smallSegments)
		p := e.open(t)
		m := &txnModel{open: map[base.ProducerID]base.Offset{}}
		seq := map[int64]int32{}
		appendOK := func(s spec) base.Offset {
			res, _, err := p.Append(batch(t, s), AcksLeader)
			if err != nil {
				rt.Fatalf("Append(%+v): %v", s, err)
			}
			m.end = p.Offsets().LogEnd
			return res.BaseOffset
		}
		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for range steps {
			pid := int64(rapid.IntRange(1, 3).Draw(rt, "pid"))
			value := rapid.IntRange(1, 200).Draw(rt, "valueBytes")
			switch op := rapid.IntRange(0, 8).Draw(rt, "op"); op {
			case 0, 1: // a transactional batch
				at := appendOK(spec{pid: pid, seq: seq[pid], records: rapid.IntRange(1, 2).Draw(rt, "records"), valueBytes: value, transactional: true})
				seq[pid] += int32(p.Offsets().LogEnd - at)
				if _, ok := m.open[base.ProducerID(pid)]; !ok {
					m.open[base.ProducerID(pid)] = at
				}
			case 2: // a plain batch, idempotent or not
				if rapid.Bool().Draw(rt, "idempotent") {
					s := spec{pid: pid, seq: seq[pid], valueBytes: value}
					if _, open := m.open[base.ProducerID(pid)]; open {
						_, _, err := p.Append(batch(t, s), AcksLeader)
						var ce *producers.CodeError
						if !errors.As(err, &ce) || ce.Code != producers.CodeInvalidTxnState {
							rt.Fatalf("plain batch in an open transaction: %v", err)
						}
						break
					}
					appendOK(s)
					seq[pid]++
				} else {
					appendOK(spec{valueBytes: value})
				}
			case 3: // a coordinator's transactional batch
				res, wait, err := p.AppendFromCoordinator(batch(t, spec{pid: 9, noSeq: true, transactional: true, valueBytes: value}))
				if err != nil || wait() != nil {
					rt.Fatalf("AppendFromCoordinator: %v", err)
				}
				m.end = p.Offsets().LogEnd
				if _, ok := m.open[9]; !ok {
					m.open[9] = res.BaseOffset
				}
			case 4, 5: // a marker
				if rapid.Bool().Draw(rt, "coordinator") {
					pid = 9
				}
				commit := rapid.Bool().Draw(rt, "commit")
				at, wait, err := p.AppendMarker(base.ProducerID(pid), 0, commit, 0)
				if err != nil || wait() != nil {
					rt.Fatalf("AppendMarker: %v", err)
				}
				m.end = at + 1
				first, open := m.open[base.ProducerID(pid)]
				delete(m.open, base.ProducerID(pid))
				if open && !commit {
					lso := at + 1
					if f, ok := m.firstOpenOther(base.ProducerID(pid)); ok {
						lso = f
					}
					m.aborted = append(m.aborted, AbortedTxn{ProducerID: base.ProducerID(pid), FirstOffset: first, LastOffset: at, LastStableOffset: lso})
				}
			case 6: // DeleteRecords
				to := base.Offset(rapid.Int64Range(int64(m.logStart), int64(m.end)).Draw(rt, "deleteTo"))
				if _, err := p.DeleteRecords(to); err != nil {
					rt.Fatalf("DeleteRecords(%d): %v", to, err)
				}
				m.logStart = max(m.logStart, to)
				m.aborted = slices.DeleteFunc(m.aborted, func(a AbortedTxn) bool { return a.LastOffset < m.logStart })
			case 7: // a clean restart
				if err := p.Close(); err != nil {
					rt.Fatal(err)
				}
				p = e.open(t)
			case 8: // a crash (the page cache survives)
				e.opts = e.crashCopy(t)
				e.dir = e.opts.Dir
				p = e.open(t)
			}
			checkTxnModel(rt, p, m)
		}
	})
}

func checkTxnModel(rt *rapid.T, p *Partition, m *txnModel) {
	off := p.Offsets()
	if off.LogEnd != m.end || off.LogStart != m.logStart {
		rt.Fatalf("offsets %+v, model end %d start %d", off, m.end, m.logStart)
	}
	if want := m.lastStable(); off.LastStable != want {
		rt.Fatalf("LastStable %d, model %d (open %v)", off.LastStable, want, m.open)
	}
	if got, want := p.OpenTxns(), m.openTxns(); !slices.Equal(got, want) {
		rt.Fatalf("OpenTxns %v, model %v", got, want)
	}
	if got := p.AbortedTxns(0, m.end+1); !slices.Equal(got, m.aborted) {
		rt.Fatalf("AbortedTxns %v, model %v", got, m.aborted)
	}
	if off.LogStart < off.LocalStart {
		return
	}
	rr, err := p.ReadIsolated(off.LogStart, 1<<20, nil, ReadCommitted)
	if err != nil {
		rt.Fatalf("ReadIsolated(%d): %v", off.LogStart, err)
	}
	for it := record.SplitBatches(rr.Records); ; {
		_, h, ok := it.Next()
		if !ok {
			break
		}
		if h.BaseOffset >= off.LastStable {
			rt.Fatalf("read_committed served a batch at %d, last stable %d", h.BaseOffset, off.LastStable)
		}
	}
}
