package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/share"
	"github.com/strata-broker/strata/internal/share/leader"
)

// shareRead is one partition's read for a share group: the bytes read and
// what the share-partition needs of them.
type shareRead struct {
	records []byte
	read    leader.Read
}

// readShare reads t's log from from, at most limit bytes (the first batch
// whole), up to the group's read end, from the local log or the remote
// tier. Under read_committed it finds the batches of aborted transactions
// among what it read. An offset below the log start reads nothing: the
// share-partition moves its start there on its next use.
func (h *Handler) readShare(ctx context.Context, t shareTarget, from base.Offset, limit int, readCommitted bool) (shareRead, error) {
	iso := partition.ReadUncommitted
	if readCommitted {
		iso = partition.ReadCommitted
	}
	limit = max(limit, 1)
	res, err := t.part.ReadIsolated(from, limit, nil, iso)
	records := res.Records
	switch {
	case errors.Is(err, partition.ErrOffsetOutOfRange):
		return shareRead{read: leader.Read{Read: share.Read{From: from}}}, nil
	case errors.Is(err, partition.ErrOffsetInRemote):
		records, err = h.readShareRemote(ctx, t, from, limit)
	}
	if err != nil {
		return shareRead{}, err
	}
	out := shareRead{records: records, read: leader.Read{Read: share.Read{From: from}}}
	var aborted abortedTracker
	if readCommitted {
		aborted = newAbortedTracker(t.part.AbortedTxns(from, nextOffsetAfter(records)))
	}
	it := record.SplitBatches(records)
	for {
		_, h, ok := it.Next()
		if !ok {
			break
		}
		r := base.Range{Start: h.BaseOffset, End: h.NextOffset()}
		out.read.Batches = append(out.read.Batches, r)
		if readCommitted && aborted.aborts(h) {
			out.read.Aborted = append(out.read.Aborted, r)
		}
	}
	return out, nil
}

// readShareRemote reads from the remote tier into memory: a share fetch
// answers from the records it acquired, so it holds no file region.
func (h *Handler) readShareRemote(ctx context.Context, t shareTarget, from base.Offset, limit int) ([]byte, error) {
	rr, err := h.opts.Broker.ReadRemote(ctx, t.part, from, limit)
	if err != nil {
		return nil, err
	}
	if rr.Region.File == nil {
		return rr.Batches, nil
	}
	defer rr.Region.Close()
	b := make([]byte, rr.Region.Size)
	if _, err := rr.Region.File.ReadAt(b, rr.Region.Pos); err != nil {
		return nil, fmt.Errorf("reading a cached remote chunk of %v: %w", t.part.TP(), err)
	}
	return b, nil
}

// abortedTracker finds the batches of aborted transactions, as a
// read_committed consumer does: a transactional batch of a producer whose
// aborted transaction began at or before it and ended (its marker) after.
type abortedTracker struct {
	byProducer map[base.ProducerID][]partition.AbortedTxn
}

func newAbortedTracker(list []partition.AbortedTxn) abortedTracker {
	t := abortedTracker{byProducer: map[base.ProducerID][]partition.AbortedTxn{}}
	for _, a := range list {
		t.byProducer[a.ProducerID] = append(t.byProducer[a.ProducerID], a)
	}
	return t
}

func (t abortedTracker) aborts(h record.Header) bool {
	if !h.Transactional() || h.Control() {
		return false
	}
	for _, a := range t.byProducer[base.ProducerID(h.ProducerID)] {
		if a.FirstOffset <= h.BaseOffset && h.BaseOffset < a.LastOffset {
			return true
		}
	}
	return false
}

// trimToAcquired is the part of records a member gets for acquired: the
// batches from the first that holds an acquired offset to the last that
// does (the client delivers only the acquired offsets of them).
func trimToAcquired(records []byte, acquired []share.Acquisition) []byte {
	if len(acquired) == 0 {
		return []byte{}
	}
	first, last := acquired[0].Offsets.Start, acquired[len(acquired)-1].Offsets.End
	start, end := -1, 0
	it := record.SplitBatches(records)
	pos := 0
	for {
		b, h, ok := it.Next()
		if !ok {
			break
		}
		if h.NextOffset() > first && h.BaseOffset < last {
			if start < 0 {
				start = pos
			}
			end = pos + len(b)
		}
		pos += len(b)
	}
	if start < 0 {
		return []byte{}
	}
	return records[start:end]
}
