package tier

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// passValueBytes is the value size of every test batch: one-record
// batches of one size, so a log's size is its offset count times
// passBatchBytes.
const passValueBytes = 100

var passBatchBytes = int64(len(makeBatch(0, 1, passValueBytes, 10_000)))

// passLocal is the partition's side of a pass over a real log, as the
// partition's retention executor applies a decision: the log start moves
// first (never back), then the local segments go.
type passLocal struct {
	log      *log.Log
	logStart base.Offset
	failNext error // returned by the next ApplyLocal, which then does nothing
}

func (p *passLocal) Segments() []LocalSegment { return LocalSegmentsOf(p.log.Segments()) }
func (p *passLocal) Source() SegmentSource    { return LogSource{Log: p.log} }

func (p *passLocal) ApplyLocal(d retention.Decision) error {
	if err := p.failNext; err != nil {
		p.failNext = nil
		return err
	}
	if d.NewLogStart < p.logStart {
		return fmt.Errorf("log start would move back from %d to %d", p.logStart, d.NewLogStart)
	}
	p.logStart = d.NewLogStart
	return p.log.DeleteSegmentsBefore(d.DeleteLocalBefore)
}

// passViews serves the quorum's view, or an unloaded one (a fresh leader).
type passViews struct {
	meta     *memMeta
	unloaded bool
}

func (v *passViews) View() PartitionView {
	if v.unloaded {
		return PartitionView{}
	}
	return v.meta.view()
}

// passHarness is one partition with a real log in a temp dir, a faulty
// in-memory bucket and an in-memory quorum (the rig), driven by Pass.
type passHarness struct {
	t       *testing.T
	rig     *rig
	local   *passLocal
	views   *passViews
	lineage []base.EpochStart
	policy  retention.Policy
}

// newPassHarness opens a log that rolls every segmentBatches batches
// (0: only when rolled by hand).
func newPassHarness(t *testing.T, segmentBatches int, policy retention.Policy) *passHarness {
	t.Helper()
	o := log.DefaultOptions(t.TempDir(), testClock)
	if segmentBatches > 0 {
		o.SegmentBytes = int64(segmentBatches) * passBatchBytes
	}
	l, err := log.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	r := newRig(t, objstore.NewMem())
	return &passHarness{
		t: t, rig: r, local: &passLocal{log: l}, views: &passViews{meta: r.meta},
		lineage: epoch0, policy: policy,
	}
}

func (h *passHarness) log() *log.Log { return h.local.log }

// close closes the log before the test ends, so that the many logs of a
// property test do not hold their files open together.
func (h *passHarness) close() {
	if err := h.log().Close(); err != nil {
		h.t.Error(err)
	}
}

// produce appends n one-record batches.
func (h *passHarness) produce(n int) {
	h.t.Helper()
	for range n {
		end := h.log().End()
		if err := h.log().Append(makeBatch(end, 1, passValueBytes, 10_000+int64(end))); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *passHarness) roll() {
	h.t.Helper()
	if err := h.log().Roll(); err != nil {
		h.t.Fatal(err)
	}
}

// pass runs Pass with everything appended committed and stable.
func (h *passHarness) pass() PassReport {
	end := h.log().End()
	in := PassInput{
		TopicID: testTopicID, TP: testTP, Lineage: h.lineage,
		LastStableOffset: end, HighWatermark: end, LogStart: h.local.logStart,
		Policy: h.policy, NowMs: 20_000,
	}
	return Pass(h.t.Context(), in, PassDeps{Local: h.local, Views: h.views, Copier: h.rig.copier, Deleter: h.rig.deleter})
}

// sizeBytes is the log's size, [logStart, logEnd) counted once.
func (h *passHarness) sizeBytes() int64 {
	return int64(h.log().End()-h.local.logStart) * passBatchBytes
}

// unreadable returns the first offset of [logStart, logEnd) that neither
// the local log nor a COPY_FINISHED remote segment serves.
func (h *passHarness) unreadable() error {
	view := h.rig.meta.view()
	for o := h.local.logStart; o < h.log().End(); o++ {
		var b []byte
		var err error
		if o >= h.log().Start() {
			b, err = h.log().Read(o, 1, nil)
		} else {
			i := slices.IndexFunc(view.Segments(), func(s remotemeta.RemoteSegment) bool {
				return s.State == remotemeta.CopyFinished && s.Range.Contains(o)
			})
			if i < 0 {
				return fmt.Errorf("offset %d (local log start %d) is in no remote segment", o, h.log().Start())
			}
			b, err = h.rig.reader.Read(h.t.Context(), view.Segments()[i], o, 1)
		}
		if err != nil {
			return fmt.Errorf("read offset %d: %w", o, err)
		}
		it := record.SplitBatches(b)
		if _, hd, ok := it.Next(); !ok || hd.BaseOffset > o || hd.NextOffset() <= o {
			return fmt.Errorf("read offset %d: got batches %s", o, batchRanges(b))
		}
	}
	return nil
}

// orphans lists the objects in the bucket that no COPY_FINISHED segment
// owns, and the segments left in a state with a future.
func (h *passHarness) orphans() []string {
	owned := map[string]bool{}
	var out []string
	for _, s := range h.rig.meta.view().Segments() {
		switch s.State {
		case remotemeta.CopyFinished:
			for _, suf := range Suffixes {
				owned[SegmentKey(s, suf)] = true
			}
		case remotemeta.DeleteFinished:
		default:
			out = append(out, fmt.Sprintf("segment %v %v %v", s.ID, s.Range, s.State))
		}
	}
	for _, k := range h.rig.keys() {
		if !owned[k] {
			out = append(out, "object "+k)
		}
	}
	return out
}

// mark returns the length of the trace, to look at one pass's events.
func (h *passHarness) mark() int { return len(h.rig.events.all()) }

// eventsSince returns the store operations ("put key", "delete key") and
// metadata writes traced since mark.
func (h *passHarness) eventsSince(mark int) []string { return h.rig.events.all()[mark:] }

// failPut makes every put of a key containing part fail, after the object
// landed (the client gave up on a Put that the bucket finished).
func (h *passHarness) failPut(part string) {
	h.rig.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpPut && strings.Contains(key, part) {
			return objstore.After(errors.New("injected: connection reset"))
		}
		return nil
	})
}

// failDelete makes every delete of a key containing part fail.
func (h *passHarness) failDelete(part string) {
	h.rig.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpDelete && strings.Contains(key, part) {
			return errors.New("injected: 503 slow down")
		}
		return nil
	})
}

// offsetKey is the 20-digit base offset part of an object key.
func offsetKey(o base.Offset) string { return fmt.Sprintf("/%020d-", o) }

func copiedRanges(segs []remotemeta.RemoteSegment) []base.Range {
	var out []base.Range
	for _, s := range segs {
		out = append(out, s.Range)
	}
	return out
}
