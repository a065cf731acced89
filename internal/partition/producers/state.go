package producers

import (
	"fmt"
	"math"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// MaxBatches is how many recent batches per producer are kept for duplicate
// detection; Kafka's producers keep at most 5 requests in flight.
const MaxBatches = 5

// BatchMeta is what is remembered of one appended batch. Offsets are
// inclusive, as in the batch header: [FirstOffset, LastOffset].
type BatchMeta struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset base.Offset
	TimestampMs             int64 // the batch's max timestamp
}

// OptionalOffset is an offset that may be absent; the zero value is absent.
type OptionalOffset struct {
	Offset base.Offset
	Set    bool
}

// SomeOffset is the present offset o.
func SomeOffset(o base.Offset) OptionalOffset { return OptionalOffset{Offset: o, Set: true} }

// Get returns the offset and whether it is present.
func (o OptionalOffset) Get() (base.Offset, bool) { return o.Offset, o.Set }

// Entry is one producer's state. See the package doc for its invariants.
type Entry struct {
	ProducerID base.ProducerID
	Epoch      int16
	// Batches are the last MaxBatches batches of Epoch, oldest first. It
	// is empty after a marker or a coordinator's batch bumped the epoch:
	// the next batch of the epoch must then start at sequence 0.
	Batches         []BatchMeta
	LastTimestampMs int64
	// CoordinatorEpoch is the transaction coordinator epoch of the
	// producer's last marker; NoCoordinatorEpoch (-1) before any, as in
	// Kafka (coordinator epochs start at 0, so no marker is fenced by it).
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction; absent when none is open.
	CurrentTxnFirstOffset OptionalOffset
}

func (e *Entry) clone() Entry {
	c := *e
	c.Batches = slices.Clone(e.Batches)
	return c
}

// lastSeq is the sequence the producer's next batch in the same epoch must
// follow: its last batch's, or -1 when it has none (Kafka's NO_SEQUENCE,
// so that the next one must be 0).
func (e *Entry) lastSeq() int32 {
	if n := len(e.Batches); n > 0 {
		return e.Batches[n-1].LastSeq
	}
	return -1
}

// VerdictKind is what Check decided for a batch. The zero value is invalid.
type VerdictKind int

const (
	// Append: the batch is new and in sequence; append it, then Update.
	Append VerdictKind = iota + 1
	// Duplicate: the batch was appended before; do not append it, answer
	// with Verdict.Original's offsets.
	Duplicate
)

func (k VerdictKind) String() string {
	switch k {
	case Append:
		return "Append"
	case Duplicate:
		return "Duplicate"
	}
	return fmt.Sprintf("VerdictKind(%d)", int(k))
}

// Verdict is Check's answer. Original is set only for a Duplicate.
type Verdict struct {
	Kind     VerdictKind
	Original BatchMeta
}

// State is the producer state of one partition. It is not safe for
// concurrent use: the partition goroutine owns it.
type State struct {
	producers map[base.ProducerID]*Entry
	// ongoing are the open transactions, ascending by first offset (Kafka's
	// ongoingTxns): exactly one per entry whose CurrentTxnFirstOffset is
	// set, holding that offset.
	ongoing []OpenTxn
}

// New returns an empty State.
func New() *State { return &State{producers: make(map[base.ProducerID]*Entry)} }

// Len is the number of producers with state.
func (s *State) Len() int { return len(s.producers) }

// Entry returns a copy of pid's state.
func (s *State) Entry(pid base.ProducerID) (Entry, bool) {
	e, ok := s.producers[pid]
	if !ok {
		return Entry{}, false
	}
	return e.clone(), true
}

// Entries returns copies of all entries, ordered by producer id.
func (s *State) Entries() []Entry {
	out := make([]Entry, 0, len(s.producers))
	for _, e := range s.producers {
		out = append(out, e.clone())
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmpPID(a.ProducerID, b.ProducerID) })
	return out
}

func cmpPID(a, b base.ProducerID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Check decides whether a client batch from pid in epoch with sequences
// [firstSeq, lastSeq] may be appended; transactional is the batch's
// transactional bit. It changes nothing.
func (s *State) Check(pid base.ProducerID, epoch int16, firstSeq, lastSeq int32, transactional bool) (Verdict, error) {
	if firstSeq < 0 || lastSeq < 0 || epoch < 0 {
		return Verdict{}, codeErrorf(CodeInvalidRecord,
			"producer %d: epoch %d, sequences [%d, %d] must not be negative", pid, epoch, firstSeq, lastSeq)
	}
	e, ok := s.producers[pid]
	if !ok {
		return Verdict{Kind: Append}, nil
	}
	switch {
	case epoch < e.Epoch:
		return Verdict{}, codeErrorf(CodeInvalidProducerEpoch,
			"producer %d: epoch %d is older than the current epoch %d", pid, epoch, e.Epoch)
	case epoch > e.Epoch:
		if firstSeq != 0 {
			return Verdict{}, codeErrorf(CodeOutOfOrderSequenceNumber,
				"producer %d: new epoch %d must start at sequence 0, got %d", pid, epoch, firstSeq)
		}
	default:
		for _, b := range e.Batches {
			if b.FirstSeq == firstSeq && b.LastSeq == lastSeq {
				return Verdict{Kind: Duplicate, Original: b}, nil
			}
		}
		if last := e.lastSeq(); firstSeq != nextSeq(last) {
			return Verdict{}, codeErrorf(CodeOutOfOrderSequenceNumber,
				"producer %d epoch %d: sequence %d does not follow %d", pid, epoch, firstSeq, last)
		}
	}
	if err := checkTxnState(e, transactional); err != nil {
		return Verdict{}, err
	}
	return Verdict{Kind: Append}, nil
}

// checkTxnState refuses a non-transactional batch while the producer's
// transaction is open, as Kafka's ProducerAppendInfo does.
func checkTxnState(e *Entry, transactional bool) error {
	if first, open := e.CurrentTxnFirstOffset.Get(); open && !transactional {
		return codeErrorf(CodeInvalidTxnState,
			"producer %d: a non-transactional batch while its transaction from offset %d is open", e.ProducerID, first)
	}
	return nil
}

// nextSeq is the sequence after seq; sequences wrap from MaxInt32 to 0,
// and the one after -1 (no batch yet) is 0.
func nextSeq(seq int32) int32 {
	if seq == math.MaxInt32 {
		return 0
	}
	return seq + 1
}

// Update records batch b of pid, appended in epoch after Check returned
// Append (or while replaying the log). A new epoch replaces the batch
// history. A transactional batch opens the producer's transaction at
// b.FirstOffset unless one is open. It panics if b's offsets are not after
// the producer's last batch.
func (s *State) Update(pid base.ProducerID, epoch int16, b BatchMeta, transactional bool) {
	if b.FirstOffset > b.LastOffset || b.FirstOffset < 0 {
		panic(fmt.Sprintf("producers: batch offsets [%d, %d] out of order", b.FirstOffset, b.LastOffset))
	}
	e := s.entryFor(pid, epoch)
	if epoch != e.Epoch {
		e.Epoch, e.Batches = epoch, nil
	}
	if n := len(e.Batches); n > 0 && b.FirstOffset <= e.Batches[n-1].LastOffset {
		panic(fmt.Sprintf("producers: producer %d batch at %d is not after its last batch ending at %d",
			pid, b.FirstOffset, e.Batches[n-1].LastOffset))
	}
	if len(e.Batches) == MaxBatches {
		// Shift rather than reslice, so the backing array stays bounded.
		copy(e.Batches, e.Batches[1:])
		e.Batches = e.Batches[:MaxBatches-1]
	}
	e.Batches = append(e.Batches, b)
	e.LastTimestampMs = b.TimestampMs
	if transactional {
		s.openTxn(e, b.FirstOffset)
	}
}

// NoCoordinatorEpoch is the coordinator epoch of a producer that has seen
// no marker.
const NoCoordinatorEpoch = -1

// entryFor returns pid's entry, creating it in epoch if there is none.
func (s *State) entryFor(pid base.ProducerID, epoch int16) *Entry {
	e, ok := s.producers[pid]
	if !ok {
		e = &Entry{ProducerID: pid, Epoch: epoch, CoordinatorEpoch: NoCoordinatorEpoch}
		s.producers[pid] = e
	}
	return e
}

// TruncateTo forgets every batch and open transaction that has an offset
// at or after o, as when the log is truncated to o. A producer whose
// remembered batches are all forgotten, and whose transaction (if any) is
// forgotten too, is removed.
//
// It can only forget, never restore: a producer whose cached batches are
// all at or after o becomes unknown (any sequence accepted) rather than
// falling back to older state; an epoch or coordinator epoch raised by a
// marker at or after o stays raised; a transaction that such a marker
// closed is not reopened; a producer that had no remembered batch (known
// by its markers or coordinator batches only) stays, with its epochs.
// Exact state needs a snapshot below o plus a replay, which is the
// partition's job.
func (s *State) TruncateTo(o base.Offset) {
	for pid, e := range s.producers {
		had := len(e.Batches)
		n := had
		for n > 0 && e.Batches[n-1].LastOffset >= o {
			n--
		}
		e.Batches = e.Batches[:n]
		if n == 0 {
			e.Batches = nil // as a restored entry has it
		}
		if first, open := e.CurrentTxnFirstOffset.Get(); open && first >= o {
			s.closeTxn(e)
		}
		if had > 0 && n == 0 && !e.CurrentTxnFirstOffset.Set {
			delete(s.producers, pid)
			continue
		}
		if n > 0 {
			e.LastTimestampMs = e.Batches[n-1].TimestampMs
		}
	}
}

// ExpireBefore removes producers idle for at least producerIDExpirationMs
// (Kafka's producer.id.expiration.ms): nowMs - LastTimestampMs >= it. A
// producer with an open transaction is never removed: its transaction
// holds the last stable offset until a marker ends it.
func (s *State) ExpireBefore(nowMs, producerIDExpirationMs int64) {
	for pid, e := range s.producers {
		if !e.CurrentTxnFirstOffset.Set && nowMs-e.LastTimestampMs >= producerIDExpirationMs {
			delete(s.producers, pid)
		}
	}
}
