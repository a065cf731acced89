package share

import (
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// BenchmarkAcquireAccept is a share-partition's steady state: a member
// acquires the next 50 batches of 10 records and accepts them. The start
// moves on, so the in-flight window stays small: what a share group costs
// its leader per fetch, apart from the read and the state write.
func BenchmarkAcquireAccept(b *testing.B) {
	lim := Limits{DeliveryLimit: 5, LockDuration: 30 * time.Second, MaxInFlight: 2000}
	now := time.Unix(1000, 0)
	p := New(0)
	batches := make([]base.Range, 50)
	b.ReportAllocs()
	for b.Loop() {
		from := p.NextFetch()
		for i := range batches {
			batches[i] = base.Range{Start: from + base.Offset(10*i), End: from + base.Offset(10*i+10)}
		}
		got := p.Acquire("m", Read{From: from, Batches: batches}, 500, BatchOptimized, lim, now)
		acks := []Ack{{Offsets: base.Range{Start: got[0].Offsets.Start, End: got[len(got)-1].Offsets.End}, Types: []AckType{AckAccept}}}
		if err := p.Acknowledge("m", acks, lim, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcknowledgeOneByOne acknowledges 500 acquired records one
// acknowledgement batch each, alternating accept and release, as a client
// that acknowledges records one by one: the runs split and merge.
func BenchmarkAcknowledgeOneByOne(b *testing.B) {
	lim := Limits{DeliveryLimit: 5, LockDuration: 30 * time.Second, MaxInFlight: 2000}
	now := time.Unix(1000, 0)
	acks := make([]Ack, 500)
	b.ReportAllocs()
	for b.Loop() {
		p := New(0)
		p.Acquire("m", Read{From: 0, Batches: []base.Range{{Start: 0, End: 500}}}, 500, BatchOptimized, lim, now)
		for i := range acks {
			typ := AckAccept
			if i%2 == 1 {
				typ = AckRelease
			}
			acks[i] = Ack{Offsets: base.Range{Start: base.Offset(i), End: base.Offset(i + 1)}, Types: []AckType{typ}}
		}
		if err := p.Acknowledge("m", acks, lim, now); err != nil {
			b.Fatal(err)
		}
	}
}
