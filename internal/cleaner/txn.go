package cleaner

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// AbortedTxn is one aborted transaction, as Kafka's transaction index
// holds it: the producer's transactional batches in [First, Last] are
// aborted; Last is the offset of its ABORT marker.
type AbortedTxn struct {
	ProducerID  int64
	First, Last base.Offset
}

// AbortedTxns answers whether a transactional batch belongs to an aborted
// transaction. A batch is aborted when it lies inside one of its
// producer's aborted ranges: membership, not a replay of the markers a
// pass happens to read, so a pass that starts after an ABORT marker cannot
// take the producer's later, committed batches for aborted ones
// (KAFKA-21410, reference 003). The zero value and nil hold none.
type AbortedTxns struct {
	byPID map[int64][]AbortedTxn // by First, ascending; a producer's ranges never overlap
}

// NewAbortedTxns indexes the aborted transactions that end at or after
// from, the pass's start offset (DESIGN §5: a pass is seeded only with
// those).
func NewAbortedTxns(txns []AbortedTxn, from base.Offset) *AbortedTxns {
	a := &AbortedTxns{byPID: map[int64][]AbortedTxn{}}
	for _, t := range txns {
		if t.Last >= from {
			a.byPID[t.ProducerID] = append(a.byPID[t.ProducerID], t)
		}
	}
	for _, ts := range a.byPID {
		slices.SortFunc(ts, func(x, y AbortedTxn) int { return cmp.Compare(x.First, y.First) })
	}
	return a
}

// Aborted reports whether offset o of producer pid is in an aborted
// transaction.
func (a *AbortedTxns) Aborted(pid int64, o base.Offset) bool {
	if a == nil {
		return false
	}
	ts := a.byPID[pid]
	i, _ := slices.BinarySearchFunc(ts, o, func(t AbortedTxn, o base.Offset) int {
		switch {
		case t.Last < o:
			return -1
		case t.First > o:
			return 1
		}
		return 0
	})
	return i < len(ts) && ts[i].First <= o && o <= ts[i].Last
}

// markerType reads the type of a control record's key (Kafka's
// ControlRecordType: a version then a type, both int16; 0 aborts, 1
// commits); ok is false for a key too short to hold one.
func markerType(key []byte) (int16, bool) {
	if len(key) < 4 {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(key[2:4])), true
}
