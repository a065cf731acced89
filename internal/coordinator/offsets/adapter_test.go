package offsets

import (
	"bytes"
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

func TestPartitionForMatchesJavaHashCode(t *testing.T) {
	for _, tc := range []struct {
		group string
		n     int32
		want  int32
	}{
		{"", 50, 0},
		{"a", 50, 97 % 50},
		{"hello", 50, 99162322 % 50},
		{"Aa", 1000, 2112 % 1000},
		{"BB", 1000, 2112 % 1000},
		{"polygenelubricants", 50, 0}, // hashCode is Integer.MIN_VALUE
		{"group-\U0001F600", 1, 0},
	} {
		if got := PartitionFor(tc.group, tc.n); got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tc.group, tc.n, got, tc.want)
		}
	}
	// A negative hash code is made positive, not taken modulo as negative.
	if got := PartitionFor("zzzzzzzz", 50); got < 0 || got >= 50 {
		t.Errorf("PartitionFor out of range: %d", got)
	}
}

func TestEncodeBatchValidates(t *testing.T) {
	b := EncodeBatch([]runtime.Record{{Key: []byte("k"), Value: []byte("v")}, {Key: []byte("t")}}, 1234)
	h, err := record.Validate(b, record.Limits{MaxBatchBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if h.NumRecords != 2 || h.Control() || h.Codec() != record.CodecNone || h.Idempotent() {
		t.Fatalf("unexpected header %+v", h)
	}
}

func openPartition(t *testing.T) *partition.Partition {
	t.Helper()
	p, err := partition.Open(partition.Options{
		Dir:    t.TempDir(),
		TP:     base.TopicPartition{Topic: TopicName, Partition: 3},
		Config: partition.Config{SegmentBytes: 1 << 20, MaxMessageBytes: 1 << 20, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20},
		Clock:  clock.Real{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAdapterRoundTrip(t *testing.T) {
	p := openPartition(t)
	defer p.Close()
	a := New(p, clock.Real{})
	var want []runtime.Record
	for i := range 5 {
		recs := []runtime.Record{
			{Key: []byte{byte(i), 'a'}, Value: []byte{byte(i)}},
			{Key: []byte{byte(i), 'b'}}, // tombstone
		}
		wait, err := a.Append(recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		want = append(want, recs...)
	}
	var got []runtime.Record
	var from base.Offset
	for {
		recs, next, err := a.ReadFrom(from)
		if err != nil {
			t.Fatal(err)
		}
		if next == from {
			break
		}
		got = append(got, recs...)
		from = next
	}
	if from != 10 || len(got) != len(want) {
		t.Fatalf("read %d records up to %d, want %d up to 10", len(got), from, len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) || (got[i].Value == nil) != (want[i].Value == nil) {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// From the middle of a batch: only the records at or after from.
	recs, next, err := a.ReadFrom(3)
	if err != nil || next != 10 || len(recs) != 7 || !bytes.Equal(recs[0].Key, want[3].Key) {
		t.Fatalf("ReadFrom(3) = %d records, next %d, err %v", len(recs), next, err)
	}
}

func TestAdapterClosedPartitionIsNotLeader(t *testing.T) {
	p := openPartition(t)
	a := New(p, clock.Real{})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := a.Append([]runtime.Record{{Key: []byte("k"), Value: []byte("v")}})
	if !errors.Is(err, runtime.ErrNotLeader) {
		t.Fatalf("Append on a closed partition: %v, want ErrNotLeader", err)
	}
}

// A new leader loads its coordinator state to its log end, past a high
// watermark it learned from the old leader a fetch late: the records above
// it are durable on this replica, which every other replica now follows,
// and may be the last state change the old coordinator answered.
func TestAdapterReadsToTheLogEndAboveTheHighWatermark(t *testing.T) {
	p := openPartition(t)
	defer p.Close()
	if err := p.BecomeFollower(0); err != nil {
		t.Fatal(err)
	}
	batch := EncodeBatch([]runtime.Record{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2"), Value: []byte("v2")}}, 1234)
	record.SetPartitionLeaderEpoch(batch, 0)
	if _, err := p.AppendAsFollower(batch); err != nil {
		t.Fatal(err)
	}
	if err := p.BecomeLeader(1); err != nil {
		t.Fatal(err)
	}
	if off := p.Offsets(); off.HighWatermark != 0 || off.LogEnd != 2 {
		t.Fatalf("offsets %+v: the test needs a high watermark below the log end", off)
	}
	recs, next, err := New(p, clock.Real{}).ReadFrom(0)
	if err != nil || next != 2 || len(recs) != 2 {
		t.Fatalf("ReadFrom(0) = %d records, next %d, err %v; want both records, next 2", len(recs), next, err)
	}
}
