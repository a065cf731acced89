package api

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/partition/producers"
)

func TestDescribeProducersRegistered(t *testing.T) {
	h := &Handler{}
	if !h.Supported(61, 0) || h.Supported(61, 1) {
		t.Fatal("DescribeProducers must be registered at v0 only")
	}
}

func TestActiveProducer(t *testing.T) {
	type wire = kmsg.DescribeProducersResponseTopicPartitionActiveProducer
	batches := []producers.BatchMeta{
		{FirstSeq: 0, LastSeq: 4, FirstOffset: 10, LastOffset: 14, TimestampMs: 1000},
		{FirstSeq: 5, LastSeq: 6, FirstOffset: 20, LastOffset: 21, TimestampMs: 2000},
	}
	cases := []struct {
		name  string
		entry producers.Entry
		want  wire
	}{
		{
			name:  "idempotent producer",
			entry: producers.Entry{ProducerID: 7, Epoch: 3, Batches: batches, LastTimestampMs: 2000, CoordinatorEpoch: producers.NoCoordinatorEpoch},
			want: wire{ProducerID: 7, ProducerEpoch: 3, LastSequence: 6, LastTimestamp: 2000,
				CoordinatorEpoch: -1, CurrentTxnStartOffset: -1},
		},
		{
			name: "open transaction",
			entry: producers.Entry{ProducerID: 9, Epoch: 1, Batches: batches[:1], LastTimestampMs: 1000,
				CoordinatorEpoch: 4, CurrentTxnFirstOffset: producers.SomeOffset(10)},
			want: wire{ProducerID: 9, ProducerEpoch: 1, LastSequence: 4, LastTimestamp: 1000,
				CoordinatorEpoch: 4, CurrentTxnStartOffset: 10},
		},
		{
			// A marker that bumped the epoch cleared the batches: the next
			// batch starts at sequence 0, so the last one is Kafka's -1.
			name:  "no batch in its epoch",
			entry: producers.Entry{ProducerID: 11, Epoch: 2, LastTimestampMs: 3000, CoordinatorEpoch: 1},
			want: wire{ProducerID: 11, ProducerEpoch: 2, LastSequence: -1, LastTimestamp: 3000,
				CoordinatorEpoch: 1, CurrentTxnStartOffset: -1},
		},
		{
			// A coordinator's producer (TxnOffsetCommit batches) has no
			// sequences but may hold a transaction open.
			name: "coordinator batch in a transaction",
			entry: producers.Entry{ProducerID: 12, Epoch: 0, LastTimestampMs: 4000,
				CurrentTxnFirstOffset: producers.SomeOffset(0)},
			want: wire{ProducerID: 12, ProducerEpoch: 0, LastSequence: -1, LastTimestamp: 4000,
				CoordinatorEpoch: 0, CurrentTxnStartOffset: 0},
		},
	}
	for _, tc := range cases {
		if got := activeProducer(tc.entry); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: activeProducer = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := activeProducers(nil); got == nil || len(got) != 0 {
		t.Errorf("activeProducers(nil) = %#v, want an empty list", got)
	}
}

func TestDescribeProducersTopicError(t *testing.T) {
	cases := []struct {
		name    string
		exists  bool
		want    int16
		wantMsg bool
	}{
		{"orders", true, 0, false},
		{"orders", false, kerr.UnknownTopicOrPartition.Code, true},
		{"", false, kerr.InvalidTopicException.Code, true},
		{"bad/name", false, kerr.InvalidTopicException.Code, true},
		{"..", false, kerr.InvalidTopicException.Code, true},
	}
	for _, tc := range cases {
		code, msg := describeProducersTopicError(tc.name, tc.exists)
		if code != tc.want || (msg != nil) != tc.wantMsg {
			t.Errorf("describeProducersTopicError(%q, %v) = %d, %v; want %d, message %v", tc.name, tc.exists, code, msg, tc.want, tc.wantMsg)
		}
	}
}
