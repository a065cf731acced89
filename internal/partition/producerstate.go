package partition

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// loadProducers restores producer state from the newest usable snapshot,
// replays the batches written after it, and restores the aborted
// transactions (the index file below the snapshot, the replay after it).
// It runs at Open, before the partition is shared.
func (p *Partition) loadProducers() error {
	ps, from, err := p.restoreSnapshot()
	if err != nil {
		return err
	}
	derived, err := p.replayLog(ps, from, p.log.End())
	if err != nil {
		return err
	}
	p.mu.producers = ps
	return p.loadAborted(from, derived)
}

// replayLog applies the batches of the local log that end after from and
// start before to, in order, to ps, as Kafka's LogLoader does (origin
// REPLICATION: what the log holds was accepted once, so nothing is
// refused), and returns the transactions aborted there, each with the
// last stable offset right after its marker.
func (p *Partition) replayLog(ps *producers.State, from, to base.Offset) ([]AbortedTxn, error) {
	const chunkBytes = 1 << 20
	var aborted []AbortedTxn
	rr := recordReaders.Get().(*record.RecordReader)
	defer recordReaders.Put(rr)
	buf := make([]byte, 0, chunkBytes)
	for from < to {
		out, err := p.log.Read(from, chunkBytes, buf[:0])
		if err != nil {
			return nil, fmt.Errorf("replaying producer state from %d: %w", from, err)
		}
		if len(out) == 0 {
			return aborted, nil
		}
		for it := record.SplitBatches(out); ; {
			batch, h, ok := it.Next()
			if !ok {
				if err := it.Err(); err != nil {
					return nil, fmt.Errorf("replaying producer state: bad batch after %d: %w", from, err)
				}
				break
			}
			if h.NextOffset() <= from {
				continue
			}
			if h.BaseOffset >= to {
				return aborted, nil
			}
			if ct, ok := replayBatch(ps, batch, h, rr); ok && ct.Aborted {
				aborted = append(aborted, abortedTxnOf(ps, ct))
			}
			from = h.NextOffset()
		}
		buf = out
	}
	return aborted, nil
}

// replayBatch applies one batch of the log to ps and returns the
// transaction a marker completed, if it is one that did. A control batch
// that does not hold a transaction marker is skipped.
func replayBatch(ps *producers.State, batch []byte, h record.Header, rr *record.RecordReader) (producers.CompletedTxn, bool) {
	pid := base.ProducerID(h.ProducerID)
	switch {
	case !h.Idempotent():
	case h.Control():
		m, ok := readMarker(batch, rr)
		if !ok {
			return producers.CompletedTxn{}, false
		}
		return ps.ApplyMarker(producers.Marker{ProducerID: pid, Epoch: h.ProducerEpoch, Commit: m.Commit,
			CoordinatorEpoch: m.CoordinatorEpoch}, h.BaseOffset, h.MaxTimestamp)
	case h.BaseSequence < 0: // a coordinator's batch
		ps.UpdateCoordinator(pid, h.ProducerEpoch, h.BaseOffset, h.MaxTimestamp, h.Transactional())
	default:
		ps.Update(pid, h.ProducerEpoch, producers.BatchMeta{
			FirstSeq: h.BaseSequence, LastSeq: lastSequence(h),
			FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(), TimestampMs: h.MaxTimestamp,
		}, h.Transactional())
	}
	return producers.CompletedTxn{}, false
}

// readMarker decodes the marker of a control batch; ok is false when its
// first record is not a transaction marker.
func readMarker(batch []byte, rr *record.RecordReader) (record.EndTxnMarker, bool) {
	if rr.Reset(batch) != nil {
		return record.EndTxnMarker{}, false
	}
	rec, ok := rr.Next()
	if !ok {
		return record.EndTxnMarker{}, false
	}
	m, err := record.ParseEndTxnMarker(rec.Key, rec.Value)
	return m, err == nil
}
