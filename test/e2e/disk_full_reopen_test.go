package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDiskFullReopensOnceTheDiskHasRoom fills a single node's disk (a small
// tmpfs): the partition's log fails and refuses writes, and stays failed
// while the disk is full. Once the disk grows, without a restart, the
// broker reopens the log by itself: every acknowledged record is there
// once, in order, and a producer's next record follows them.
func TestDiskFullReopensOnceTheDiskHasRoom(t *testing.T) {
	t.Parallel()
	disk := mountSmallDisk(t, 80)
	b := startBroker(t, filepath.Join(disk, "data"), "strata.metrics.listener=127.0.0.1:0")
	const topic = "disk-room"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)
	acked := fillDisk(t, b.Addr, topic)
	if len(acked) == 0 {
		t.Fatal("no record was acknowledged before the disk filled")
	}

	// Still full: the log stays failed (the broker checks every 2 s).
	time.Sleep(5 * time.Second)
	c := dialRaw(t, b.Addr)
	if p := rawProduce(t, c, 1, topic, recordBatch(time.Now(), []byte("still full"))); p.ErrorCode != 56 {
		t.Fatalf("produce to a full disk: code %d, want 56 (KAFKA_STORAGE_ERROR)", p.ErrorCode)
	}
	c.Close()
	if n := scrape(t, metricsBase(t, b)+"/metrics")["strata_failed_logs"]; n != 1 {
		t.Fatalf("strata_failed_logs %v on the full disk, want 1", n)
	}

	growSmallDisk(t, disk, 160)
	cl := newClient(t, b.Addr)
	r, err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte("after the disk grew")}).First()
	if err != nil {
		t.Fatalf("produce after the disk grew, without a restart: %v", err)
	}
	if r.Offset < int64(len(acked)) {
		t.Fatalf("the record after the disk grew went to offset %d, inside the %d acknowledged", r.Offset, len(acked))
	}
	checkAcked(t, b.Addr, topic, acked, "after the log reopened")
	if n := scrape(t, metricsBase(t, b)+"/metrics")["strata_failed_logs"]; n != 0 {
		t.Errorf("strata_failed_logs %v after the log reopened, want 0", n)
	}
	waitOutput(t, "the broker", b.output.String, "reopened a partition's log that had failed on a full disk")
}
