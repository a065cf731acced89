package log

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// The replacement crash tests run a workload with three replacements on a
// vfs.Mem, crash it before every operation that makes something durable
// (Commit's included), reopen, and check that each replaced range holds
// the old batches or the compacted copy, never a mix within a segment,
// never both, never a hole where either had data.

// replRange is one replacement of the workload.
type replRange struct {
	rg        base.Range
	segBases  []base.Offset // the replaced segments' bases
	old, new  [][]byte
	attempted bool // Commit was called
	committed bool // Commit returned nil
}

// replModel is what the log may hold after a crash.
type replModel struct {
	orig  [][]byte // every batch appended, in order; this workload never truncates
	acked base.Offset
	reps  []*replRange
}

func replaceCrashOptions(fsys vfs.FS) Options {
	o := crashOptions(fsys)
	o.SegmentBytes = 1 << 20 // rolls only where the workload says
	return o
}

// runReplaceWorkload: four sealed segments of four 2-record batches
// ([0,8) [8,16) [16,24) [24,32)) and an active one, synced; one more
// unsynced batch; a replacement of [0,8) that drops and shrinks batches; a
// merge of [8,16) and [16,24) that empties the second one; appends and a
// sync; a reopen; a replacement of [24,32) (loaded from its index files,
// below the recovery point) with a gap at its start; appends, a sync and a
// roll that leave the recovery point (42) short of the sealed segment
// [32,46), and a replacement of that segment, whose Commit must first
// bring the recovery point up; an append and a sync. It stops at the
// first error, which must be the crash.
func runReplaceWorkload(t fataler, o Options, m *replModel) {
	t.Helper()
	var l *Log
	stop := crashStop(t, &l, &m.acked)
	open := func() error {
		var err error
		l, err = Open(o)
		return err
	}
	appendB := func(n int) error {
		for range n {
			b := makeBatch(l.End(), 2, 40, int64(len(m.orig)))
			m.orig = append(m.orig, b) // before the call: a failed Append may have written it
			if err := l.Append(b); err != nil {
				return err
			}
		}
		return nil
	}
	replace := func(bases []base.Offset, plan keepPlan) error {
		r, err := l.BeginReplacement(bases)
		if err != nil {
			return err
		}
		defer r.Abort()
		rep := &replRange{rg: r.Range(), segBases: bases}
		for _, b := range m.orig {
			if rep.rg.Contains(headerOf(b).BaseOffset) {
				rep.old = append(rep.old, b)
			}
		}
		rep.new = applyPlan(rep.old, plan)
		m.reps = append(m.reps, rep)
		for _, b := range rep.new {
			if err := r.Append(b); err != nil {
				return err
			}
		}
		rep.attempted = true
		if err := r.Commit(); err != nil {
			return err
		}
		rep.committed = true
		return nil
	}
	if err := open(); err != nil {
		stop(err)
		return
	}
	for seg := 0; seg < 4; seg++ {
		if stop(appendB(4)) || stop(l.Roll()) {
			return
		}
	}
	if stop(appendB(2)) || stop(l.Sync()) || stop(appendB(1)) ||
		stop(replace([]base.Offset{0}, "dksk")) ||
		stop(replace([]base.Offset{8, 16}, "kdsd"+"dddd")) ||
		stop(appendB(2)) || stop(l.Sync()) ||
		stop(l.Close()) || stop(open()) ||
		stop(replace([]base.Offset{24}, "ddkk")) ||
		stop(appendB(2)) || stop(l.Sync()) || stop(l.Roll()) ||
		stop(replace([]base.Offset{32}, "dkdkkdk")) ||
		stop(appendB(1)) || stop(l.Sync()) {
		return
	}
}

// checkReplaceRecovered opens the log on the crashed fsys and checks it
// against m: what was acknowledged is there; outside the replaced ranges
// the log holds the appended batches, contiguously; each replaced range
// holds the old batches, or (once Commit was called) the compacted copy,
// or the copy followed by the old segments whose offsets the copy had
// dropped entirely (what Open's completion of a swap keeps); the segments
// tile the offsets; the log takes appends and survives a clean reopen.
func checkReplaceRecovered(t fataler, o Options, fsys vfs.FS, m *replModel) {
	t.Helper()
	o.FS = fsys
	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open after crash: %v", err)
	}
	start, end := l.Start(), l.End()
	if start != 0 || end < m.acked {
		t.Fatalf("recovered [%d, %d): want [0, %d or more)", start, end, m.acked)
	}
	got := readBatches(t, l)
	inRep := func(o base.Offset) *replRange {
		for _, r := range m.reps {
			if r.rg.Contains(o) {
				return r
			}
		}
		return nil
	}
	var outside, wantOutside [][]byte
	per := map[*replRange][][]byte{}
	for i, b := range got {
		h := headerOf(b)
		if i > 0 && h.BaseOffset <= headerOf(got[i-1]).LastOffset() {
			t.Fatalf("batch at %d does not start past the one before", h.BaseOffset)
		}
		if r := inRep(h.BaseOffset); r != nil {
			per[r] = append(per[r], b)
		} else {
			outside = append(outside, b)
		}
	}
	for _, b := range m.orig {
		if h := headerOf(b); h.BaseOffset < end && inRep(h.BaseOffset) == nil {
			wantOutside = append(wantOutside, b)
		}
	}
	if !bytes.Equal(concat(outside), concat(wantOutside)) {
		t.Fatalf("recovered [%d, %d): outside the replaced ranges %d batches, want %d", start, end, len(outside), len(wantOutside))
	}
	for _, r := range m.reps {
		if what := r.match(per[r], end); what == "" {
			t.Fatalf("replaced range %v holds %d batches: neither the old %d nor the copy's %d (attempted %v, committed %v)",
				r.rg, len(per[r]), len(r.old), len(r.new), r.attempted, r.committed)
		}
	}
	checkUsableAfterRecovery(t, l, o, concat(got))
}

// match says which copy got holds: "old", "new", "new+old" (the copy, then
// the old segments from one the copy has no batch in), or "" for neither.
func (r *replRange) match(got [][]byte, end base.Offset) string {
	same := func(a, b [][]byte) bool { return len(a) == len(b) && bytes.Equal(concat(a), concat(b)) }
	var oldBelow [][]byte
	for _, b := range r.old {
		if headerOf(b).BaseOffset < end {
			oldBelow = append(oldBelow, b)
		}
	}
	switch {
	case !r.committed && same(got, oldBelow):
		return "old"
	case !r.attempted:
		return ""
	case same(got, r.new):
		return "new"
	case r.committed:
		return ""
	}
	for _, c := range r.segBases[1:] {
		if n := len(r.new); n > 0 && headerOf(r.new[n-1]).NextOffset() > c {
			continue
		}
		mixed := append([][]byte(nil), r.new...)
		for _, b := range r.old {
			if headerOf(b).BaseOffset >= c {
				mixed = append(mixed, b)
			}
		}
		if same(got, mixed) {
			return "new+old"
		}
	}
	return ""
}

// TestReplaceCrashAtEveryPoint crashes the replacement workload before
// each of its crash points, with and without torn unsynced state, checks
// what a reopen finds, and where the crash left a swap to finish, also
// crashes that reopen at each of its own crash points.
func TestReplaceCrashAtEveryPoint(t *testing.T) {
	probe := &crasher{mem: vfs.NewMem()}
	var pm replModel
	runReplaceWorkload(t, replaceCrashOptions(vfs.NewFaulty(probe.mem, probe.inject)), &pm)
	if len(pm.reps) != 4 || !pm.reps[3].committed || pm.reps[3].rg != (base.Range{Start: 32, End: 46}) {
		t.Fatalf("the workload did not run to its end: %+v", pm.reps)
	}
	var commitPoints int
	for _, p := range probe.trace {
		if strings.Contains(p, ".swap") || strings.Contains(p, ".cleaned") || strings.Contains(p, ".deleted") {
			commitPoints++
		}
	}
	if commitPoints < 12 {
		t.Fatalf("only %d crash points touch the swap files:\n%s", commitPoints, strings.Join(probe.trace, "\n"))
	}
	swapsSeen := 0
	eachCrashPoint(t, probe, func(t *testing.T, c *crasher) {
		var m replModel
		runReplaceWorkload(t, replaceCrashOptions(vfs.NewFaulty(c.mem, c.inject)), &m)
		crashed := c.afterCrash()
		checkReplaceRecovered(t, replaceCrashOptions(nil), crashed.Crash(), &m)
		if !hasSwap(crashed) {
			return
		}
		swapsSeen++
		// A second crash while Open finishes the swap.
		p := &crasher{mem: crashed.Crash()}
		if _, err := Open(replaceCrashOptions(vfs.NewFaulty(p.mem, p.inject))); err != nil {
			t.Fatalf("Open: %v", err)
		}
		for r := 1; r <= p.points; r++ {
			c2 := &crasher{mem: crashed.Crash(), crashAt: r, torn: c.torn, seed: c.seed}
			if _, err := Open(replaceCrashOptions(vfs.NewFaulty(c2.mem, c2.inject))); err != nil && c2.crashed == nil {
				t.Fatalf("Open: %v", err)
			}
			checkReplaceRecovered(t, replaceCrashOptions(nil), c2.afterCrash(), &m)
		}
	})
	if swapsSeen == 0 {
		t.Fatal("no crash left a swap for Open to finish")
	}
}

func hasSwap(fsys vfs.FS) bool {
	es, _ := fsys.ReadDir(replaceCrashOptions(nil).Dir) // none before the log's directory exists
	for _, e := range es {
		if _, ok := parseSwapName(e.Name()); ok {
			return true
		}
	}
	return false
}

// truncModel is what a log truncated into a compacted segment may hold
// after a crash.
type truncModel struct {
	to         base.Offset
	pre        [][]byte // the log's batches right before TruncateTo
	newTail    [][]byte // appended after it
	acked      base.Offset
	truncPoint int  // crash points seen before TruncateTo started
	truncDone  bool // TruncateTo returned nil
}

// runTruncGapWorkload builds sealed segments [0,8) [8,16) [16,24) and an
// active one, merges the first two into a copy with gaps and compacts the
// third, then truncates to m.to, appends and syncs.
func runTruncGapWorkload(t fataler, o Options, c *crasher, m *truncModel) {
	t.Helper()
	var l *Log
	stop := crashStop(t, &l, &m.acked)
	var err error
	if l, err = Open(o); stop(err) {
		return
	}
	var orig [][]byte
	appendB := func(n int, into *[][]byte) error {
		for range n {
			b := makeBatch(l.End(), 2, 40, int64(len(orig)))
			orig = append(orig, b)
			*into = append(*into, b)
			if err := l.Append(b); err != nil {
				return err
			}
		}
		return nil
	}
	var all [][]byte
	for range 3 {
		if stop(appendB(4, &all)) || stop(l.Roll()) {
			return
		}
	}
	if stop(appendB(2, &all)) || stop(l.Sync()) {
		return
	}
	replace := func(bases []base.Offset, old [][]byte, plan keepPlan) error {
		r, err := l.BeginReplacement(bases)
		if err != nil {
			return err
		}
		defer r.Abort()
		if err := r.Append(concat(applyPlan(old, plan))); err != nil {
			return err
		}
		return r.Commit()
	}
	if stop(replace([]base.Offset{0, 8}, all[:8], "kdsd"+"dkkd")) || stop(replace([]base.Offset{16}, all[8:12], "kkdk")) {
		return
	}
	m.pre = append(append(applyPlan(all[:8], "kdsd"+"dkkd"), applyPlan(all[8:12], "kkdk")...), all[12:]...)
	keptEnd := base.Offset(0)
	for _, b := range m.pre {
		if h := headerOf(b); h.BaseOffset < m.to {
			keptEnd = h.NextOffset()
		}
	}
	m.acked = min(m.acked, keptEnd) // no batch lies in [keptEnd, to)
	m.truncPoint = c.points
	if err := l.TruncateTo(m.to); stop(err) {
		return
	}
	m.truncDone = true
	if stop(appendB(2, &m.newTail)) || stop(l.Sync()) || stop(appendB(1, &m.newTail)) || stop(l.Close()) {
		return
	}
}

// checkTruncRecovered: every batch below the truncation offset survives;
// after them comes a prefix of what the truncation removed (only if it did
// not complete) or of what was appended after it; nothing acknowledged is
// lost; the segments tile the offsets and the log takes appends.
func checkTruncRecovered(t fataler, o Options, fsys vfs.FS, m *truncModel) {
	t.Helper()
	o.FS = fsys
	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open after crash: %v", err)
	}
	got := readBatches(t, l)
	var below, oldTail [][]byte
	for _, b := range m.pre {
		if headerOf(b).BaseOffset < m.to {
			below = append(below, b)
		} else {
			oldTail = append(oldTail, b)
		}
	}
	isPrefix := func(a, of [][]byte) bool {
		return len(a) <= len(of) && bytes.Equal(concat(a), concat(of[:len(a)]))
	}
	if !isPrefix(below, got) {
		t.Fatalf("after a crash truncating to %d: %d batches, the %d below it are not all there", m.to, len(got), len(below))
	}
	rest := got[len(below):]
	if !(isPrefix(rest, m.newTail) || (!m.truncDone && isPrefix(rest, oldTail))) {
		t.Fatalf("after a crash truncating to %d (done %v): %d batches after it are neither truncated ones nor later appends", m.to, m.truncDone, len(rest))
	}
	if end := l.End(); end < m.acked {
		t.Fatalf("End %d after recovery, below the acknowledged %d", end, m.acked)
	}
	checkContiguousSegs(t, l.Segments())
	b := makeBatch(l.End(), 1, 10, -1)
	if err := l.Append(b); err != nil {
		t.Fatalf("Append after recovery: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close after recovery: %v", err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if again := readBatches(t, l); !bytes.Equal(concat(again), append(concat(got), b...)) {
		t.Fatalf("after recovery, append and clean reopen the log differs")
	}
}

// TestTruncateIntoGapsCrashAtEveryPoint crashes before each crash point of
// a truncation into compacted segments and of what follows it: in a gap
// after a shrunk batch, in a gap at the end of a segment, where the kept
// batches run contiguously to the offset (gaps after it), and at a batch
// after a gap.
func TestTruncateIntoGapsCrashAtEveryPoint(t *testing.T) {
	for _, to := range []base.Offset{6, 14, 20, 22} {
		t.Run(fmt.Sprintf("to_%d", to), func(t *testing.T) {
			probe := &crasher{mem: vfs.NewMem()}
			pm := truncModel{to: to}
			runTruncGapWorkload(t, replaceCrashOptions(vfs.NewFaulty(probe.mem, probe.inject)), probe, &pm)
			if !pm.truncDone {
				t.Fatal("the workload did not get past TruncateTo")
			}
			for k := pm.truncPoint + 1; k <= probe.points+1; k++ {
				for _, torn := range []bool{false, true} {
					seeds := []uint64{0}
					if torn {
						seeds = []uint64{uint64(k), uint64(k) << 20, uint64(k) << 40}
					}
					for _, seed := range seeds {
						c := &crasher{mem: vfs.NewMem(), crashAt: k, torn: torn, seed: seed}
						m := truncModel{to: to}
						runTruncGapWorkload(t, replaceCrashOptions(vfs.NewFaulty(c.mem, c.inject)), c, &m)
						checkTruncRecovered(t, replaceCrashOptions(nil), c.afterCrash(), &m)
					}
				}
			}
		})
	}
}
