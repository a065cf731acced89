package e2e

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// compression.gzip.level (KIP-390) sets the level of the broker's own
// compression: the same uncompressed records stored under
// compression.type=gzip take less room at level 9 than at level 1, and read
// back the same.
func TestCompressionLevelAppliesToRecompression(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	cl := newClient(t, b.Addr, kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	sizes := map[string]int64{}
	for _, level := range []string{"1", "9"} {
		topic := "gzip-level-" + level
		createTopic(t, adm, topic, 1, map[string]*string{
			"compression.type": kadm.StringPtr("gzip"), "compression.gzip.level": kadm.StringPtr(level)})
		var records []*kgo.Record
		for i := range 200 {
			v := bytes.Repeat(fmt.Appendf(nil, "record %d of a log whose words repeat, ", i%7), 40)
			records = append(records, &kgo.Record{Topic: topic, Value: v})
		}
		produceSync(t, cl, records...)
		got := consumeAll(t, b.Addr, topic)
		if len(got[0]) != len(records) || !bytes.Equal(got[0][17].Value, records[17].Value) {
			t.Fatalf("%s: read back %d records", topic, len(got[0]))
		}
		sizes[level] = partitionSizes(t, adm, topic)[0]
	}
	if sizes["9"] >= sizes["1"] {
		t.Fatalf("stored at gzip level 9: %d bytes, at level 1: %d; want level 9 smaller", sizes["9"], sizes["1"])
	}
}
