package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

// With log.cleaner.threads=3 every dirty compacted partition is cleaned by
// the running cleaner, none twice at once (claim), and the broker's Close
// stops every cleaner goroutine (the package's leak check).
func TestCleanerThreadsCleanEveryPartition(t *testing.T) {
	meta := openTestMeta(t)
	o := idleTestOptions(t, meta, partition.Config{SegmentBytes: 1024, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, Compact: true, Compaction: partition.Compaction{MinCleanableRatio: 0.01, DeleteRetention: time.Hour}})
	o.Cleaner = &CleanerOptions{Backoff: 10 * time.Millisecond, DedupeBytes: 3 << 20, Threads: 3}
	b := startTestBroker(t, o)
	const topics = 5
	parts := make([]*partition.Partition, topics)
	before := make([]int64, topics)
	for i := range topics {
		name := fmt.Sprintf("compacted-%d", i)
		createTopic(t, meta, name, 1)
		parts[i] = hostedPartition(t, b, name)
		for j := range 60 {
			if _, _, err := parts[i].Append(keyedBatch(fmt.Sprintf("k%d", j%3)), partition.AcksLeader); err != nil {
				t.Fatal(err)
			}
		}
		before[i] = parts[i].SizeBytes()
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, p := range parts {
		for p.SizeBytes() >= before[i] {
			if time.Now().After(deadline) {
				t.Fatalf("partition %v still %d bytes (%d before) after 30 s of 3 cleaner threads", p.TP(), p.SizeBytes(), before[i])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestCleanerClaim(t *testing.T) {
	var s cleanerState
	p, q := &partition.Partition{}, &partition.Partition{}
	if !s.claim(p) || s.claim(p) || !s.isCleaning(p) || !s.claim(q) {
		t.Fatal("a partition must be claimed by one cleaner at a time, others freely")
	}
	s.release(p)
	if s.isCleaning(p) || !s.claim(p) {
		t.Fatal("a released partition must be claimable again")
	}
}
