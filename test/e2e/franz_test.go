package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// codecCase names a kgo codec and the compression attribute (the low three
// bits of a batch's attributes) a broker must keep for it.
type codecCase struct {
	name  string
	codec kgo.CompressionCodec
	attr  uint8
}

var kgoCodecs = []codecCase{
	{"none", kgo.NoCompression(), 0},
	{"gzip", kgo.GzipCompression(), 1},
	{"snappy", kgo.SnappyCompression(), 2},
	{"lz4", kgo.Lz4Compression(), 3},
	{"zstd", kgo.ZstdCompression(), 4},
}

// TestFranzRoundTrip produces keys, values, headers and timestamps with every
// codec into a three-partition topic, then reads them back with a fresh
// client from the start: every field and the order per partition must match.
func TestFranzRoundTrip(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)

	for _, cc := range kgoCodecs {
		t.Run(cc.name, func(t *testing.T) {
			t.Parallel()
			topic := "franz-" + cc.name
			const partitions = 3
			createTopic(t, adm, topic, partitions, nil)

			producer := newClient(t, b.Addr,
				kgo.ProducerBatchCompression(cc.codec),
				kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.ProducerLinger(5*time.Millisecond),
			)
			const n = 600
			base := pastBase()
			want := make(map[int32][]*kgo.Record)
			var all []*kgo.Record
			for i := range n {
				r := sampleRecord(topic, i, base)
				want[r.Partition] = append(want[r.Partition], r)
				all = append(all, r)
			}
			// Several produce calls, so that each partition's log holds
			// several batches.
			for start := 0; start < n; start += 150 {
				produceSync(t, producer, all[start:start+150]...)
			}

			got := consumeAll(t, b.Addr, topic)
			for p := int32(0); p < partitions; p++ {
				requireOffsetsContiguous(t, got[p], 0)
				requireSameRecords(t, want[p], got[p])
				for _, r := range got[p] {
					if c := r.Attrs.CompressionType(); c != cc.attr {
						t.Fatalf("%s/%d@%d: batch compression %d, want %d (compression.type=producer keeps the codec)",
							topic, p, r.Offset, c, cc.attr)
					}
				}
			}
		})
	}
}

// TestFranzAutoCreate produces to a topic that does not exist; the broker
// creates it with num.partitions partitions.
func TestFranzAutoCreate(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "num.partitions=3")
	cl := newClient(t, b.Addr, kgo.AllowAutoTopicCreation())
	const topic = "franz-auto"
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte("first")})

	details, err := newAdmin(t, b.Addr).ListTopics(testContext(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	if d := details[topic]; d.Err != nil || len(d.Partitions) != 3 {
		t.Fatalf("auto-created %q: err %v, %d partitions, want 3 partitions", topic, d.Err, len(d.Partitions))
	}
	var values []string
	for _, rs := range consumeAll(t, b.Addr, topic) {
		for _, r := range rs {
			values = append(values, string(r.Value))
		}
	}
	if len(values) != 1 || values[0] != "first" {
		t.Fatalf("auto-created %q holds %q, want [first]", topic, values)
	}
}

// sampleRecord returns record i of a stream: partition i%3, a nil key every
// tenth record, zero to two headers, and a timestamp that is not monotonic
// so that negative timestamp deltas inside a batch are exercised.
func sampleRecord(topic string, i int, base time.Time) *kgo.Record {
	r := &kgo.Record{
		Topic:     topic,
		Partition: int32(i % 3),
		Value:     []byte(value(topic, i) + strings.Repeat("compressible;", 10+i%40)),
		Timestamp: base.Add(time.Duration((i*7919)%5000) * time.Millisecond),
	}
	if i%10 != 0 {
		r.Key = fmt.Appendf(nil, "key-%d", i)
	}
	switch i % 3 {
	case 1:
		r.Headers = []kgo.RecordHeader{{Key: "trace", Value: fmt.Appendf(nil, "t-%d", i)}}
	case 2:
		r.Headers = []kgo.RecordHeader{
			{Key: "a", Value: []byte("1")},
			{Key: "empty", Value: []byte{}},
		}
	}
	return r
}

// requireSameRecords compares key (including nil-ness), value, headers in
// order and millisecond timestamp of two lists.
func requireSameRecords(t *testing.T, want, got []*kgo.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		where := fmt.Sprintf("%s/%d@%d", g.Topic, g.Partition, g.Offset)
		if (w.Key == nil) != (g.Key == nil) || !bytes.Equal(w.Key, g.Key) {
			t.Fatalf("%s: key %q (nil %v), want %q (nil %v)", where, g.Key, g.Key == nil, w.Key, w.Key == nil)
		}
		if !bytes.Equal(w.Value, g.Value) {
			t.Fatalf("%s: value %q, want %q", where, g.Value, w.Value)
		}
		if len(g.Headers) != len(w.Headers) {
			t.Fatalf("%s: %d headers %v, want %d", where, len(g.Headers), g.Headers, len(w.Headers))
		}
		for j := range w.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) {
				t.Fatalf("%s: header %d is %q=%q, want %q=%q", where, j,
					g.Headers[j].Key, g.Headers[j].Value, w.Headers[j].Key, w.Headers[j].Value)
			}
		}
		if g.Timestamp.UnixMilli() != w.Timestamp.UnixMilli() {
			t.Fatalf("%s: timestamp %d, want %d", where, g.Timestamp.UnixMilli(), w.Timestamp.UnixMilli())
		}
		if g.Attrs.TimestampType() != 0 {
			t.Fatalf("%s: timestamp type %d, want 0 (CreateTime)", where, g.Attrs.TimestampType())
		}
	}
}
