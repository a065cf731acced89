package partition

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/record"
)

// FollowerAppend is what AppendAsFollower appended.
type FollowerAppend struct {
	// Appended is the offsets appended: [the log end before, the log end
	// after); empty when the input held no whole batch. Offsets in it that
	// no batch holds are gaps, where the leader's cleaner removed records.
	Appended base.Range
	// Bytes is the length of the input's prefix that was appended, whole
	// batches. What follows it, if anything, was a torn batch (a fetch
	// response cut at its size limit), which the next fetch asks for
	// again.
	Bytes   int
	Batches int
}

// ErrCorruptReplicaBatch refuses an AppendAsFollower whose input holds a
// batch that fails validation (framing, magic, CRC, header consistency,
// leader epoch); nothing is appended. It wraps the record package's error
// when there is one. The fetcher fetches again (Kafka logs a
// CorruptRecordException and retries).
var ErrCorruptReplicaBatch = errors.New("partition: corrupt batch from the leader")

// ErrUnexpectedAppendOffset refuses an AppendAsFollower whose batches do
// not continue the log (Kafka's UnexpectedAppendOffsetException and
// OffsetsOutOfOrderException); nothing is appended. The error is an
// *AppendOffsetError.
var ErrUnexpectedAppendOffset = errors.New("partition: fetched batches do not continue the log")

// AppendOffsetError says which batch started too low. Index 0 is the
// first batch, which must start at or after the log end: one below it
// overlaps the log (the fetcher's offset is stale; it truncates or
// fetches again). A later batch must start at or after the end of the one
// before it. A batch that starts higher leaves a gap, which the log takes
// (the leader's log was compacted there).
type AppendOffsetError struct {
	Want  base.Offset // the log end, or where the batch before ends: the lowest base allowed
	Base  base.Offset // the batch's base offset
	Last  base.Offset // the batch's last offset (inclusive)
	Index int
}

func (e *AppendOffsetError) Error() string {
	return fmt.Sprintf("%v: batch %d holds [%d, %d], want it to start at %d or later", ErrUnexpectedAppendOffset, e.Index, e.Base, e.Last, e.Want)
}

func (e *AppendOffsetError) Unwrap() error { return ErrUnexpectedAppendOffset }

// AppendAsFollower appends the record set of a fetch response from the
// leader, whose offsets and leader epochs the leader assigned: the batches
// are written as they are (no offset or epoch rewrite, no recompression,
// no size limit: the leader accepted them), as Kafka's appendAsFollower
// does. Every batch is validated first as a stored one (record.ValidPrefix:
// framing, magic 2, CRC, codec, record count within the offset span) and
// must carry a leader epoch; their offsets must increase from the log end
// (else *AppendOffsetError): the first batch starts at or after it, each
// later one after the last offset of the one before. A batch may start
// past that, leaving a gap: a leader whose log was compacted serves a
// fetch at an offset it no longer holds with the next batch it has, and
// its compacted segments skip offsets between batches (Kafka's follower
// appends these as they are; log.AppendReplicated). A torn last batch is
// ignored. Nothing is appended unless all of that holds.
//
// The leader-epoch cache takes each batch's epoch by Kafka's rule (a newer
// epoch starts at the batch; see assignFromLeader) and is persisted when
// it changed. Producer state is updated as Open's replay updates it (no
// sequence is refused, transactions open and close, aborts join the
// aborted-transaction index), so the last stable offset follows. Segments
// roll as a leader's appends roll them, with a producer snapshot at each
// new segment. The high watermark does not move (SetHighWatermarkFromLeader
// moves it). Nothing is fdatasynced: the fetcher calls SyncFollower before
// it reports the new log end to the leader.
//
// An empty log whose first fetched batch starts below the log end and ends
// at or past it (the leader's log start fell inside that batch, as
// DeleteRecords leaves it) starts over at the batch's base offset first,
// keeping its log start (as Kafka's
// Partition.appendRecordsToFollowerOrFutureReplica does). A leader refuses
// it with ErrNotFollower.
func (p *Partition) AppendAsFollower(batches []byte) (FollowerAppend, error) {
	n, err := replicaPrefix(batches)
	if err != nil {
		return FollowerAppend{}, err
	}
	in := batches[:n]
	out, snaps, err := p.appendFollower(in)
	if errors.Is(err, errStartOver) {
		out, snaps, err = p.startOverAndAppend(in)
	}
	// Only the newest snapshotsKept survive writeSnapshot's pruning, but
	// on a tiered partition, which keeps one per local segment.
	keep := snaps
	if !p.Tiered() {
		keep = snaps[max(0, len(snaps)-snapshotsKept):]
	}
	for _, s := range keep {
		p.writeSnapshotLogged(s)
	}
	return out, err
}

// errStartOver: the append needs the start over that AppendAsFollower
// describes, which takes more locks than appendFollower holds.
var errStartOver = errors.New("partition: the empty log starts over inside the first batch")

// appendFollower appends in, whole valid batches with contiguous offsets,
// under the partition lock; see AppendAsFollower. The snapshots are for
// the caller to write once the lock is released.
func (p *Partition) appendFollower(in []byte) (FollowerAppend, []*producerSnapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkFollowerLocked(); err != nil {
		return FollowerAppend{}, nil, err
	}
	end := p.log.End()
	if len(in) == 0 {
		return FollowerAppend{Appended: base.Range{Start: end, End: end}}, nil, nil
	}
	h, _ := record.ParseHeader(in) // replicaPrefix checked it
	if h.BaseOffset < end {
		if p.startsOverInside(h, end) {
			return FollowerAppend{}, nil, errStartOver
		}
		return FollowerAppend{}, nil, &AppendOffsetError{Want: end, Base: h.BaseOffset, Last: h.LastOffset()}
	}
	return p.appendFollowerLocked(in)
}

func (p *Partition) checkFollowerLocked() error {
	switch {
	case p.mu.closed:
		return ErrClosed
	case p.mu.role != roleFollower:
		return ErrNotFollower
	}
	return nil
}

// startsOverInside reports whether the log, ending at end, is empty (its
// log start is its end) and the first fetched batch, h, holds end: the
// leader's log start is inside h. Kafka starts such a log over at h.
func (p *Partition) startsOverInside(h record.Header, end base.Offset) bool {
	return p.mu.logStart == end && h.BaseOffset < end && h.LastOffset() >= end
}

// startOverAndAppend is appendFollower for an empty log whose leader's log
// start is inside the first batch: with every lock a truncation takes, the
// log starts over at that batch, keeping its log start, and in is
// appended, so that no reader sees the log in between.
func (p *Partition) startOverAndAppend(in []byte) (FollowerAppend, []*producerSnapshot, error) {
	unlock := p.lockForTruncation()
	defer unlock()
	if err := p.checkFollowerLocked(); err != nil {
		return FollowerAppend{}, nil, err
	}
	end := p.log.End()
	h, _ := record.ParseHeader(in)
	if h.BaseOffset < end {
		if !p.startsOverInside(h, end) { // the log changed since appendFollower looked
			return FollowerAppend{}, nil, &AppendOffsetError{Want: end, Base: h.BaseOffset, Last: h.LastOffset()}
		}
		p.logger.Info("the leader's log start is inside the first fetched batch: starting over at its base",
			"log_start", end, "batch", base.Range{Start: h.BaseOffset, End: h.NextOffset()})
		if err := p.truncateFullyLocked(h.BaseOffset, p.mu.logStart); err != nil {
			return FollowerAppend{}, nil, err
		}
	}
	out, snaps, err := p.appendFollowerLocked(in)
	// The first batch's epoch starts at the log start, as it would had
	// the log start moved into the batch (truncateBefore).
	if err == nil {
		err = p.saveEpochsLocked(p.mu.epochs.truncateBefore(p.mu.logStart))
	}
	return out, snaps, err
}

// appendFollowerLocked appends in, whose first batch starts at or after
// the log end. Batches that cannot roll the active segment
// (activeEstimate) are appended together in one log.AppendReplicated; one
// that may roll is appended alone, so that the producer snapshot at a new
// segment's base (the log end before the batch, with any gap before the
// batch inside the new segment; see refreshActiveLocked) holds the state
// before it, as a leader's append takes it.
func (p *Partition) appendFollowerLocked(in []byte) (FollowerAppend, []*producerSnapshot, error) {
	out := FollowerAppend{Appended: base.Range{Start: p.log.End()}}
	cfg, now := p.mu.cfg, p.opts.Clock.Now()
	rr := recordReaders.Get().(*record.RecordReader)
	defer recordReaders.Put(rr)
	var snaps []*producerSnapshot
	epochsChanged := false
	apply := func(b []byte) {
		for it := record.SplitBatches(b); ; {
			batch, h, ok := it.Next()
			if !ok {
				return
			}
			epochsChanged = p.applyReplicaBatchLocked(batch, h, rr) || epochsChanged
			out.Batches++
		}
	}
	// [pending, pos) is appended to nothing yet; its batches cannot roll.
	pending, pos := 0, 0
	var err error
	for it := record.SplitBatches(in); err == nil; {
		batch, h, ok := it.Next()
		if !ok {
			break
		}
		if !p.mu.active.mayRoll(cfg, len(batch), h.LastOffset(), now) {
			p.mu.active.bytes += int64(len(batch))
			p.mu.active.batches++
			pos += len(batch)
			continue
		}
		if err = p.appendRunLocked(in[pending:pos], apply); err != nil {
			break
		}
		end := p.log.End()
		if err = p.log.AppendReplicated(batch); err != nil {
			break
		}
		if at, rolled := p.refreshActiveLocked(end, h.BaseOffset, now); rolled {
			snaps = append(snaps, p.producerSnapshotLocked(at))
		}
		apply(batch)
		pos += len(batch)
		pending = pos
	}
	if err == nil {
		err = p.appendRunLocked(in[pending:pos], apply)
	}
	out.Appended.End = p.log.End()
	out.Bytes = pos
	err = errors.Join(err, p.saveEpochsLocked(epochsChanged))
	if out.Batches > 0 {
		p.notifyLocked()
	}
	if err != nil {
		return out, snaps, fmt.Errorf("partition %v: appending as follower at %d: %w", p.opts.TP, out.Appended.End, err)
	}
	return out, snaps, nil
}

// appendRunLocked appends run, batches none of which rolls the active
// segment, and applies them.
func (p *Partition) appendRunLocked(run []byte, apply func([]byte)) error {
	if len(run) == 0 {
		return nil
	}
	if err := p.log.AppendReplicated(run); err != nil {
		return err
	}
	apply(run)
	return nil
}

// applyReplicaBatchLocked applies one appended batch of the leader's to
// the leader-epoch cache, the producer state and the aborted-transaction
// list, as Open's replay does, and counts its records as unflushed. It
// reports whether the epoch cache changed.
func (p *Partition) applyReplicaBatchLocked(batch []byte, h record.Header, rr *record.RecordReader) bool {
	changed := p.mu.epochs.assignFromLeader(base.Epoch(h.PartitionLeaderEpoch), h.BaseOffset)
	if ct, ok := replayBatch(p.mu.producers, batch, h, rr); ok && ct.Aborted {
		p.mu.aborted = append(p.mu.aborted, abortedTxnOf(p.mu.producers, ct))
		p.mu.abortedNext++
	}
	if p.mu.unflushedMsgs == 0 {
		p.mu.oldestUnflushedAt = p.opts.Clock.Now()
	}
	p.mu.unflushedMsgs += int64(h.NumRecords)
	return changed
}

// replicaPrefix validates a fetched record set and returns the length of
// its whole batches: each valid as a stored batch, with a leader epoch,
// each starting at or after the end of the one before (a gap between them
// is the leader's cleaner's). Bytes after the last whole batch must be a
// torn batch (tornTail), which is left out.
func replicaPrefix(b []byte) (int, error) {
	it := record.SplitBatches(b)
	var next base.Offset
	for i := 0; ; i++ {
		batch, h, ok := it.Next()
		if !ok {
			break
		}
		if _, err := record.ValidPrefix(batch); err != nil {
			return 0, fmt.Errorf("%w: batch %d at offset %d: %w", ErrCorruptReplicaBatch, i, h.BaseOffset, err)
		}
		if h.PartitionLeaderEpoch < 0 {
			return 0, fmt.Errorf("%w: batch %d at offset %d has no leader epoch (%d)", ErrCorruptReplicaBatch, i, h.BaseOffset, h.PartitionLeaderEpoch)
		}
		if i > 0 && h.BaseOffset < next {
			return 0, &AppendOffsetError{Want: next, Base: h.BaseOffset, Last: h.LastOffset(), Index: i}
		}
		next = h.NextOffset()
	}
	if err := it.Err(); err != nil && !tornTail(b[it.Offset():]) {
		return 0, fmt.Errorf("%w: bytes after offset %d: %w", ErrCorruptReplicaBatch, next, err)
	}
	return it.Offset(), nil
}

// tornTail reports whether b, bytes after the last whole batch of a fetch
// response, is a batch cut short, as a leader that stops a response at its
// size limit leaves it: fewer bytes than a batch header (which no batch
// fits in), or a header with magic 2 and a sane length that runs past b.
// Anything else is corrupt.
func tornTail(b []byte) bool {
	if len(b) < record.HeaderSize {
		return true
	}
	h, _ := record.ParseHeader(b)
	return h.Magic == 2 && h.Size() >= record.HeaderSize && h.Size() > len(b)
}

// SyncFollower makes everything appended so far durable and returns the
// log end it covers. A follower calls it before it fetches again, so that
// the fetch offset it reports to the leader (which may then count it in
// the high watermark and acknowledge acks=all producers) is durable here.
func (p *Partition) SyncFollower() (base.Offset, error) {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return 0, ErrClosed
	}
	end := p.log.End()
	p.mu.unflushedMsgs = 0
	p.mu.Unlock()
	if err := p.log.SyncTo(end); err != nil {
		if errors.Is(err, log.ErrClosed) {
			return 0, ErrClosed
		}
		return 0, err
	}
	return end, nil
}
