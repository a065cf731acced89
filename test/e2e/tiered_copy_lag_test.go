package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestTieredCopyLag: remote.copy.lag.bytes (KIP-1241) holds rolled
// segments back from upload while less than that much log follows them,
// and altering it releases them at the next tier pass.
func TestTieredCopyLag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startTieredBroker(t, dir)
	adm := newAdmin(t, b.Addr)
	const topic = "tiered-copy-lag"
	createTopic(t, adm, topic, 1, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"remote.copy.lag.bytes": kadm.StringPtr("100000000"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
	cl := newProducer(t, b.Addr, topic)
	var values [][]byte
	produceRandom(t, cl, 100, 1000, &values) // about six rolled segments
	time.Sleep(time.Second)                  // five tier passes
	if last := listOffsetAt(t, b.Addr, topic, -5); last != -1 {
		t.Fatalf("last tiered offset %d inside a 100 MB copy lag, want -1 (nothing tiered)", last)
	}
	setTopicConfig(t, adm, topic, "remote.copy.lag.bytes", "0")
	segs := newSegmentSizes(filepath.Join(dir, topic+"-0"))
	waitRolledTiered(t, b.Addr, topic, segs)
	checkAll(t, b.Addr, topic, values)
}
