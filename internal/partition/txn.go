package partition

import (
	"fmt"
	"sort"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// AbortedTxn is one aborted transaction, as Kafka's AbortedTxn (the
// transaction index entry) holds it: the producer's transactional batches
// in [FirstOffset, LastOffset] (inclusive; LastOffset is the ABORT
// marker's offset) are aborted. LastStableOffset is the last stable offset
// right after the marker: the first offset of the oldest transaction still
// open then, or LastOffset+1 when none was.
type AbortedTxn struct {
	ProducerID       base.ProducerID
	FirstOffset      base.Offset
	LastOffset       base.Offset
	LastStableOffset base.Offset
}

// abortedTxnOf is the index entry of ct, which ps has just completed (the
// marker is applied), as Kafka's ProducerStateManager.lastStableOffset
// computes it.
func abortedTxnOf(ps *producers.State, ct producers.CompletedTxn) AbortedTxn {
	lso := ct.LastOffset + 1
	if first, ok := ps.FirstUnstable(); ok {
		lso = first
	}
	return AbortedTxn{ProducerID: ct.ProducerID, FirstOffset: ct.FirstOffset, LastOffset: ct.LastOffset, LastStableOffset: lso}
}

// AbortedTxns answers a read_committed fetch of [from, upTo) as Kafka's
// collectAbortedTxns does: every aborted transaction with LastOffset >=
// from and FirstOffset < upTo, in marker order. nil when there is none.
// Transactions wholly below the log start are no longer known.
func (p *Partition) AbortedTxns(from, upTo base.Offset) []AbortedTxn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return collectAborted(p.mu.aborted, from, upTo)
}

// collectAborted is AbortedTxns over list, which ascends by LastOffset. It
// stops at the first entry whose LastStableOffset reaches upTo: every later
// transaction began at or after that offset (it was either open then, or
// began after the marker), so none can start below upTo.
func collectAborted(list []AbortedTxn, from, upTo base.Offset) []AbortedTxn {
	i := sort.Search(len(list), func(i int) bool { return list[i].LastOffset >= from })
	var out []AbortedTxn
	for _, t := range list[i:] {
		if t.FirstOffset < upTo {
			out = append(out, t)
		}
		if t.LastStableOffset >= upTo {
			break
		}
	}
	return out
}

// OpenTxns lists the partition's open transactions, ascending by first
// offset (for DescribeProducers and DescribeTransactions).
func (p *Partition) OpenTxns() []producers.OpenTxn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.producers.OpenTxns()
}

// HasOpenTxn reports whether producer pid has an open transaction here at
// epoch: its next transactional batch at that epoch continues it rather
// than opening one. A batch at another epoch opens a transaction: under
// transaction version 2 every transaction has its own epoch, and the one
// open here at the epoch before may be the previous transaction, whose
// marker is not written yet (the coordinator must then hold the next one
// back until it is).
func (p *Partition) HasOpenTxn(pid base.ProducerID, epoch int16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.openTxnLocked(pid, epoch)
}

func (p *Partition) openTxnLocked(pid base.ProducerID, epoch int16) bool {
	e, ok := p.mu.producers.Entry(pid)
	if !ok {
		return false
	}
	_, open := e.CurrentTxnFirstOffset.Get()
	return open && e.Epoch == epoch
}

// AppendMarker writes a transaction marker for producer pid (COMMIT when
// commit, else ABORT), as a transaction coordinator does with
// WriteTxnMarkers: a control batch exactly as Kafka writes one, stamped
// with the clock's now. It is refused, and nothing written, with
// INVALID_PRODUCER_EPOCH when epoch is older than the producer's, and with
// TRANSACTION_COORDINATOR_FENCED when coordinatorEpoch is older than that
// of the producer's last marker (both *producers.CodeError), and with
// ErrNotEnoughReplicas when min.insync.replicas exceeds the in-sync
// replicas (markers are written with acks=all), and with ErrNotLeader on
// a follower. On success
// the producer's open transaction is closed (an aborted one joins the
// aborted-transaction index), the last stable offset moves, and the
// marker's offset is returned with a wait function that fdatasyncs the
// log through the marker: the caller must call it and report success only
// when it returns nil.
//
// The wait function returns nil once the marker is fdatasynced and, while
// followers are in the ISR, committed (as AppendFromCoordinator's).
func (p *Partition) AppendMarker(pid base.ProducerID, epoch int16, commit bool, coordinatorEpoch int32) (base.Offset, func() error, error) {
	m := producers.Marker{ProducerID: pid, Epoch: epoch, Commit: commit, CoordinatorEpoch: coordinatorEpoch}
	at, snap, err := p.appendMarker(m)
	if err != nil {
		return 0, nil, err
	}
	p.writeSnapshotLogged(snap)
	return at, func() error { return p.syncAndReplicate(at + 1) }, nil
}

func (p *Partition) appendMarker(m producers.Marker) (base.Offset, *producerSnapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return 0, nil, ErrClosed
	case p.mu.role != roleLeader:
		return 0, nil, ErrNotLeader
	}
	// Markers are written with acks=all, as Kafka's WriteTxnMarkers does.
	if p.mu.cfg.MinInsyncReplicas > p.mu.inSync {
		return 0, nil, fmt.Errorf("%w: %d in sync, min.insync.replicas=%d", ErrNotEnoughReplicas, p.mu.inSync, p.mu.cfg.MinInsyncReplicas)
	}
	if err := p.mu.producers.CheckMarker(m); err != nil {
		return 0, nil, fmt.Errorf("partition %v: marker at %d: %w", p.opts.TP, p.log.End(), err)
	}
	p.forgetVerificationLocked(m.ProducerID)
	cfg := p.mu.cfg
	now := p.opts.Clock.Now()
	nowMs := now.UnixMilli()
	batch := record.AppendEndTxnMarker(nil, int64(m.ProducerID), m.Epoch,
		record.EndTxnMarker{Commit: m.Commit, CoordinatorEpoch: m.CoordinatorEpoch}, nowMs)
	if cfg.LogAppendTime {
		record.SetLogAppendTime(batch, nowMs)
	}
	at, snap, err := p.writeLocked(batch, 0, cfg, now)
	if err != nil {
		return 0, nil, err
	}
	if ct, ok := p.mu.producers.ApplyMarker(m, at, nowMs); ok && ct.Aborted {
		p.mu.aborted = append(p.mu.aborted, abortedTxnOf(p.mu.producers, ct))
		p.mu.abortedNext++
	}
	p.advanceAloneLocked()
	// The caller's wait syncs everything written so far.
	p.mu.unflushedMsgs = 0
	p.notifyLocked()
	return at, snap, nil
}

// AppendFromCoordinator appends a batch that a coordinator built for
// itself (Kafka's origin COORDINATOR), such as the TxnOffsetCommit records
// of a transaction on __consumer_offsets: it carries the producer's id and
// epoch and the transactional bit, but no sequence (base sequence -1).
// The epoch is checked (an older one is INVALID_PRODUCER_EPOCH), sequences
// are not, and a transactional batch opens the producer's transaction. A
// batch without a producer id (a group's offsets and metadata) is
// validated like a client's. The wait function, never nil, returns nil
// once the batch is fdatasynced and, while followers are in the ISR, the
// high watermark has passed it (ErrNotLeader if this replica stops
// leading first, ErrReplicationTimeout after
// coordinatorReplicationTimeout): a coordinator answers only committed
// writes.
func (p *Partition) AppendFromCoordinator(batch []byte) (AppendResult, func() error, error) {
	return p.appendBatch(batch, AcksAll, originCoordinator, 0)
}
