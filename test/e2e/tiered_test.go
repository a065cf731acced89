package e2e

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTieredDirStore runs the tier loop for real against the directory
// store: rolled segments are uploaded, local retention deletes them
// locally while the log start stays 0, and consumers read every record
// from the beginning, across the local/remote seam, before and after a
// restart (the remote view comes from the metadata quorum).
func TestTieredDirStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "log.segment.bytes=16384", "remote.log.manager.task.interval.ms=200",
		"log.retention.check.interval.ms=200")
	adm := newAdmin(t, b.Addr)
	const topic = "tiered"
	createTopic(t, adm, topic, 1, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("20000"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const n = 300
	values := make([][]byte, n)
	for i := range values {
		values[i] = make([]byte, 1000)
		rand.Read(values[i])
		produceSync(t, cl, &kgo.Record{Value: values[i]})
	}

	waitTiered(t, b.Addr, topic)
	t.Logf("local log start %d, last tiered %d, pending %d", listOffsetAt(t, b.Addr, topic, -4), listOffsetAt(t, b.Addr, topic, -5), listOffsetAt(t, b.Addr, topic, -6))
	if last := listOffsetAt(t, b.Addr, topic, -5); last < 0 {
		t.Fatalf("last tiered offset %d after local retention moved", last)
	}
	if pending := listOffsetAt(t, b.Addr, topic, -6); pending <= 0 {
		t.Fatalf("earliest pending upload %d", pending)
	}
	checkAll(t, b.Addr, topic, values)
	if entries, err := os.ReadDir(filepath.Join(dir, "remote")); err != nil || len(entries) == 0 {
		t.Fatalf("remote dir: %v entries, %v", len(entries), err)
	}

	b.Stop()
	b.Restart()
	if got := listOffsetAt(t, b.Addr, topic, -2); got != 0 {
		t.Fatalf("earliest offset %d after restart, want 0", got)
	}
	checkAll(t, b.Addr, topic, values)

	// Kill mid-produce: every acknowledged record survives.
	cl2 := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	acked := append([][]byte(nil), values...)
	for i := range 100 {
		v := make([]byte, 1000)
		rand.Read(v)
		produceSync(t, cl2, &kgo.Record{Value: v})
		acked = append(acked, v)
		if i == 60 {
			break
		}
	}
	cl2.Close()
	b.Kill()
	b.Restart()
	checkAll(t, b.Addr, topic, acked)

	// DeleteRecords into the remote part: the log start moves at once; the
	// tier loop deletes the remote segments wholly below it and keeps the
	// one holding it.
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: topic, Partition: 0, At: 50})
	if resp, err := newAdmin(t, b.Addr).DeleteRecords(testContext(t, 10*time.Second), del); err != nil || resp.Error() != nil {
		t.Fatalf("DeleteRecords: %v, %v", err, resp.Error())
	}
	if got := listOffsetAt(t, b.Addr, topic, -2); got != 50 {
		t.Fatalf("earliest offset %d after DeleteRecords(50)", got)
	}
	got := consumeAll(t, b.Addr, topic)[0]
	if len(got) != len(acked)-50 || got[0].Offset != 50 || !bytes.Equal(got[0].Value, acked[50]) {
		t.Fatalf("after DeleteRecords(50): %d records from %d", len(got), firstOffset(got))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		bases := remoteSegmentBases(t, filepath.Join(dir, "remote"))
		if len(bases) == 0 || bases[0] > 50 {
			t.Fatalf("the remote segment holding offset 50 was deleted: remote bases %v", bases)
		}
		if len(bases) < 2 || bases[1] > 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("remote segments below the new log start 50 were not deleted: remote bases %v", bases)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remoteSegmentBases lists, ascending, the base offsets of the segment
// data objects in a directory store (keys end in <base>-<segment id>.log).
func remoteSegmentBases(t *testing.T, root string) []int64 {
	t.Helper()
	var bases []int64
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".log" {
			return err
		}
		name := filepath.Base(path)
		b, err := strconv.ParseInt(name[:strings.IndexByte(name, '-')], 10, 64)
		if err != nil {
			return fmt.Errorf("object %s: %w", path, err)
		}
		bases = append(bases, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(bases)
	return bases
}

// waitTiered waits until the local log start (-4) moves past 0 while the
// earliest offset (-2) stays 0.
func waitTiered(t *testing.T, addr, topic string) {
	t.Helper()
	waitLocalStartPast(t, addr, topic, 0)
}

// waitLocalStartPast waits until the local log start (-4) is past offset,
// while the earliest offset (-2) stays 0.
func waitLocalStartPast(t *testing.T, addr, topic string, offset int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		local := listOffsetAt(t, addr, topic, -4)
		if earliest := listOffsetAt(t, addr, topic, -2); earliest != 0 {
			t.Fatalf("earliest offset moved to %d; nothing is outside retention", earliest)
		}
		if local > offset {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local log start stayed at %d, want past %d", local, offset)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkAll consumes topic from its start and compares with want.
func checkAll(t *testing.T, addr, topic string, want [][]byte) {
	t.Helper()
	got := consumeAll(t, addr, topic)[0]
	if len(got) != len(want) {
		t.Fatalf("consumed %d records (from %d), want %d", len(got), firstOffset(got), len(want))
	}
	for i, r := range got {
		if r.Offset != int64(i) || !bytes.Equal(r.Value, want[i]) {
			t.Fatalf("record %d: offset %d, value equal %v", i, r.Offset, bytes.Equal(r.Value, want[i]))
		}
	}
}

// listOffsetAt asks ListOffsets for partition 0 of topic with a special
// timestamp (-2 earliest, -4 earliest local, -5 last tiered, -6 earliest
// pending upload).
func listOffsetAt(t *testing.T, addr, topic string, ts int64) int64 {
	t.Helper()
	offset, _ := listOffsetWithTs(t, addr, topic, ts)
	return offset
}

// listOffsetWithTs is listOffsetAt that also returns the answer's timestamp.
func listOffsetWithTs(t *testing.T, addr, topic string, ts int64) (offset, timestamp int64) {
	t.Helper()
	cl := newClient(t, addr)
	defer cl.Close()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
	if err != nil {
		t.Fatalf("ListOffsets %d: %v", ts, err)
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatalf("ListOffsets %d: %v", ts, err)
	}
	return p.Offset, p.Timestamp
}
