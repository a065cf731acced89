package producers

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// OpenTxn is one producer's open transaction: it began at FirstOffset and
// no marker has ended it yet.
type OpenTxn struct {
	ProducerID  base.ProducerID
	FirstOffset base.Offset
}

func cmpOpenTxn(a, b OpenTxn) int {
	if c := cmp.Compare(a.FirstOffset, b.FirstOffset); c != 0 {
		return c
	}
	return cmpPID(a.ProducerID, b.ProducerID)
}

// Marker is a transaction marker (Kafka's EndTransactionMarker with the
// batch's producer id and epoch): COMMIT when Commit, else ABORT.
type Marker struct {
	ProducerID       base.ProducerID
	Epoch            int16
	Commit           bool
	CoordinatorEpoch int32
}

// CompletedTxn is a transaction a marker ended: the producer's
// transactional batches in [FirstOffset, LastOffset] (inclusive;
// LastOffset is the marker's offset) were committed, or aborted.
type CompletedTxn struct {
	ProducerID  base.ProducerID
	FirstOffset base.Offset
	LastOffset  base.Offset
	Aborted     bool
}

// openTxn opens e's transaction at first, unless one is open.
func (s *State) openTxn(e *Entry, first base.Offset) {
	if e.CurrentTxnFirstOffset.Set {
		return
	}
	e.CurrentTxnFirstOffset = SomeOffset(first)
	t := OpenTxn{ProducerID: e.ProducerID, FirstOffset: first}
	// Transactions open at the log end, so this is almost always an append.
	i, _ := slices.BinarySearchFunc(s.ongoing, t, cmpOpenTxn)
	s.ongoing = slices.Insert(s.ongoing, i, t)
}

// closeTxn closes e's open transaction; it panics if none is open.
func (s *State) closeTxn(e *Entry) {
	first, open := e.CurrentTxnFirstOffset.Get()
	if !open {
		panic(fmt.Sprintf("producers: producer %d has no open transaction to close", e.ProducerID))
	}
	i, found := slices.BinarySearchFunc(s.ongoing, OpenTxn{ProducerID: e.ProducerID, FirstOffset: first}, cmpOpenTxn)
	if !found {
		panic(fmt.Sprintf("producers: producer %d's transaction at %d is not in the open list", e.ProducerID, first))
	}
	s.ongoing = slices.Delete(s.ongoing, i, i+1)
	e.CurrentTxnFirstOffset = OptionalOffset{}
}

// OpenTxns lists the open transactions, ascending by first offset; nil
// when none is open.
func (s *State) OpenTxns() []OpenTxn {
	if len(s.ongoing) == 0 {
		return nil
	}
	return slices.Clone(s.ongoing)
}

// FirstUnstable is the first offset of the oldest open transaction; ok is
// false when none is open.
func (s *State) FirstUnstable() (base.Offset, bool) {
	if len(s.ongoing) == 0 {
		return 0, false
	}
	return s.ongoing[0].FirstOffset, true
}

// LastStable is the last stable offset (exclusive: a read_committed
// consumer reads below it) for a log whose start is logStart and high
// watermark highWatermark: the first offset of the oldest open
// transaction, raised to logStart when the log start passed it (as Kafka's
// firstUnstableOffset), capped at highWatermark; highWatermark when no
// transaction is open.
func (s *State) LastStable(logStart, highWatermark base.Offset) base.Offset {
	first, ok := s.FirstUnstable()
	if !ok {
		return highWatermark
	}
	return min(max(first, logStart), highWatermark)
}

// CheckCoordinator decides whether a coordinator's own batch from pid in
// epoch may be appended (Kafka's origin COORDINATOR, such as the
// TxnOffsetCommit records of a transaction on __consumer_offsets): it has
// no sequence numbers, so only the epoch and the transaction state are
// checked. It changes nothing.
func (s *State) CheckCoordinator(pid base.ProducerID, epoch int16, transactional bool) error {
	if epoch < 0 {
		return codeErrorf(CodeInvalidRecord, "producer %d: epoch %d must not be negative", pid, epoch)
	}
	e, ok := s.producers[pid]
	if !ok {
		return nil
	}
	if epoch < e.Epoch {
		return codeErrorf(CodeInvalidProducerEpoch,
			"producer %d: epoch %d is older than the current epoch %d", pid, epoch, e.Epoch)
	}
	return checkTxnState(e, transactional)
}

// UpdateCoordinator records a coordinator's batch of pid in epoch starting
// at first, after CheckCoordinator (or while replaying). Having no
// sequence, the batch is not remembered for duplicates; a new epoch clears
// the batch history, as any batch of a new epoch does. A transactional
// batch opens the producer's transaction at first unless one is open.
func (s *State) UpdateCoordinator(pid base.ProducerID, epoch int16, first base.Offset, timestampMs int64, transactional bool) {
	e := s.entryFor(pid, epoch)
	if n := len(e.Batches); n > 0 && first <= e.Batches[n-1].LastOffset {
		panic(fmt.Sprintf("producers: producer %d coordinator batch at %d is not after its last batch ending at %d",
			pid, first, e.Batches[n-1].LastOffset))
	}
	if epoch != e.Epoch {
		e.Epoch, e.Batches = epoch, nil
	}
	e.LastTimestampMs = timestampMs
	if transactional {
		s.openTxn(e, first)
	}
}

// CheckMarker decides whether marker m may be written, as Kafka's
// ProducerAppendInfo.appendEndTxnMarker does for a leader's append: an
// epoch older than the producer's is INVALID_PRODUCER_EPOCH, a coordinator
// epoch older than that of the producer's last marker is
// TRANSACTION_COORDINATOR_FENCED. A marker for an unknown producer is
// accepted. It changes nothing.
func (s *State) CheckMarker(m Marker) error {
	if m.Epoch < 0 || m.CoordinatorEpoch < 0 {
		return codeErrorf(CodeInvalidRecord, "marker of producer %d: epoch %d, coordinator epoch %d must not be negative",
			m.ProducerID, m.Epoch, m.CoordinatorEpoch)
	}
	e, ok := s.producers[m.ProducerID]
	if !ok {
		return nil
	}
	if m.Epoch < e.Epoch {
		return codeErrorf(CodeInvalidProducerEpoch,
			"marker of producer %d: epoch %d is older than the current epoch %d", m.ProducerID, m.Epoch, e.Epoch)
	}
	if m.CoordinatorEpoch < e.CoordinatorEpoch {
		return codeErrorf(CodeTransactionCoordinatorFenced,
			"marker of producer %d: coordinator epoch %d is older than %d, that of its last marker",
			m.ProducerID, m.CoordinatorEpoch, e.CoordinatorEpoch)
	}
	return nil
}

// ApplyMarker records marker m written at offset o with timestamp
// timestampMs, after CheckMarker (or while replaying, where nothing is
// refused). The producer takes the marker's epoch (a different epoch
// clears the batch history: the next batch must start at sequence 0) and
// coordinator epoch, and its open transaction closes. The transaction
// closed is returned; ok is false when none was open, as in Kafka, where
// a marker without data completes nothing, moves no last stable offset and
// adds nothing to the transaction index. It panics if o is not after the
// producer's last batch and open transaction.
func (s *State) ApplyMarker(m Marker, o base.Offset, timestampMs int64) (CompletedTxn, bool) {
	e := s.entryFor(m.ProducerID, m.Epoch)
	if n := len(e.Batches); n > 0 && o <= e.Batches[n-1].LastOffset {
		panic(fmt.Sprintf("producers: producer %d marker at %d is not after its last batch ending at %d",
			m.ProducerID, o, e.Batches[n-1].LastOffset))
	}
	first, open := e.CurrentTxnFirstOffset.Get()
	if open && first > o {
		panic(fmt.Sprintf("producers: producer %d marker at %d is before its transaction's first offset %d",
			m.ProducerID, o, first))
	}
	if m.Epoch != e.Epoch {
		e.Epoch, e.Batches = m.Epoch, nil
	}
	e.CoordinatorEpoch = m.CoordinatorEpoch
	e.LastTimestampMs = timestampMs
	if !open {
		return CompletedTxn{}, false
	}
	s.closeTxn(e)
	return CompletedTxn{ProducerID: m.ProducerID, FirstOffset: first, LastOffset: o, Aborted: !m.Commit}, true
}
