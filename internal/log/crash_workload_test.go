package log

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// The crash tests drive a Log with a workload of steps on a vfs.Mem, crash
// the file system before the k-th crash point, reopen the log on what was
// durable and compare it with a model of what was appended and acknowledged.

type stepKind int

const (
	stepAppend      stepKind = iota + 1 // n batches of recs records of valueBytes
	stepSync                            // Sync
	stepRoll                            // Roll
	stepTruncate                        // TruncateTo the base of the live batch at pct% of the live ones
	stepDelete                          // DeleteSegmentsBefore the base of the live batch at pct%
	stepReopen                          // Close, then Open
	stepFill                            // one run of the zero filler (fillZeros), in line
	stepAppendGaps                      // AppendReplicated of n batches, each gap offsets past the one before
	stepTruncateGap                     // TruncateTo inside the gap before the live batch at pct%, if it has one
)

type step struct {
	kind                stepKind
	n, recs, valueBytes int
	pct                 int         // 0..100
	gap                 base.Offset // stepAppendGaps: offsets skipped before each batch
}

func (s step) String() string {
	switch s.kind {
	case stepAppend:
		return fmt.Sprintf("Append(%d batches)", s.n)
	case stepSync:
		return "Sync"
	case stepRoll:
		return "Roll"
	case stepTruncate:
		return fmt.Sprintf("TruncateTo(%d%%)", s.pct)
	case stepDelete:
		return fmt.Sprintf("DeleteSegmentsBefore(%d%%)", s.pct)
	case stepReopen:
		return "Close+Open"
	case stepFill:
		return "ZeroFill"
	case stepAppendGaps:
		return fmt.Sprintf("AppendReplicated(%d batches, gaps of %d)", s.n, s.gap)
	case stepTruncateGap:
		return fmt.Sprintf("TruncateTo(a gap, %d%%)", s.pct)
	}
	return "?"
}

// crashModel is what the log may hold after a crash.
type crashModel struct {
	batches [][]byte      // every batch of the log's lineage from offset 0, in order, with gaps between some
	bases   []base.Offset // bases[i] is the base offset of batches[i]
	// acked: [.., acked) was acknowledged durable (DurableEnd after a
	// completed call): every batch starting below it survives a crash. (End
	// may come back lower, at the end of those batches, when it was past
	// them, in a gap.)
	acked base.Offset
	// truncatedTo is where the last TruncateTo left End, which may be past
	// the last batch (in a gap) until the next append: End may stay there.
	truncatedTo base.Offset
	minStart    base.Offset // Start after the last completed DeleteSegmentsBefore
	maxStart    base.Offset // Start if the last attempted DeleteSegmentsBefore completed
	gen         int64       // batches made so far; stamps each batch so re-appended offsets differ
}

func (m *crashModel) end() base.Offset {
	if len(m.batches) == 0 {
		return 0
	}
	h, _ := record.ParseHeader(m.batches[len(m.batches)-1]) // made by makeBatch
	return h.NextOffset()
}

// firstFrom returns the index of the first batch starting at or after o,
// or len(batches).
func (m *crashModel) firstFrom(o base.Offset) int {
	for i, b := range m.bases {
		if b >= o {
			return i
		}
	}
	return len(m.batches)
}

// next is the next offset after batches[i].
func (m *crashModel) next(i int) base.Offset {
	h, _ := record.ParseHeader(m.batches[i]) // made by makeBatch
	return h.NextOffset()
}

// straddled reports whether a batch holds o past its base offset: o is
// not a boundary a log can start or end at.
func (m *crashModel) straddled(o base.Offset) bool {
	for i, b := range m.bases {
		if b < o && o < m.next(i) {
			return true
		}
	}
	return false
}

// pick returns the index of the live batch at pct% of the live ones (from start).
func (m *crashModel) pick(start base.Offset, pct int) int {
	lo := m.firstFrom(start)
	return lo + (len(m.batches)-lo)*pct/100
}

var errCrashed = errors.New("crashed")

// crasher is the fault hook: it counts crash points (operations that make
// something durable or change a directory) and, at the crashAt-th, snapshots
// the durable state and fails that operation and every later one, as if the
// machine had died.
type crasher struct {
	mem     *vfs.Mem
	crashAt int    // 0: never
	torn    bool   // keep random parts of the unsynced state (CrashTorn)
	seed    uint64 // for torn
	points  int
	crashed *vfs.Mem
	trace   []string // crash points seen, "op_basename"
}

func isCrashPoint(op vfs.Op) bool {
	return op.IsSync() || op == vfs.OpRename || op == vfs.OpRemove
}

func (c *crasher) inject(op vfs.Op, path string) error {
	if c.crashed != nil {
		return errCrashed
	}
	if !isCrashPoint(op) {
		return nil
	}
	c.points++
	c.trace = append(c.trace, op.String()+"_"+filepath.Base(path))
	if c.points != c.crashAt {
		return nil
	}
	if c.torn {
		c.crashed = c.mem.CrashTorn(c.seed)
	} else {
		c.crashed = c.mem.Crash()
	}
	return errCrashed
}

// crashOptions are small segments on fsys, so that a short workload rolls.
func crashOptions(fsys vfs.FS) Options {
	o := DefaultOptions("/data/topic-0", clock.NewManual(testEpoch))
	o.SegmentBytes = 700
	o.IndexIntervalBytes = 120
	o.FS = fsys
	return o
}

// crashStop is a workload's check after each call: on success it raises
// *acked to what *l holds durably and says go on; on the injected crash it
// says stop; any other error fails the test.
func crashStop(t fataler, l **Log, acked *base.Offset) func(error) bool {
	return func(err error) bool {
		t.Helper()
		if err == nil {
			*acked = max(*acked, (*l).DurableEnd())
			return false
		}
		if !errors.Is(err, errCrashed) {
			t.Fatalf("workload: %v", err)
		}
		return true
	}
}

// runWorkload opens a log with o on fsys and runs steps, updating m, until
// the end or the first error. An error other than errCrashed fails the test.
// The log is abandoned, not closed, unless the steps close it.
func runWorkload(t fataler, o Options, steps []step, m *crashModel) {
	t.Helper()
	l, err := Open(o)
	if err != nil {
		if !errors.Is(err, errCrashed) {
			t.Fatalf("Open: %v", err)
		}
		return
	}
	m.acked = max(m.acked, l.DurableEnd())
	for i, s := range steps {
		if err := runStep(l, s, m); err != nil {
			if !errors.Is(err, errCrashed) {
				t.Fatalf("step %d %v: %v", i, s, err)
			}
			return
		}
		if s.kind == stepReopen {
			if l, err = Open(o); err != nil {
				if !errors.Is(err, errCrashed) {
					t.Fatalf("step %d reopen: %v", i, err)
				}
				return
			}
		}
		m.acked = l.DurableEnd()
	}
}

func runStep(l *Log, s step, m *crashModel) error {
	switch s.kind {
	case stepAppend:
		for range s.n {
			m.gen++
			b := makeBatch(l.End(), s.recs, s.valueBytes, m.gen)
			// Added before the call: a failed Append may have written it.
			m.batches, m.bases = append(m.batches, b), append(m.bases, l.End())
			if err := l.Append(b); err != nil {
				return err
			}
		}
	case stepAppendGaps:
		// One call, as a follower appends a fetch response.
		var bs []byte
		at := l.End()
		for range s.n {
			m.gen++
			at += s.gap
			b := makeBatch(at, s.recs, s.valueBytes, m.gen)
			m.batches, m.bases = append(m.batches, b), append(m.bases, at)
			bs = append(bs, b...)
			at = m.next(len(m.batches) - 1)
		}
		return l.AppendReplicated(bs)
	case stepTruncateGap:
		k := m.pick(l.Start(), s.pct)
		if k == len(m.batches) || k == 0 || m.next(k-1) == m.bases[k] || m.bases[k]-1 < l.Start() {
			return nil // no gap before batch k in the log
		}
		o := m.bases[k] - 1
		m.acked = min(m.acked, o)
		m.truncatedTo = o
		if err := l.TruncateTo(o); err != nil {
			return err
		}
		m.batches, m.bases = m.batches[:k], m.bases[:k]
	case stepSync:
		return l.Sync()
	case stepRoll:
		return l.Roll()
	case stepTruncate:
		k := m.pick(l.Start(), s.pct)
		if k == len(m.batches) {
			return nil
		}
		o := m.bases[k]
		m.acked = min(m.acked, o)
		if err := l.TruncateTo(o); err != nil {
			return err
		}
		m.batches, m.bases = m.batches[:k], m.bases[:k]
		m.truncatedTo = o
	case stepDelete:
		k := m.pick(l.Start(), s.pct)
		o := m.end()
		if k < len(m.batches) {
			o = m.bases[k]
		}
		segs := l.Segments()
		n := 0
		for n < len(segs)-1 && segs[n].NextOffset <= o {
			n++
		}
		m.maxStart = segs[n].BaseOffset
		if err := l.DeleteSegmentsBefore(o); err != nil {
			return err
		}
		m.minStart = l.Start()
	case stepReopen:
		return l.Close()
	case stepFill:
		return l.fillZeros()
	}
	return nil
}

// checkRecovered opens the log on the crashed fsys and checks it against m:
// Open succeeds; nothing acknowledged is lost; the log is a run of the
// model's batches, byte for byte, with no batch missing between its start
// and end; deleted segments stay deleted; and the log takes appends and
// survives a clean reopen.
func checkRecovered(t fataler, o Options, fsys vfs.FS, m *crashModel) {
	t.Helper()
	o.FS = fsys
	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open after crash: %v", err)
	}
	start, end := l.Start(), l.End()
	if k := m.firstFrom(m.acked); k > 0 && end < min(m.acked, m.next(k-1)) {
		t.Fatalf("recovered [%d, %d): acknowledged data up to %d lost", start, end, m.acked)
	}
	if start < m.minStart || start > m.maxStart {
		t.Fatalf("recovered start %d, want in [%d, %d]", start, m.minStart, m.maxStart)
	}
	if m.straddled(start) || m.straddled(end) || end > max(m.end(), m.truncatedTo, start) {
		t.Fatalf("recovered [%d, %d) does not start and end at batch boundaries of the model (end %d)", start, end, m.end())
	}
	i, j := m.firstFrom(start), m.firstFrom(end)
	if got, want := readAll(t, l), concat(m.batches[i:j]); !bytes.Equal(got, want) {
		t.Fatalf("recovered [%d, %d): %d bytes differ from the %d appended", start, end, len(got), len(want))
	}
	checkUsableAfterRecovery(t, l, o, concat(m.batches[i:j]))
}

// checkUsableAfterRecovery: a recovered log holding held is durable to its
// end, its segments tile the offsets, it takes an append, and a clean
// reopen reads held and that append. It closes l.
func checkUsableAfterRecovery(t fataler, l *Log, o Options, held []byte) {
	t.Helper()
	end := l.End()
	if l.DurableEnd() != end {
		t.Fatalf("DurableEnd %d after Open, want End %d", l.DurableEnd(), end)
	}
	checkContiguousSegs(t, l.Segments())
	b := makeBatch(end, 1, 10, -1)
	if err := l.Append(b); err != nil {
		t.Fatalf("Append after recovery: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close after recovery: %v", err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if got, want := readAll(t, l), append(held, b...); !bytes.Equal(got, want) {
		t.Fatalf("after recovery, append and clean reopen: %d bytes, want %d", len(got), len(want))
	}
}

func checkContiguousSegs(t fataler, segs []SegmentInfo) {
	t.Helper()
	for i := 1; i < len(segs); i++ {
		if segs[i].BaseOffset != segs[i-1].NextOffset {
			t.Fatalf("segment %d starts at %d, previous ends at %d", i, segs[i].BaseOffset, segs[i-1].NextOffset)
		}
	}
}
