package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTieredTransactionIndex: on a tiered topic, a committed, an aborted
// and a committed transaction are uploaded and expire locally; a
// read_committed consumer from the start then reads, from the remote
// tier, only the committed records (read_uncommitted reads all three),
// and the bucket holds one transaction index, in Kafka's layout, with the
// one aborted transaction, uploaded with the segment holding its ABORT
// marker.
func TestTieredTransactionIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTieredBroker(t, dir)
	const topic = "tiered-txn-index"
	createTieredTopic(t, b.Addr, topic)

	// 1000-byte values: each transaction spans more than a 16 KiB segment.
	cl := txnClient(t, b.Addr, "tiered-txn-index-producer", kgo.ProducerBatchCompression(kgo.NoCompression()))
	committed1 := paddedTo(txnRecords(topic, "c1", 1, 20), 1000)
	aborted := paddedTo(txnRecords(topic, "ab", 1, 20), 1000)
	committed2 := paddedTo(txnRecords(topic, "c2", 1, 40), 1000)
	inTxn(t, cl, true, committed1...)
	inTxn(t, cl, false, aborted...)
	inTxn(t, cl, true, committed2...)
	writeSentinels(t, b.Addr, topic, 1)

	// One producer: its ABORT marker directly follows its last aborted record.
	first, marker := aborted[0].Offset, aborted[len(aborted)-1].Offset+1
	waitLocalStartPast(t, b.Addr, topic, marker)
	requirePartitionValues(t, "read_committed from the remote tier",
		readToSentinels(t, b.Addr, topic, 1, kgo.ReadCommitted()), valuesByPartition(committed1, committed2))
	requirePartitionValues(t, "read_uncommitted from the remote tier",
		readToSentinels(t, b.Addr, topic, 1, kgo.ReadUncommitted()), valuesByPartition(committed1, aborted, committed2))

	remote := filepath.Join(dir, "remote")
	var indexes []string
	for _, f := range remoteFiles(t, remote) {
		if strings.HasSuffix(f, ".txnindex") {
			indexes = append(indexes, f)
		}
	}
	if len(indexes) != 1 {
		t.Fatalf("transaction index objects %q, want one (one transaction aborted)", indexes)
	}
	body, err := os.ReadFile(indexes[0])
	if err != nil {
		t.Fatal(err)
	}
	// Kafka's entry: version int16, producerId, firstOffset, lastOffset,
	// lastStableOffset int64, big-endian.
	be := binary.BigEndian
	if len(body) != 34 || be.Uint16(body) != 0 || int64(be.Uint64(body[10:])) != first ||
		int64(be.Uint64(body[18:])) != marker || int64(be.Uint64(body[26:])) != marker+1 {
		t.Fatalf("transaction index %x, want one version-0 entry for [%d, %d] with last stable offset %d", body, first, marker, marker+1)
	}
	var markerBase int64 = -1 // the remote segment holding the marker
	for _, start := range remoteSegmentBases(t, remote) {
		if start <= marker {
			markerBase = start
		}
	}
	if name := filepath.Base(indexes[0]); !strings.HasPrefix(name, fmt.Sprintf("%020d-", markerBase)) {
		t.Fatalf("transaction index %s, want it with the segment at %d, which holds the marker %d", name, markerBase, marker)
	}
}

// paddedTo pads each record's value with 'x' up to n bytes.
func paddedTo(records []*kgo.Record, n int) []*kgo.Record {
	for _, r := range records {
		r.Value = append(r.Value, bytes.Repeat([]byte{'x'}, max(0, n-len(r.Value)))...)
	}
	return records
}
