package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const rawIOTimeout = 10 * time.Second

// TestMalformedFramesCloseTheConnection sends frames that no client would
// send; the broker must close that connection, and stay healthy for others.
func TestMalformedFramesCloseTheConnection(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const healthTopic = "malformed-health"
	createTopic(t, newAdmin(t, b.Addr), healthTopic, 1, nil)

	cases := []struct {
		name string
		// send writes the bad input; the connection must then be closed.
		send func(t *testing.T, c *net.TCPConn)
	}{
		{"frame over 100 MiB", func(t *testing.T, c *net.TCPConn) {
			writeAll(t, c, binary.BigEndian.AppendUint32(nil, 100<<20+1))
			writeAll(t, c, make([]byte, 64)) // a prefix of the promised body
		}},
		{"negative frame size", func(t *testing.T, c *net.TCPConn) {
			writeAll(t, c, []byte{0x80, 0, 0, 0})
		}},
		{"truncated frame", func(t *testing.T, c *net.TCPConn) {
			frame := binary.BigEndian.AppendUint32(nil, 100)
			frame = append(frame, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0) // 10 of 100 bytes
			writeAll(t, c, frame)
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
		}},
		{"frame shorter than a request header", func(t *testing.T, c *net.TCPConn) {
			writeAll(t, c, []byte{0, 0, 0, 3, 0, 18, 0})
		}},
		{"client id longer than the frame", func(t *testing.T, c *net.TCPConn) {
			// ApiVersions v2 header whose client id claims 32767 bytes.
			body := []byte{0, 18, 0, 2, 0, 0, 0, 7, 0x7f, 0xff, 'x'}
			writeAll(t, c, append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
		}},
		{"garbage bytes", func(t *testing.T, c *net.TCPConn) {
			body := []byte("GET / HTTP/1.1\r\nHost: strata\r\n\r\n")
			writeAll(t, c, append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
		}},
		{"unknown api key 999", func(t *testing.T, c *net.TCPConn) {
			body := binary.BigEndian.AppendUint16(nil, 999)
			body = binary.BigEndian.AppendUint16(body, 0)
			body = binary.BigEndian.AppendUint32(body, 42)
			body = append(body, 0, 1, 'x') // client id "x"
			writeAll(t, c, append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, b.Addr)
			tc.send(t, c)
			requireClosed(t, c)
			requireHealthy(t, b.Addr, healthTopic, tc.name)
		})
	}
}

// TestProduceWithBadCRC sends a Produce v9 by hand: a well-formed batch is
// appended, the same batch with a wrong CRC is refused with CORRUPT_MESSAGE
// and not appended.
func TestProduceWithBadCRC(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic = "malformed-crc"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)

	c := dialRaw(t, b.Addr)
	good := recordBatch(time.Now(), []byte("good"))
	if p := rawProduce(t, c, 1, topic, good); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("well-formed batch: code %d base offset %d, want 0 and 0", p.ErrorCode, p.BaseOffset)
	}
	bad := recordBatch(time.Now(), []byte("bad"))
	bad[17] ^= 0xff // CRC field: bytes [17, 21) of the batch
	if p := rawProduce(t, c, 2, topic, bad); p.ErrorCode != 2 {
		t.Fatalf("batch with a bad CRC: code %d, want 2 (CORRUPT_MESSAGE)", p.ErrorCode)
	}

	got := consumeAll(t, b.Addr, topic)[0]
	if len(got) != 1 || string(got[0].Value) != "good" {
		t.Fatalf("log holds %d records (first %q), want only the well-formed one", len(got), firstValue(got))
	}
	requireHealthy(t, b.Addr, topic, "bad CRC")
}

func dialRaw(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, clientDialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

func writeAll(t *testing.T, c net.Conn, p []byte) {
	t.Helper()
	if err := c.SetWriteDeadline(time.Now().Add(rawIOTimeout)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(p); err != nil {
		t.Fatalf("writing %d bytes: %v", len(p), err)
	}
}

// requireClosed waits for the broker to close c: a read ends in EOF or a
// reset, not in the deadline.
func requireClosed(t *testing.T, c net.Conn) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(rawIOTimeout)); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection still open %v after the malformed input (read %d bytes)", rawIOTimeout, n)
	}
}

// requireHealthy produces one record with a fresh kgo client (with opts)
// and reads it back.
func requireHealthy(t *testing.T, addr, topic, after string, opts ...kgo.Opt) {
	t.Helper()
	cl := newClient(t, addr, opts...)
	v := []byte(fmt.Sprintf("healthy after %s at %d", after, time.Now().UnixNano()))
	results := cl.ProduceSync(testContext(t, 20*time.Second), &kgo.Record{Topic: topic, Value: v})
	r, err := results.First()
	if err != nil {
		t.Fatalf("producing after %s: %v", after, err)
	}
	reader := newClient(t, addr, append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {r.Partition: kgo.NewOffset().At(r.Offset)},
	}))...)
	ctx := testContext(t, 20*time.Second)
	for {
		fetches := reader.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming after %s: %v", after, ctx.Err())
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("consuming %s/%d after %s: %v", topic, p, after, err)
		})
		if recs := fetches.Records(); len(recs) > 0 {
			if string(recs[0].Value) != string(v) {
				t.Fatalf("after %s read %q at offset %d, want %q", after, recs[0].Value, r.Offset, v)
			}
			return
		}
	}
}

// recordBatch encodes one magic-2 record batch, without producer id, holding
// one record with value v and a correct CRC.
func recordBatch(ts time.Time, v []byte) []byte {
	return recordBatchOf(ts, []kmsg.Record{{Value: v}})
}

// recordBatchOf is a batch of recs (their offset deltas set here), all
// stamped ts, without a producer.
func recordBatchOf(ts time.Time, recs []kmsg.Record) []byte {
	return encodeBatch(ts, recs, batchProducer{id: -1, epoch: -1, seq: -1})
}

// batchProducer is what a batch says of its producer: id, epoch, first
// sequence number, and attributes (0x10: transactional).
type batchProducer struct {
	id    int64
	epoch int16
	seq   int32
	attrs int16
}

// encodeBatch is a magic-2 batch of recs (their offset deltas set here),
// all stamped ts, from producer, with its length and CRC.
func encodeBatch(ts time.Time, recs []kmsg.Record, producer batchProducer) []byte {
	var records []byte
	for i, rec := range recs {
		rec.OffsetDelta = int32(i)
		body := rec.AppendTo(nil)[1:] // drop the placeholder zero-length varint
		records = binary.AppendVarint(records, int64(len(body)))
		records = append(records, body...)
	}
	batch := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           producer.attrs,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       ts.UnixMilli(),
		MaxTimestamp:         ts.UnixMilli(),
		ProducerID:           producer.id,
		ProducerEpoch:        producer.epoch,
		FirstSequence:        producer.seq,
		NumRecords:           int32(len(recs)),
		Records:              records,
	}
	out := batch.AppendTo(nil)
	// Length counts what follows the length field: everything after byte 12.
	binary.BigEndian.PutUint32(out[8:12], uint32(len(out)-12))
	// CRC-32C covers attributes (byte 21) to the end.
	crc := crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(out[17:21], crc)
	return out
}

// rawProduce sends Produce v9 (acks=all) with one batch to partition 0 of
// topic over c and returns that partition's response.
func rawProduce(t *testing.T, c net.Conn, correlationID int32, topic string, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 0
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	writeAll(t, c, kmsg.NewRequestFormatter(kmsg.FormatterClientID("strata-e2e-raw")).AppendRequest(nil, req, correlationID))

	body := readFrame(t, c)
	if len(body) < 5 {
		t.Fatalf("produce response of %d bytes", len(body))
	}
	if got := int32(binary.BigEndian.Uint32(body[:4])); got != correlationID {
		t.Fatalf("response correlation id %d, want %d", got, correlationID)
	}
	rest, err := skipTags(body[4:]) // flexible response header
	if err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	if err := resp.ReadFrom(rest); err != nil {
		t.Fatalf("decoding produce response: %v", err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].Topic != topic || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce response %+v, want one partition of %q", resp.Topics, topic)
	}
	return resp.Topics[0].Partitions[0]
}

// readFrame reads one size-prefixed response of at most 1 MiB.
func readFrame(t *testing.T, c net.Conn) []byte {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(rawIOTimeout)); err != nil {
		t.Fatal(err)
	}
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c, sizeBuf[:]); err != nil {
		t.Fatalf("reading response size: %v", err)
	}
	size := binary.BigEndian.Uint32(sizeBuf[:])
	if size > 1<<20 {
		t.Fatalf("response claims %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("reading %d-byte response: %v", size, err)
	}
	return body
}

// skipTags skips a tagged-field section: a count, then (tag, size, bytes).
func skipTags(b []byte) ([]byte, error) {
	n, used := binary.Uvarint(b)
	if used <= 0 {
		return nil, errors.New("bad tag count")
	}
	b = b[used:]
	for range n {
		if _, used = binary.Uvarint(b); used <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[used:]
		size, used := binary.Uvarint(b)
		if used <= 0 || uint64(len(b)-used) < size {
			return nil, errors.New("bad tag size")
		}
		b = b[used+int(size):]
	}
	return b, nil
}
