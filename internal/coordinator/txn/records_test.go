package txn

import (
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStateBytesMatchKafka pins the state bytes to Kafka's
// TransactionState ids (TransactionMetadata.scala) and kmsg's names.
func TestStateBytesMatchKafka(t *testing.T) {
	kafka := map[string]int8{
		"Empty": 0, "Ongoing": 1, "PrepareCommit": 2, "PrepareAbort": 3,
		"CompleteCommit": 4, "CompleteAbort": 5, "Dead": 6, "PrepareEpochFence": 7,
	}
	kmsgConst := []kmsg.TransactionState{
		kmsg.TransactionStateEmpty, kmsg.TransactionStateOngoing, kmsg.TransactionStatePrepareCommit,
		kmsg.TransactionStatePrepareAbort, kmsg.TransactionStateCompleteCommit, kmsg.TransactionStateCompleteAbort,
		kmsg.TransactionStateDead, kmsg.TransactionStatePrepareEpochFence,
	}
	for i, s := 0, stateEmpty; s <= statePrepareEpochFence; i, s = i+1, s+1 {
		if id, ok := kafka[s.String()]; !ok || int8(s.wire()) != id || s.wire() != kmsgConst[i] || s.wire().String() != s.String() {
			t.Fatalf("state %v: wire %d, Kafka %d, kmsg %v", s, s.wire(), id, kmsgConst[i])
		}
		if back, ok := stateFromWire(s.wire()); !ok || back != s {
			t.Fatalf("state %v does not round-trip", s)
		}
		if p, ok := parseState(s.String()); !ok || p != s {
			t.Fatalf("state %v does not parse", s)
		}
	}
	for _, b := range []kmsg.TransactionState{-1, 8, 100} {
		if _, ok := stateFromWire(b); ok {
			t.Fatalf("byte %d read as a state", b)
		}
	}
}

func TestValidTransitionTable(t *testing.T) {
	// Kafka 4's validPreviousStates, row by row (PrepareAbort from the idle
	// states: a version 2 abort of a transaction that added nothing).
	want := map[txnState][]txnState{
		stateEmpty:             {stateEmpty, stateCompleteCommit, stateCompleteAbort},
		stateOngoing:           {stateOngoing, stateEmpty, stateCompleteCommit, stateCompleteAbort},
		statePrepareCommit:     {stateOngoing},
		statePrepareAbort:      {stateOngoing, statePrepareEpochFence, stateEmpty, stateCompleteCommit, stateCompleteAbort},
		stateCompleteCommit:    {statePrepareCommit},
		stateCompleteAbort:     {statePrepareAbort},
		stateDead:              {stateEmpty, stateCompleteAbort, stateCompleteCommit},
		statePrepareEpochFence: {stateOngoing},
	}
	for to, froms := range want {
		for from := txnState(0); from <= statePrepareEpochFence+1; from++ {
			allowed := false
			for _, f := range froms {
				allowed = allowed || f == from
			}
			if validTransition(from, to) != allowed {
				t.Fatalf("validTransition(%v, %v) = %v", from, to, !allowed)
			}
		}
	}
}

func value(mutate func(v *kmsg.TxnMetadataValue)) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 5, 1, 1000
	v.State = kmsg.TransactionStateOngoing
	v.Topics = []kmsg.TxnMetadataValueTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	v.StartTimestamp, v.LastUpdateTimestamp = 10, 20
	mutate(&v)
	return v.AppendTo(nil)
}

func TestReplayRejectsGarbage(t *testing.T) {
	good := txnKey("x")
	for _, tc := range []struct {
		name       string
		key, value []byte
	}{
		{"short key", []byte{0}, value(func(*kmsg.TxnMetadataValue) {})},
		{"key version 1", append([]byte{0, 1}, good[2:]...), value(func(*kmsg.TxnMetadataValue) {})},
		{"truncated key", good[:len(good)-1], value(func(*kmsg.TxnMetadataValue) {})},
		{"key with trailing bytes", append(txnKey("x"), 0), value(func(*kmsg.TxnMetadataValue) {})},
		{"empty id", txnKey(""), value(func(*kmsg.TxnMetadataValue) {})},
		{"short value", good, []byte{0}},
		{"value version 2", good, value(func(v *kmsg.TxnMetadataValue) { v.Version = 2 })},
		{"value version -1", good, value(func(v *kmsg.TxnMetadataValue) { v.Version = -1 })},
		{"truncated value", good, value(func(*kmsg.TxnMetadataValue) {})[:20]},
		{"value with trailing bytes", good, append(value(func(*kmsg.TxnMetadataValue) {}), 1, 2)},
		{"unknown state", good, value(func(v *kmsg.TxnMetadataValue) { v.State = 9 })},
		{"Dead", good, value(func(v *kmsg.TxnMetadataValue) { v.State = kmsg.TransactionStateDead })},
		{"PrepareEpochFence", good, value(func(v *kmsg.TxnMetadataValue) { v.State = kmsg.TransactionStatePrepareEpochFence })},
		{"negative producer id", good, value(func(v *kmsg.TxnMetadataValue) { v.ProducerID = -1 })},
		{"negative epoch", good, value(func(v *kmsg.TxnMetadataValue) { v.ProducerEpoch = -1 })},
		{"Ongoing at the last epoch", good, value(func(v *kmsg.TxnMetadataValue) { v.ProducerEpoch = math.MaxInt16 })},
		{"zero timeout", good, value(func(v *kmsg.TxnMetadataValue) { v.TimeoutMillis = 0 })},
		{"Ongoing without start", good, value(func(v *kmsg.TxnMetadataValue) { v.StartTimestamp = -1 })},
		{"unnamed topic", good, value(func(v *kmsg.TxnMetadataValue) { v.Topics[0].Topic = "" })},
		{"negative partition", good, value(func(v *kmsg.TxnMetadataValue) { v.Topics[0].Partitions[0] = -3 })},
		{"CompleteCommit with partitions", good, value(func(v *kmsg.TxnMetadataValue) { v.State = kmsg.TransactionStateCompleteCommit })},
		{"PrepareCommit without start", good, value(func(v *kmsg.TxnMetadataValue) {
			v.State, v.StartTimestamp = kmsg.TransactionStatePrepareCommit, -1
		})},
		{"PrepareAbort without start", good, value(func(v *kmsg.TxnMetadataValue) {
			v.State, v.StartTimestamp = kmsg.TransactionStatePrepareAbort, -1
		})},
		{"Ongoing with a next producer id", good, value(func(v *kmsg.TxnMetadataValue) { v.Version, v.NextProducerID = 1, 9 })},
		{"CompleteAbort with a next producer id", good, value(func(v *kmsg.TxnMetadataValue) {
			v.Version, v.NextProducerID, v.State, v.Topics = 1, 9, kmsg.TransactionStateCompleteAbort, nil
		})},
		{"client transaction version 3", good, value(func(v *kmsg.TxnMetadataValue) { v.Version, v.ClientTransactionVersion = 1, 3 })},
		{"client transaction version -1", good, value(func(v *kmsg.TxnMetadataValue) { v.Version, v.ClientTransactionVersion = 1, -1 })},
	} {
		c, err := New(newHarness(t).opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Replay(txnKey("x"), value(func(*kmsg.TxnMetadataValue) {})); err != nil {
			t.Fatal(err)
		}
		before := snapshotOf(c)
		err = c.Replay(tc.key, tc.value)
		if !errors.Is(err, ErrBadRecord) {
			t.Fatalf("%s: Replay returned %v", tc.name, err)
		}
		if after := snapshotOf(c); len(after) != 1 || after["x"] != before["x"] {
			t.Fatalf("%s: a bad record changed the state", tc.name)
		}
	}
}

func TestReplayReadsWhatKafkaWrites(t *testing.T) {
	c, err := New(newHarness(t).opts)
	if err != nil {
		t.Fatal(err)
	}
	// Kafka writes an Empty transaction with null partitions, and may
	// write value v1 (flexible, with the previous producer id).
	for id, v := range map[string][]byte{
		"empty": value(func(v *kmsg.TxnMetadataValue) {
			v.State = kmsg.TransactionStateEmpty
			v.Topics = nil
			v.StartTimestamp = -1
		}),
		"v1": value(func(v *kmsg.TxnMetadataValue) {
			v.Version = 1
			v.State = kmsg.TransactionStateCompleteAbort
			v.Topics = []kmsg.TxnMetadataValueTopic{}
			v.PreviousProducerID = 3
		}),
		"ongoing": value(func(*kmsg.TxnMetadataValue) {}),
	} {
		if err := c.Replay(txnKey(id), v); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if tx := c.txns["v1"]; tx.state != stateCompleteAbort || tx.lastProducerID != some[int64](3) || !tx.startMs.ok {
		t.Fatalf("v1 value read as %+v", tx)
	}
	if tx := c.txns["empty"]; tx.state != stateEmpty || tx.startMs.ok || len(tx.partitions) != 0 {
		t.Fatalf("Empty value read as %+v", tx)
	}
	if tx := c.txns["ongoing"]; len(tx.partitions) != 2 || tx.startMs != some[int64](10) || tx.lastUpdateMs != 20 {
		t.Fatalf("Ongoing value read as %+v", tx)
	}
	if err := c.Replay(txnKey("ongoing"), nil); err != nil || c.txns["ongoing"] != nil {
		t.Fatalf("tombstone: %v", err)
	}
	if err := c.Replay(txnKey("never"), nil); err != nil {
		t.Fatalf("tombstone of an unknown id: %v", err)
	}
}
