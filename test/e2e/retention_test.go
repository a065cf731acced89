package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRetentionBySizeAndTime runs the broker's retention loop for real:
// with small segments, retention.bytes trims whole old segments and keeps
// at least retention.bytes, retention.ms drops segments whose records are
// older, the earliest offset moves forward, and consumers start there.
func TestRetentionBySizeAndTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "log.segment.bytes=16384", "log.retention.check.interval.ms=200")
	adm := newAdmin(t, b.Addr)
	value := bytes.Repeat([]byte("v"), 1000)

	t.Run("retention.bytes", func(t *testing.T) {
		const topic = "ret-size"
		createTopic(t, adm, topic, 1, map[string]*string{"retention.bytes": kadm.StringPtr("50000")})
		cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
		for range 200 { // ~200 KB in ~13 segments
			produceSync(t, cl, &kgo.Record{Value: value})
		}
		// Passes ran while records arrived: wait for one after the last.
		partDir := filepath.Join(dir, topic+"-0")
		deadline := time.Now().Add(20 * time.Second)
		for localLogBytes(t, partDir) > 50000+2*16384 {
			if time.Now().After(deadline) {
				t.Fatalf("retention kept %d bytes; with 16 KiB segments at most ~%d should remain", localLogBytes(t, partDir), 50000+2*16384)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if kept := localLogBytes(t, partDir); kept < 50000 {
			t.Fatalf("retention took the log to %d bytes, below retention.bytes=50000", kept)
		}
		start := waitForStart(t, adm, topic, func(o int64) bool { return o > 0 })
		got := consumeAll(t, b.Addr, topic)[0]
		if len(got) == 0 || got[0].Offset != start || got[len(got)-1].Offset != 199 {
			t.Fatalf("consumed %d records from %d; want %d..199", len(got), firstOffset(got), start)
		}
	})

	t.Run("retention.ms", func(t *testing.T) {
		const topic = "ret-time"
		createTopic(t, adm, topic, 1, map[string]*string{"retention.ms": kadm.StringPtr("60000")})
		// kgo starts a record's delivery timeout at its timestamp: allow
		// records stamped an hour ago.
		cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.RecordDeliveryTimeout(2*time.Hour))
		old := time.Now().Add(-time.Hour)
		for range 40 { // records an hour old: outside retention.ms
			produceSync(t, cl, &kgo.Record{Value: value, Timestamp: old})
		}
		for range 20 { // fresh records roll the old segments and stay
			produceSync(t, cl, &kgo.Record{Value: value, Timestamp: time.Now()})
		}
		start := waitForStart(t, adm, topic, func(o int64) bool { return o > 0 })
		if start > 40 {
			t.Fatalf("retention.ms moved the log start to %d, past the fresh records from 40", start)
		}
	})
}

// waitForStart polls the earliest offset of partition 0 until ok says so.
func waitForStart(t *testing.T, adm *kadm.Client, topic string, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		listed := listOffsets(t, adm.ListStartOffsets, topic)
		o, _ := listed.Lookup(topic, 0)
		if ok(o.Offset) {
			return o.Offset
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the log start stayed at %d", topic, o.Offset)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func localLogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			size, _ := segmentDataBytes(t, filepath.Join(dir, e.Name()))
			n += size
		}
	}
	return n
}

func firstOffset(rs []*kgo.Record) int64 {
	if len(rs) == 0 {
		return -1
	}
	return rs[0].Offset
}
