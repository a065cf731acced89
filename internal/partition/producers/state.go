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

// Entry is one producer's state. See the package doc for its invariants.
type Entry struct {
	ProducerID      base.ProducerID
	Epoch           int16
	Batches         []BatchMeta // the last MaxBatches, oldest first
	LastTimestampMs int64
}

func (e *Entry) clone() Entry {
	c := *e
	c.Batches = slices.Clone(e.Batches)
	return c
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

// State is the idempotent-producer state of one partition. It is not safe
// for concurrent use: the partition goroutine owns it.
type State struct {
	producers map[base.ProducerID]*Entry
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

// Check decides whether a batch from pid in epoch with sequences
// [firstSeq, lastSeq] may be appended. It changes nothing.
func (s *State) Check(pid base.ProducerID, epoch int16, firstSeq, lastSeq int32) (Verdict, error) {
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
		return Verdict{Kind: Append}, nil
	}
	for _, b := range e.Batches {
		if b.FirstSeq == firstSeq && b.LastSeq == lastSeq {
			return Verdict{Kind: Duplicate, Original: b}, nil
		}
	}
	last := e.Batches[len(e.Batches)-1].LastSeq
	if firstSeq != nextSeq(last) {
		return Verdict{}, codeErrorf(CodeOutOfOrderSequenceNumber,
			"producer %d epoch %d: sequence %d does not follow %d", pid, epoch, firstSeq, last)
	}
	return Verdict{Kind: Append}, nil
}

// nextSeq is the sequence after seq; sequences wrap from MaxInt32 to 0.
func nextSeq(seq int32) int32 {
	if seq == math.MaxInt32 {
		return 0
	}
	return seq + 1
}

// Update records batch b of pid, appended in epoch after Check returned
// Append (or while replaying the log). A new epoch replaces the batch
// history. It panics if b's offsets are not after the producer's last batch.
func (s *State) Update(pid base.ProducerID, epoch int16, b BatchMeta) {
	if b.FirstOffset > b.LastOffset || b.FirstOffset < 0 {
		panic(fmt.Sprintf("producers: batch offsets [%d, %d] out of order", b.FirstOffset, b.LastOffset))
	}
	e, ok := s.producers[pid]
	if !ok {
		e = &Entry{ProducerID: pid, Epoch: epoch}
		s.producers[pid] = e
	}
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
}

// TruncateTo forgets every batch that has an offset at or after o, as when
// the log is truncated to o. A producer left with no batch is removed.
func (s *State) TruncateTo(o base.Offset) {
	for pid, e := range s.producers {
		n := len(e.Batches)
		for n > 0 && e.Batches[n-1].LastOffset >= o {
			n--
		}
		if n == 0 {
			delete(s.producers, pid)
			continue
		}
		e.Batches = e.Batches[:n]
		e.LastTimestampMs = e.Batches[n-1].TimestampMs
	}
}

// ExpireBefore removes producers idle for at least producerIDExpirationMs
// (Kafka's producer.id.expiration.ms): nowMs - LastTimestampMs >= it.
func (s *State) ExpireBefore(nowMs, producerIDExpirationMs int64) {
	for pid, e := range s.producers {
		if nowMs-e.LastTimestampMs >= producerIDExpirationMs {
			delete(s.producers, pid)
		}
	}
}
