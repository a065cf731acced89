package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterNodeWithFullDiskLeaves fills one node's disk (a tmpfs with a
// few MiB free) under an idempotent acks=all producer writing to a topic
// with three replicas, while the other nodes have room. The node whose
// partition logs fail must leave the cluster on its own (an ERROR saying
// so, then a controlled shutdown that hands its leaderships over), and the
// producer must go on through the other two without losing or repeating an
// acknowledged record.
func TestClusterNodeWithFullDiskLeaves(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic = "cluster-disk-full"
	c.createTopic(adm, topic, 3, 3, nil)
	c.waitISR(adm, topic, 3)

	// Node 3 moves to a small disk: its data is copied there while it is
	// stopped, and the disk is filled but for a few MiB.
	full := c.Node(3)
	full.Stop()
	disk := mountSmallDisk(t, 200)
	t.Cleanup(func() { // before the unmount
		if full.running() {
			full.Kill()
		}
	})
	moved := filepath.Join(disk, "data")
	if out, err := exec.Command("cp", "-a", "--sparse=always", full.Dir, moved).CombinedOutput(); err != nil {
		t.Fatalf("copying node 3's data to the small disk: %v: %s", err, bytes.TrimSpace(out))
	}
	full.Dir = moved
	full.Restart()
	c.waitBrokers(c.ids()...)
	c.waitISR(adm, topic, 3)
	// Node 3 leads a partition (its preferred one) and follows the others.
	c.electPreferredLeaders(adm, topic, 3)
	c.waitOffsetsAvailable(adm, topic)
	leaveFree(t, disk, 6<<20)

	p := startBulkProducer(t, c, topic)
	cmd, exited := full.current()
	select {
	case <-exited:
	case <-time.After(clusterSettleTimeout):
		t.Fatalf("node 3 still runs %v after the producer started on its full disk", clusterSettleTimeout)
	}
	full.setStopping() // it left on its own, as it must
	if code := cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("node 3 exited with status 0 after its logs failed, want non-zero")
	}
	waitOutput(t, "node 3", full.output.String, "the disk is full", `msg="leaving the cluster"`)

	// The producer goes on through nodes 1 and 2.
	before := p.count()
	deadline := time.Now().Add(clusterSettleTimeout)
	for p.count() < before+2000 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	acked := p.stop(t)
	if len(acked) < before+2000 {
		t.Fatalf("the producer acknowledged %d records after node 3 left, want 2000 more", len(acked)-before)
	}
	state := c.waitPartitions(adm, topic, "a leader on node 1 or 2", func(s partitionState) bool { return s.Leader == 1 || s.Leader == 2 })
	t.Logf("%d records acknowledged (%d before node 3 left); partitions now %v", len(acked), before, state)
	checkAckedByPartition(t, c.Node(1).Addr, topic, acked)
}

// leaveFree fills the disk at dir with a file until at most free bytes
// are left on it (0: until a write fails for want of space).
func leaveFree(t *testing.T, dir string, free uint64) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "filler"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		if free == 0 && errors.Is(err, syscall.ENOSPC) {
			return
		}
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		avail := st.Bavail * uint64(st.Bsize)
		if avail <= free {
			return
		}
		if _, err := f.Write(chunk[:min(avail-free, uint64(len(chunk)))]); err != nil {
			if free == 0 && errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatalf("filling %s: %v", dir, err)
		}
	}
}

// bulkProducer produces 1 KiB random records to a topic in batches until
// stopped, and keeps what was acknowledged.
type bulkProducer struct {
	cl   *kgo.Client
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	got  []*kgo.Record
	err  error
}

func startBulkProducer(t *testing.T, c *Cluster, topic string) *bulkProducer {
	p := &bulkProducer{cl: c.newClient(kgo.DefaultProduceTopic(topic)), done: make(chan struct{})}
	p.wg.Go(func() {
		for {
			select {
			case <-p.done:
				return
			default:
			}
			batch := make([]*kgo.Record, 100)
			for i := range batch {
				v := make([]byte, 1024) // random: the producer compresses
				rand.Read(v)
				batch[i] = &kgo.Record{Value: v}
			}
			results := p.cl.ProduceSync(context.Background(), batch...)
			p.mu.Lock()
			for _, r := range results {
				if r.Err != nil && p.err == nil {
					p.err = r.Err
				}
				if r.Err == nil {
					p.got = append(p.got, r.Record)
				}
			}
			p.mu.Unlock()
		}
	})
	return p
}

func (p *bulkProducer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

// stop ends the producer and returns what it had acknowledged; a record
// that failed fails the test.
func (p *bulkProducer) stop(t *testing.T) []*kgo.Record {
	t.Helper()
	close(p.done)
	p.wg.Wait()
	if p.err != nil {
		t.Fatalf("a record was not acknowledged: %v", p.err)
	}
	return p.got
}

// checkAckedByPartition reads topic through addr: each partition must hold
// exactly its acknowledged records, in offset order.
func checkAckedByPartition(t *testing.T, addr, topic string, acked []*kgo.Record) {
	t.Helper()
	want := map[int32][]*kgo.Record{}
	for _, r := range acked {
		want[r.Partition] = append(want[r.Partition], r)
	}
	got := consumeAll(t, addr, topic)
	for part, rs := range want {
		g := got[part]
		if len(g) != len(rs) {
			t.Errorf("partition %d holds %d records, want the %d acknowledged", part, len(g), len(rs))
			continue
		}
		for i, r := range rs {
			if g[i].Offset != r.Offset || !bytes.Equal(g[i].Value, r.Value) {
				t.Errorf("partition %d: record %d is at offset %d (%s), want the one acknowledged at %d", part, i, g[i].Offset,
					fmt.Sprintf("%x", g[i].Value[:8]), r.Offset)
				break
			}
		}
	}
}
