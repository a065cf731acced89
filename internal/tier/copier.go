package tier

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// MetadataWriter records remote segment state in the metadata quorum, as
// the leader of seg.TP at leaderEpoch. *metadata.Store satisfies it.
type MetadataWriter interface {
	UpdateRemoteSegment(ctx context.Context, seg remotemeta.RemoteSegment, leaderEpoch base.Epoch) error
}

// SegmentReader is a sealed local segment open for upload.
type SegmentReader interface {
	io.ReaderAt
	io.Closer
}

// SegmentSource is what the copier needs of a partition.
type SegmentSource interface {
	// OpenSegment opens the sealed segment whose base offset is b: whole
	// batches in [0, sizeBytes). The reader stays valid if the segment is
	// deleted locally while it is open (a duplicated descriptor); the
	// caller closes it. The active segment is refused.
	OpenSegment(b base.Offset) (r SegmentReader, sizeBytes int64, err error)
	// ProducerSnapshot returns the producer-state snapshot valid at offset
	// at (the end of an upload), if the partition has one.
	ProducerSnapshot(at base.Offset) ([]byte, bool)
	// AbortedTxns returns the aborted transactions whose ABORT marker
	// (LastOffset) is in markers, ascending by LastOffset: the entries of
	// the transaction index of an upload of markers. nil when none.
	AbortedTxns(markers base.Range) []AbortedTxn
}

// LogSource is the SegmentSource of a local log. Snapshots may be nil (no
// producer snapshots are uploaded), and so may Aborted (the log has no
// aborted transaction).
type LogSource struct {
	Log       *log.Log
	Snapshots func(at base.Offset) ([]byte, bool)
	// Aborted answers as a read_committed fetch of [from, upTo) asks the
	// partition: every aborted transaction with LastOffset >= from and
	// FirstOffset < upTo, ascending by LastOffset (partition.AbortedTxns).
	Aborted func(from, upTo base.Offset) []AbortedTxn
}

func (s LogSource) OpenSegment(b base.Offset) (SegmentReader, int64, error) {
	seg, err := s.Log.SealedSegment(b)
	if err != nil {
		return nil, 0, err
	}
	return seg.File, seg.Info.SizeBytes, nil
}

func (s LogSource) ProducerSnapshot(at base.Offset) ([]byte, bool) {
	if s.Snapshots == nil {
		return nil, false
	}
	return s.Snapshots(at)
}

// AbortedTxns keeps, of what Aborted answers for markers, the
// transactions whose marker is in markers (Kafka's rule for which
// segment's index holds an entry); Aborted also answers those that end
// later but began inside markers.
func (s LogSource) AbortedTxns(markers base.Range) []AbortedTxn {
	if s.Aborted == nil {
		return nil
	}
	var out []AbortedTxn
	for _, t := range s.Aborted(markers.Start, markers.End) {
		if markers.Contains(t.LastOffset) {
			out = append(out, t)
		}
	}
	return out
}

// Copier executes CopyTasks: it uploads one local segment (or its tail) to
// the object store and records each step in the metadata quorum. Every
// field but Quota and Stats is required. Safe for concurrent use on different
// partitions; one partition's copies run one at a time (the tier loop).
type Copier struct {
	Store  objstore.Store
	Meta   MetadataWriter
	Random io.Reader   // draws segment ids
	Clock  clock.Clock // times each copy, for its errors
	// Quota is remote.log.manager.copy.max.bytes.per.second (KIP-956),
	// shared by every partition's uploads; nil is unlimited. Each object
	// waits for its bytes BEFORE its Put: the store never receives more
	// than the rate allows beyond the quota's one-second burst, and an
	// attempt that then fails has still been charged (it used the
	// bandwidth, or may have).
	Quota *ByteRate
	Stats *Stats // counts attempts, failures and bytes; nil counts nothing
}

// danglingWriteTimeout bounds the best-effort DANGLING write after a failed
// copy, which runs even when the copy's context has ended: if it does not
// land, the segment stays COPY_STARTED, which the next pass deletes too.
const danglingWriteTimeout = 10 * time.Second

// danglingWriteStoppedTimeout bounds the DANGLING write of a copy whose
// pass was stopped (the partition resigned, the broker is stopping): a
// quorum that answers does so in milliseconds, and one that cannot (every
// node of a cluster stopping at once has no leader) must not hold the stop
// for danglingWriteTimeout. Broker.Close waits for the pass.
const danglingWriteStoppedTimeout = time.Second

// danglingWriteBudget is how long the DANGLING write of a failed copy or
// delete may take, given whether its pass was stopped.
func danglingWriteBudget(stopped bool) time.Duration {
	if stopped {
		return danglingWriteStoppedTimeout
	}
	return danglingWriteTimeout
}

// danglingWriteContext is the context of the DANGLING write after a copy
// or delete that failed under ctx: it outlives ctx, by its budget.
func danglingWriteContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), danglingWriteBudget(ctx.Err() != nil))
}

// Copy uploads task's batches of the partition tp (topic topicID) and
// returns the COPY_FINISHED segment. In order: it reads the local segment
// and builds the indexes from the batches of task.Range; draws a fresh
// segment id; writes COPY_STARTED (before any object, so every object has
// metadata); puts the offset index, time index, transaction index (only
// if an ABORT marker is in task.Range: src.AbortedTxns, checked before
// COPY_STARTED), leader-epoch checkpoint, producer snapshot (if src has
// one) and the .log last, each after waiting for the copy quota; writes
// COPY_FINISHED. A failure after COPY_STARTED marks the segment DANGLING
// (best effort; the next pass's PlanDeletes removes its objects either
// way) and returns the error, wrapped: objstore.IsTransient classifies it.
//
// The remote segment's SizeBytes and MaxTimestampMs are those of the bytes
// uploaded, so a partial task's metadata describes its object.
func (c *Copier) Copy(ctx context.Context, task CopyTask, src SegmentSource, topicID base.TopicID,
	tp base.TopicPartition, leaderEpoch base.Epoch,
) (remotemeta.RemoteSegment, error) {
	c.mustValid()
	c.Stats.copyStarted(tp)
	started := c.Clock.Now()
	fail := func(what string, err error) (remotemeta.RemoteSegment, error) {
		c.Stats.copyFailed(tp)
		return remotemeta.RemoteSegment{}, fmt.Errorf("tier: copy %v %v after %v: %s: %w",
			tp, task.Range, c.Clock.Now().Sub(started), what, err)
	}
	r, sizeBytes, err := src.OpenSegment(task.Segment.BaseOffset)
	if err != nil {
		return fail("open local segment", err)
	}
	defer r.Close()
	up, err := scanUpload(r, sizeBytes, task)
	if err != nil {
		return fail("read local segment", err)
	}
	aborted := src.AbortedTxns(task.Range)
	if err := checkTxnIndex(aborted, task.Range); err != nil {
		return fail("transaction index", err)
	}
	txnIndex := encodeTxnIndex(aborted)
	snapshot, hasSnapshot := src.ProducerSnapshot(task.Range.End)
	id, err := c.newID()
	if err != nil {
		return fail("draw a segment id", err)
	}
	seg := task.Started(id, topicID, tp)
	seg.SizeBytes, seg.MaxTimestampMs = up.sizeBytes, up.maxTs
	if err := c.Meta.UpdateRemoteSegment(ctx, seg, leaderEpoch); err != nil {
		return fail("record "+remotemeta.CopyStarted.String(), err)
	}
	checkpoint := encodeLeaderEpochCheckpoint(seg.LeaderEpochs)
	objects := []struct {
		suffix Suffix
		body   io.ReadSeeker // a seeker, so a store may retry the put
		size   int64
		skip   bool
	}{
		{SuffixIndex, bytes.NewReader(up.offsetIndex), int64(len(up.offsetIndex)), false},
		{SuffixTimeIndex, bytes.NewReader(up.timeIndex), int64(len(up.timeIndex)), false},
		{SuffixTxnIndex, bytes.NewReader(txnIndex), int64(len(txnIndex)), len(txnIndex) == 0},
		{SuffixLeaderEpoch, bytes.NewReader(checkpoint), int64(len(checkpoint)), false},
		{SuffixSnapshot, bytes.NewReader(snapshot), int64(len(snapshot)), !hasSnapshot},
		{SuffixLog, io.NewSectionReader(r, up.startPos, up.sizeBytes), up.sizeBytes, false},
	}
	for _, o := range objects {
		if o.skip {
			continue
		}
		key := SegmentKey(seg, o.suffix)
		if err := c.Quota.Wait(ctx, o.size); err != nil {
			c.markDangling(ctx, seg, leaderEpoch)
			return fail("wait for the copy quota before "+key, err)
		}
		if err := c.Store.Put(ctx, key, o.body, o.size); err != nil {
			c.markDangling(ctx, seg, leaderEpoch)
			return fail("put "+key, err)
		}
	}
	finished, err := seg.Transition(remotemeta.CopyFinished)
	if err == nil {
		err = c.Meta.UpdateRemoteSegment(ctx, finished, leaderEpoch)
	}
	if err != nil {
		c.markDangling(ctx, seg, leaderEpoch)
		return fail("record "+remotemeta.CopyFinished.String(), err)
	}
	c.Stats.copied(tp, finished.SizeBytes)
	return finished, nil
}

func (c *Copier) mustValid() {
	if c.Store == nil || c.Meta == nil || c.Random == nil || c.Clock == nil {
		panic("tier.Copier: Store, Meta, Random and Clock are required")
	}
}

// newID draws a fresh, non-zero segment id.
func (c *Copier) newID() (remotemeta.SegmentID, error) {
	for range 4 {
		var id remotemeta.SegmentID
		if _, err := io.ReadFull(c.Random, id[:]); err != nil {
			return id, err
		}
		if !id.IsZero() {
			return id, nil
		}
	}
	return remotemeta.SegmentID{}, fmt.Errorf("tier: Random drew only zero segment ids")
}

// markDangling records that seg's copy failed, so the next pass deletes its
// objects. Best effort: a write that does not land leaves COPY_STARTED (or
// COPY_FINISHED, if that write landed unseen), which is as safe.
func (c *Copier) markDangling(ctx context.Context, seg remotemeta.RemoteSegment, leaderEpoch base.Epoch) {
	d, err := seg.Transition(remotemeta.Dangling)
	if err != nil {
		panic(fmt.Sprintf("tier: mark %v dangling: %v", seg.ID, err))
	}
	ctx, cancel := danglingWriteContext(ctx)
	defer cancel()
	_ = c.Meta.UpdateRemoteSegment(ctx, d, leaderEpoch)
}

// upload is what scanUpload found: where task's batches are in the local
// segment and their indexes, relative to the uploaded object.
type upload struct {
	startPos, sizeBytes    int64
	maxTs                  int64
	offsetIndex, timeIndex []byte
}

// scanUpload walks the batch headers of the local segment r (sizeBytes
// long) to find the batches of task.Range: they must start at a batch
// boundary and run contiguously to the end of the segment, which must be
// task.Range.End. It checks the framing of every header it reads; the
// local log checked the CRCs when the batches were appended or recovered.
func scanUpload(r io.ReaderAt, sizeBytes int64, task CopyTask) (upload, error) {
	if task.Range.Empty() || task.Range.End != task.Segment.NextOffset {
		return upload{}, fmt.Errorf("task range %v does not end its segment %v", task.Range, task.Segment.Range())
	}
	var scratch [record.HeaderSize]byte
	pos := int64(0)
	for {
		if pos == sizeBytes {
			return upload{}, fmt.Errorf("no batch starts at %d in the segment", task.Range.Start)
		}
		h, err := readHeaderAt(r, pos, sizeBytes, scratch[:])
		if err != nil {
			return upload{}, err
		}
		if h.BaseOffset >= task.Range.Start {
			if h.BaseOffset != task.Range.Start {
				return upload{}, fmt.Errorf("offset %d is not a batch boundary (next batch at %d)", task.Range.Start, h.BaseOffset)
			}
			break
		}
		pos += int64(h.Size())
	}
	up := upload{startPos: pos}
	b := newIndexBuilder(task.Range.Start)
	for pos < sizeBytes {
		h, err := readHeaderAt(r, pos, sizeBytes, scratch[:])
		if err != nil {
			return upload{}, err
		}
		if err := b.add(h); err != nil {
			return upload{}, fmt.Errorf("at position %d: %w", pos, err)
		}
		pos += int64(h.Size())
	}
	if b.next != task.Range.End {
		return upload{}, fmt.Errorf("segment batches end at %d, task at %d", b.next, task.Range.End)
	}
	up.sizeBytes = pos - up.startPos
	up.maxTs = b.maxTs
	up.offsetIndex, up.timeIndex = b.finish()
	return up, nil
}

// readHeaderAt reads the header of the batch at pos of r, limit bytes
// long, and checks its framing.
func readHeaderAt(r io.ReaderAt, pos, limit int64, scratch []byte) (record.Header, error) {
	if limit-pos < record.HeaderSize {
		return record.Header{}, fmt.Errorf("%d bytes at position %d, short of a batch header", limit-pos, pos)
	}
	if _, err := r.ReadAt(scratch[:record.HeaderSize], pos); err != nil {
		return record.Header{}, fmt.Errorf("read header at %d: %w", pos, err)
	}
	h, err := record.ParseHeader(scratch)
	if err != nil {
		return h, err
	}
	if err := checkFraming(h, limit-pos); err != nil {
		return h, fmt.Errorf("at position %d: %w", pos, err)
	}
	return h, nil
}

// checkFraming checks what a header alone says, given avail bytes from the
// batch's start.
func checkFraming(h record.Header, avail int64) error {
	switch {
	case h.Length < record.HeaderSize-record.LogOverhead:
		return fmt.Errorf("batch length %d below a header", h.Length)
	case int64(h.Size()) > avail:
		return fmt.Errorf("batch of %d bytes but %d left", h.Size(), avail)
	case h.Magic != 2:
		return fmt.Errorf("batch magic %d", h.Magic)
	case h.LastOffsetDelta < 0 || h.BaseOffset < 0 || h.LastOffset() < h.BaseOffset:
		return fmt.Errorf("batch offsets %d+%d", h.BaseOffset, h.LastOffsetDelta)
	}
	return nil
}

// LocalSegmentsOf describes a local log's segments (log.Segments) for
// PlanCopies. A segment without batches has MaxTimestampMs 0; only the
// active segment can be one.
func LocalSegmentsOf(infos []log.SegmentInfo) []LocalSegment {
	out := make([]LocalSegment, len(infos))
	for i, s := range infos {
		out[i] = LocalSegment{
			BaseOffset: s.BaseOffset, NextOffset: s.NextOffset, SizeBytes: s.SizeBytes,
			MaxTimestampMs: s.MaxTimestamp, Active: s.Active,
		}
	}
	return out
}
