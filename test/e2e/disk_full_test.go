package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDiskFullKeepsAcknowledgedRecords fills a broker's disk (a small
// tmpfs) with an idempotent acks=all producer. The broker must refuse
// writes with KAFKA_STORAGE_ERROR and log why, go on serving every
// acknowledged record, refuse to start on the full disk with one line that
// names the fix, and once the disk has room start again with every
// acknowledged record there once, in order, and take new ones. The gauge
// strata_failed_logs counts the failed log meanwhile.
func TestDiskFullKeepsAcknowledgedRecords(t *testing.T) {
	t.Parallel()
	disk := mountSmallDisk(t, 80)
	dir := filepath.Join(disk, "data")
	b := startBroker(t, dir, "strata.metrics.listener=127.0.0.1:0")
	const topic = "disk-full"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)
	if n := scrape(t, metricsBase(t, b)+"/metrics")["strata_failed_logs"]; n != 0 {
		t.Fatalf("strata_failed_logs %v before the disk filled, want 0", n)
	}

	acked := fillDisk(t, b.Addr, topic)
	if len(acked) == 0 {
		t.Fatal("no record was acknowledged before the disk filled")
	}
	t.Logf("%d records acknowledged before the disk filled", len(acked))

	c := dialRaw(t, b.Addr)
	if p := rawProduce(t, c, 1, topic, recordBatch(time.Now(), []byte("one more"))); p.ErrorCode != 56 {
		t.Fatalf("produce to a full disk: code %d, want 56 (KAFKA_STORAGE_ERROR)", p.ErrorCode)
	}
	c.Close()
	if out := b.output.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "the disk is full") {
		t.Errorf("the broker did not log the failed log as an error naming the full disk; its output:\n%s", out)
	}
	checkAcked(t, b.Addr, topic, acked, "on the full disk")
	if n := scrape(t, metricsBase(t, b)+"/metrics")["strata_failed_logs"]; n != 1 {
		t.Errorf("strata_failed_logs %v on the full disk, want 1", n)
	}

	// A crash on the full disk: recovery cannot rebuild what it must.
	b.Kill()
	leaveFree(t, disk, 0)
	out, code := runCLI(t, "serve", "--listen", b.Addr, "--data-dir", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if code == 0 || !strings.HasPrefix(last, "strata: no space left on the disk of "+dir) || !strings.Contains(last, "free space on it") {
		t.Fatalf("starting on the full disk: exit %d, last line %q; want non-zero and one line naming %s and the fix", code, last, dir)
	}

	growSmallDisk(t, disk, 160)
	b.Restart()
	checkAcked(t, b.Addr, topic, acked, "after the disk grew")
	cl := newClient(t, b.Addr)
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after the disk grew: %v", err)
	}
}

// mountSmallDisk mounts a tmpfs of sizeMiB under a temporary directory for
// the test, and unmounts it after the broker's cleanup. It skips the test
// where mounting is not allowed.
func mountSmallDisk(t *testing.T, sizeMiB int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", sizeMiB), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, bytes.TrimSpace(out))
		}
	})
	return dir
}

func growSmallDisk(t *testing.T, dir string, sizeMiB int) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%dm", sizeMiB), dir).CombinedOutput(); err != nil {
		t.Fatalf("growing the tmpfs at %s: %v: %s", dir, err, bytes.TrimSpace(out))
	}
}

// fillDisk produces 1 KiB records to partition 0 of topic until a record
// fails, and returns the values of those acknowledged, in offset order.
func fillDisk(t *testing.T, addr, topic string) [][]byte {
	t.Helper()
	cl := newClient(t, addr, kgo.RecordDeliveryTimeout(3*time.Second), kgo.ProducerLinger(0))
	var acked [][]byte
	const maxRecords = 200_000 // 200 MiB: far past the disk
	for len(acked) < maxRecords {
		batch := make([]*kgo.Record, 200)
		for i := range batch {
			v := make([]byte, 1024) // random: the producer compresses
			rand.Read(v[9:])
			copy(v, fmt.Sprintf("r%08d", len(acked)+i))
			batch[i] = &kgo.Record{Topic: topic, Value: v}
		}
		failed := false
		for _, r := range cl.ProduceSync(context.Background(), batch...) {
			switch {
			case r.Err != nil:
				failed = true
			case r.Record.Offset != int64(len(acked)):
				t.Fatalf("record %q acknowledged at offset %d, want %d", r.Record.Value[:9], r.Record.Offset, len(acked))
			default:
				acked = append(acked, r.Record.Value)
			}
		}
		if failed {
			return acked
		}
	}
	t.Fatalf("%d records acknowledged and the disk never filled", len(acked))
	return nil
}

// checkAcked reads partition 0 of topic from the start: it must begin with
// the acknowledged values, in order.
func checkAcked(t *testing.T, addr, topic string, acked [][]byte, when string) {
	t.Helper()
	got := consumeAll(t, addr, topic)[0]
	if len(got) < len(acked) {
		t.Fatalf("%s: %d records, want the %d acknowledged", when, len(got), len(acked))
	}
	for i, want := range acked {
		if !bytes.Equal(got[i].Value, want) || got[i].Offset != int64(i) {
			t.Fatalf("%s: offset %d holds %q at %d, want %q", when, i, got[i].Value[:9], got[i].Offset, want[:9])
		}
	}
}
