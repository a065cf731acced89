package tier

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	testTopicID = base.TopicID{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7, 8}
	testClock   = clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
)

// makeBatch is a v2 batch at baseOffset of n records of valueBytes each,
// with max timestamp ts, and a valid CRC.
func makeBatch(baseOffset base.Offset, n, valueBytes int, ts int64) []byte {
	var records []byte
	value := bytes.Repeat([]byte{byte(baseOffset)}, valueBytes)
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Value: value}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	b := kmsg.RecordBatch{
		FirstOffset: int64(baseOffset), Magic: 2, LastOffsetDelta: int32(n - 1),
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(n), Records: records,
	}
	out := b.AppendTo(nil)
	out[8], out[9], out[10], out[11] = byte((len(out)-12)>>24), byte((len(out)-12)>>16), byte((len(out)-12)>>8), byte(len(out)-12)
	record.WriteCRC(out)
	return out
}

// emptyBatch is a v2 batch at baseOffset with no records left that still
// covers n offsets, as the log cleaner leaves one: a header alone.
func emptyBatch(baseOffset base.Offset, n int, ts int64) []byte {
	b := kmsg.RecordBatch{
		FirstOffset: int64(baseOffset), Magic: 2, LastOffsetDelta: int32(n - 1),
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	record.WriteCRC(out)
	return out
}

// batchTs is the max timestamp of batch i: growing, with dips, so the
// time index has to skip.
func batchTs(i int) int64 { return 10_000 + int64(i)*10 - int64(i%4)*15 }

// newTestLog is a real log in a temp dir with count batches of 1 to 5
// records (sizes vary, some batches span index intervals), rolled every
// segmentBytes; the active segment holds the last batch alone.
func newTestLog(t *testing.T, count int, segmentBytes int64) *log.Log {
	t.Helper()
	o := log.DefaultOptions(t.TempDir(), testClock)
	o.SegmentBytes = segmentBytes
	l, err := log.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range count {
		if i == count-1 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		valueBytes := 50 + rnd.IntN(400)
		if i%17 == 5 {
			valueBytes = 3000 // a batch bigger than most reads' maxBytes
		}
		if err := l.Append(makeBatch(l.End(), 1+rnd.IntN(5), valueBytes, batchTs(i))); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// events is one ordered trace of metadata writes and store operations.
type events struct {
	mu struct {
		sync.Mutex
		list []string
	}
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mu.list = append(e.mu.list, s)
}

func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.mu.list...)
}

// memMeta is the metadata quorum of one partition in memory: updates go
// through PartitionView.Apply, so an invalid transition fails the test.
type memMeta struct {
	t      *testing.T
	events *events
	mu     struct {
		sync.Mutex
		view PartitionView
		fail func(remotemeta.RemoteSegment) error // refuses an update when it returns an error
	}
}

func newMemMeta(t *testing.T, ev *events) *memMeta {
	m := &memMeta{t: t, events: ev}
	m.mu.view = mustView()
	return m
}

func (m *memMeta) UpdateRemoteSegment(_ context.Context, seg remotemeta.RemoteSegment, _ base.Epoch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.fail != nil {
		if err := m.mu.fail(seg); err != nil {
			return err
		}
	}
	v, err := m.mu.view.Apply(seg)
	if err != nil {
		m.t.Errorf("metadata update refused: %v", err)
		return err
	}
	m.mu.view = v
	m.events.add("meta " + seg.State.String())
	return nil
}

func (m *memMeta) view() PartitionView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.view
}

func (m *memMeta) setFail(f func(remotemeta.RemoteSegment) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.fail = f
}

// rig is a copier, deleter and reader over one store and one memMeta.
type rig struct {
	t       *testing.T
	events  *events
	inner   objstore.Store
	meta    *memMeta
	copier  *Copier
	deleter *Deleter
	reader  *Reader
	inject  func(op objstore.Op, key string) error // nil: no fault
	mu      sync.Mutex                             // guards inject
}

func newRig(t *testing.T, inner objstore.Store) *rig {
	r := &rig{t: t, events: &events{}, inner: inner}
	r.meta = newMemMeta(t, r.events)
	store := objstore.NewFaulty(inner, func(op objstore.Op, key string) error {
		r.mu.Lock()
		inject := r.inject
		r.mu.Unlock()
		if inject != nil {
			if err := inject(op, key); err != nil {
				return err
			}
		}
		if op == objstore.OpPut || op == objstore.OpDelete {
			r.events.add(op.String() + " " + key)
		}
		return nil
	})
	t.Cleanup(func() { store.Close() })
	r.copier = &Copier{Store: store, Meta: r.meta, Random: rand.NewChaCha8([32]byte{7}), Clock: testClock}
	r.deleter = &Deleter{Store: store, Meta: r.meta}
	r.reader = &Reader{Store: store, IndexCacheBytes: 1 << 20}
	return r
}

func (r *rig) setInject(f func(op objstore.Op, key string) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inject = f
}

// copyAll plans and runs the copies of every sealed segment of l.
func (r *rig) copyAll(l *log.Log) []remotemeta.RemoteSegment {
	r.t.Helper()
	return r.copyAllFrom(LogSource{Log: l})
}

// copyAllFrom is copyAll from src, a source of src.Log.
func (r *rig) copyAllFrom(src LogSource) []remotemeta.RemoteSegment {
	r.t.Helper()
	l := src.Log
	tasks := PlanCopies(LocalSegmentsOf(l.Segments()), r.meta.view(), epoch0, l.End(), CopyConfig{}, 0)
	var out []remotemeta.RemoteSegment
	for _, task := range tasks {
		seg, err := r.copier.Copy(r.t.Context(), task, src, testTopicID, testTP, 0)
		if err != nil {
			r.t.Fatalf("Copy %v: %v", task.Range, err)
		}
		out = append(out, seg)
	}
	return out
}

// deletePass plans and runs one pass of deletes with no retention.
func (r *rig) deletePass() error {
	_, err := r.deleter.RunDeletes(r.t.Context(), PlanDeletes(r.meta.view(), retention.Decision{}), 0)
	return err
}

// keys lists the key of every object in the store.
func (r *rig) keys() []string {
	r.t.Helper()
	var out []string
	for _, oi := range r.listing() {
		out = append(out, oi.Key)
	}
	return out
}

// listing lists every object in the store.
func (r *rig) listing() []objstore.ObjectInfo {
	r.t.Helper()
	var out []objstore.ObjectInfo
	if err := r.inner.List(r.t.Context(), "", func(oi objstore.ObjectInfo) error {
		out = append(out, oi)
		return nil
	}); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// segmentFor is the segment of segs holding o.
func segmentFor(t *testing.T, segs []remotemeta.RemoteSegment, o base.Offset) remotemeta.RemoteSegment {
	t.Helper()
	for _, s := range segs {
		if s.Range.Contains(o) {
			return s
		}
	}
	t.Fatalf("no remote segment holds %d", o)
	return remotemeta.RemoteSegment{}
}

// batchRanges describes b's batches, for failure messages.
func batchRanges(b []byte) string {
	var sb strings.Builder
	for it := record.SplitBatches(b); ; {
		_, h, ok := it.Next()
		if !ok {
			break
		}
		fmt.Fprintf(&sb, "[%d,%d) ", h.BaseOffset, h.NextOffset())
	}
	return sb.String()
}
