package e2e

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// tierSettle bounds each wait for the tier loop (interval 200 ms in these
// tests) to copy or to apply retention.
const tierSettle = 20 * time.Second

// tieredOverrides are the broker settings of the tiered tests: 16 KiB
// segments, and the tier loop and retention checks every 200 ms.
var tieredOverrides = []string{
	"log.segment.bytes=16384", "remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200",
}

// startTieredBroker starts a broker in dir with tieredOverrides, then
// overrides.
func startTieredBroker(t *testing.T, dir string, overrides ...string) *Broker {
	t.Helper()
	return startBroker(t, dir, append(slices.Clone(tieredOverrides), overrides...)...)
}

// createTieredTopic creates topic with one partition in the remote tier:
// 20000 bytes of local retention (about one 16 KiB segment) and no total
// retention, so the log start stays 0 while local segments go.
func createTieredTopic(t *testing.T, addr, topic string) {
	t.Helper()
	createTopic(t, newAdmin(t, addr), topic, 1, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("20000"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
}

// newProducer returns a client that produces to topic uncompressed, so
// that record bytes are segment bytes.
func newProducer(t *testing.T, addr, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, addr, append([]kgo.Opt{kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)...)
}

// fillTieredTopic creates topic (createTieredTopic), produces n
// incompressible 1000-byte records to it one at a time and returns their
// values.
func fillTieredTopic(t *testing.T, addr, topic string, n int) [][]byte {
	t.Helper()
	createTieredTopic(t, addr, topic)
	cl := newProducer(t, addr, topic)
	defer cl.Close()
	var values [][]byte
	produceRandom(t, cl, n, 1000, &values)
	return values
}

// segmentSizes records the byte size of each local segment of one
// partition by base offset. Sizes are remembered after the broker deletes
// a segment, so that retention bounds can still be computed from them;
// a sealed segment never changes size, and the active one is re-read on
// every refresh.
type segmentSizes struct {
	partDir string
	sizes   map[int64]int64
	active  int64 // base of the highest local segment at the last refresh
}

func newSegmentSizes(partDir string) *segmentSizes {
	return &segmentSizes{partDir: partDir, sizes: make(map[int64]int64)}
}

// refresh reads the local .log files of the partition and counts their
// batches' bytes (the active one's file runs on in zeros).
func (s *segmentSizes) refresh(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir(s.partDir)
	if err != nil {
		t.Fatalf("listing %s: %v", s.partDir, err)
	}
	s.active = -1
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".log") || e.IsDir() {
			continue
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(name, ".log"), 10, 64)
		if err != nil {
			continue // not a segment
		}
		size, ok := segmentDataBytes(t, filepath.Join(s.partDir, name))
		if !ok {
			continue // deleted by retention meanwhile
		}
		s.sizes[base] = size
		s.active = max(s.active, base)
	}
	if s.active < 0 {
		t.Fatalf("no segment in %s", s.partDir)
	}
}

// basesFrom returns the known segment bases >= from, ascending.
func (s *segmentSizes) basesFrom(from int64) []int64 {
	var out []int64
	for b := range s.sizes {
		if b >= from {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}

// bytesFrom is the size of the log from the segment based at start to the
// end, counted once per offset.
func (s *segmentSizes) bytesFrom(start int64) int64 {
	var n int64
	for _, b := range s.basesFrom(start) {
		n += s.sizes[b]
	}
	return n
}

// expectedStart is where size retention must leave the log start when the
// log starts at from: deleting oldest first, a segment goes only if what
// remains is still >= limit, and the active (highest) segment never goes.
// It is the highest base b such that the segments from b hold >= limit
// bytes, or from if even the whole log is below limit.
func (s *segmentSizes) expectedStart(from, limit int64) int64 {
	bases := s.basesFrom(from)
	var acc int64
	for i := len(bases) - 1; i >= 0; i-- {
		acc += s.sizes[bases[i]]
		if acc >= limit {
			return bases[i]
		}
	}
	return from
}

// waitRolledTiered refreshes sizes until the last offset in the remote
// tier (ListOffsets -5) is the last offset before the active segment: every
// rolled segment is tiered. Nothing may be produced meanwhile.
func waitRolledTiered(t *testing.T, addr, topic string, segs *segmentSizes) {
	t.Helper()
	waitRolledTieredWithin(t, addr, topic, segs, tierSettle)
}

// waitRolledTieredWithin is waitRolledTiered with another bound, e.g. a
// longer one for a tier that uploads slowly.
func waitRolledTieredWithin(t *testing.T, addr, topic string, segs *segmentSizes, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		segs.refresh(t)
		last := listOffsetAt(t, addr, topic, -5)
		if last == segs.active-1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, last tiered offset %d, want %d (the active segment starts at %d)",
				d, last, segs.active-1, segs.active)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// produceRandom produces n incompressible records of size bytes one at a
// time (one batch each) and appends their values to *values.
func produceRandom(t *testing.T, cl *kgo.Client, n, size int, values *[][]byte) {
	t.Helper()
	for range n {
		v := make([]byte, size)
		rand.Read(v)
		produceSync(t, cl, &kgo.Record{Value: v})
		*values = append(*values, v)
	}
}

// checkFrom consumes topic from its earliest offset, which must be start,
// to its end and compares with all[start:].
func checkFrom(t *testing.T, addr, topic string, all [][]byte, start int64) {
	t.Helper()
	got := consumeAll(t, addr, topic)[0]
	want := all[start:]
	if len(got) != len(want) || (len(got) > 0 && got[0].Offset != start) {
		t.Fatalf("consumed %d records from offset %d, want %d from %d", len(got), firstOffset(got), len(want), start)
	}
	for i, r := range got {
		if r.Offset != start+int64(i) || !bytes.Equal(r.Value, want[i]) {
			t.Fatalf("record %d: offset %d (want %d), value equal %v", i, r.Offset, start+int64(i), bytes.Equal(r.Value, want[i]))
		}
	}
}

// setTopicConfig sets one config of topic with IncrementalAlterConfigs.
func setTopicConfig(t *testing.T, adm *kadm.Client, topic, key, value string) {
	t.Helper()
	resps, err := adm.AlterTopicConfigs(testContext(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(value)},
	}, topic)
	requireAlterOK(t, resps, err, topic)
}

// remoteLogObjects lists the segment data objects (*.log) under root, a
// directory store or a versitygw posix bucket, sorted.
func remoteLogObjects(t *testing.T, root string) []string {
	t.Helper()
	return slices.DeleteFunc(remoteFiles(t, root), func(path string) bool { return !strings.HasSuffix(path, ".log") })
}

// remoteFiles lists the objects under root, a directory store or a
// versitygw posix bucket (its regular files outside hidden directories:
// versitygw keeps its temporary files there), sorted.
func remoteFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil // deleted while we walk
		}
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		// A temporary file is a Put in flight or the debris of one a
		// kill cut, not an object: the store removes it once it is old.
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".strata-tmp-") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
