package txn

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
)

// txnState is a transactional id's lifecycle, as Kafka's TransactionState.
// The zero value is invalid; wire() is Kafka's byte for the state.
type txnState uint8

const (
	// stateEmpty: the producer is initialized and no transaction is open.
	stateEmpty txnState = iota + 1
	// stateOngoing: partitions were added; EndTxn or a timeout ends it.
	stateOngoing
	// statePrepareCommit, statePrepareAbort: the outcome is durable and
	// the markers are being written.
	statePrepareCommit
	statePrepareAbort
	// stateCompleteCommit, stateCompleteAbort: every marker is written.
	stateCompleteCommit
	stateCompleteAbort
	// stateDead: the id is being removed. Never held (see doc.go).
	stateDead
	// statePrepareEpochFence: Kafka's transient state of a fence. Never
	// held: a fence goes from Ongoing to PrepareAbort in one step.
	statePrepareEpochFence
)

var stateNames = [...]string{
	stateEmpty:             "Empty",
	stateOngoing:           "Ongoing",
	statePrepareCommit:     "PrepareCommit",
	statePrepareAbort:      "PrepareAbort",
	stateCompleteCommit:    "CompleteCommit",
	stateCompleteAbort:     "CompleteAbort",
	stateDead:              "Dead",
	statePrepareEpochFence: "PrepareEpochFence",
}

// String is Kafka's name of the state, as DescribeTransactions and
// ListTransactions show it.
func (s txnState) String() string {
	if s == 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("txnState(%d)", uint8(s))
	}
	return stateNames[s]
}

// wire is the state's byte in TxnMetadataValue (Kafka's TransactionState.id).
func (s txnState) wire() kmsg.TransactionState { return kmsg.TransactionState(s - 1) }

// stateFromWire is the inverse of wire; ok is false for a byte Kafka does
// not define.
func stateFromWire(b kmsg.TransactionState) (txnState, bool) {
	s := txnState(b) + 1
	if b < 0 || s > statePrepareEpochFence {
		return 0, false
	}
	return s, true
}

// parseState is Kafka's TransactionState.fromName: an exact match.
func parseState(name string) (txnState, bool) {
	for s := stateEmpty; s <= statePrepareEpochFence; s++ {
		if stateNames[s] == name {
			return s, true
		}
	}
	return 0, false
}

// validTransition is Kafka's table of valid previous states.
func validTransition(from, to txnState) bool {
	switch to {
	case stateEmpty:
		return from == stateEmpty || from == stateCompleteCommit || from == stateCompleteAbort
	case stateOngoing:
		return from == stateOngoing || from == stateEmpty || from == stateCompleteCommit || from == stateCompleteAbort
	case statePrepareCommit, statePrepareEpochFence:
		return from == stateOngoing
	case statePrepareAbort:
		// Version 2 (KIP-890 part 2) aborts a transaction that added
		// nothing, from Empty or Complete*: it bumps the epoch.
		return from == stateOngoing || from == statePrepareEpochFence || from.idle()
	case stateCompleteCommit:
		return from == statePrepareCommit
	case stateCompleteAbort:
		return from == statePrepareAbort
	case stateDead:
		return from == stateEmpty || from == stateCompleteCommit || from == stateCompleteAbort
	}
	return false
}

// preparing reports whether the outcome is decided and markers are being
// written: Kafka's Prepare* state with its pending Complete* transition.
func (s txnState) preparing() bool { return s == statePrepareCommit || s == statePrepareAbort }

// idle reports whether the id may expire (Kafka's isExpirationAllowed).
func (s txnState) idle() bool {
	return s == stateEmpty || s == stateCompleteCommit || s == stateCompleteAbort
}

// optional is a value that may be absent: what Kafka writes as -1.
type optional[T any] struct {
	v  T
	ok bool
}

func some[T any](v T) optional[T] { return optional[T]{v: v, ok: true} }

// orMinusOne is the wire form of an optional id, epoch or timestamp.
func orMinusOne[T ~int16 | ~int64](o optional[T]) T {
	if !o.ok {
		return -1
	}
	return o.v
}

// isEpochExhausted is Kafka's TransactionMetadata.isEpochExhausted: the
// last epoch is kept back so that a producer can always be fenced.
func isEpochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// txnMetadata is Kafka's TransactionMetadata for one transactional id.
// Timestamps are Unix milliseconds, as in the records.
type txnMetadata struct {
	id             string
	producerID     int64
	lastProducerID optional[int64] // the producer id before the last InitProducerId
	epoch          int16
	lastEpoch      optional[int16] // the epoch a KIP-360 retry may present
	// nextProducerID is, while a version 2 transaction whose end used
	// the last epoch is in Prepare*, the producer id it moves to (at
	// epoch 0) once its markers are written.
	nextProducerID optional[int64]
	// clientVersion is the transaction version of the client's last
	// request that wrote the state (Kafka's clientTransactionVersion):
	// 2 when every EndTxn bumps the epoch (KIP-890 part 2), else 0.
	clientVersion int16
	timeout       time.Duration
	state         txnState
	partitions    map[base.TopicPartition]struct{}
	startMs       optional[int64] // when the transaction's first partition was added
	lastUpdateMs  int64
}

// transitionTo moves t to state to; an invalid move is a programmer error.
func (t *txnMetadata) transitionTo(to txnState, nowMs int64) {
	if !validTransition(t.state, to) {
		panic(fmt.Sprintf("txn: transactional id %q cannot go from %v to %v", t.id, t.state, to))
	}
	t.state = to
	t.lastUpdateMs = nowMs
}

// sortedPartitions returns t's partitions by topic, then partition.
func (t *txnMetadata) sortedPartitions() []base.TopicPartition {
	return slices.SortedFunc(maps.Keys(t.partitions), func(a, b base.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// hasAll reports whether every partition of tps is in t.
func (t *txnMetadata) hasAll(tps []base.TopicPartition) bool {
	for _, tp := range tps {
		if _, ok := t.partitions[tp]; !ok {
			return false
		}
	}
	return true
}

// deadline is an optional point in time: a timer that Tick checks.
type deadline struct {
	at    time.Time
	armed bool
}

func armAt(t time.Time) deadline { return deadline{at: t, armed: true} }

// passed reports whether the timer is armed and now is at or after it.
func (d deadline) passed(now time.Time) bool { return d.armed && !now.Before(d.at) }
