package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSplicedFetchResponseDecodes builds fetch responses whose record bytes
// are markers, splices file ranges in (over a real TCP connection, so
// sendfile runs), and decodes what arrives with kmsg.
func TestSplicedFetchResponseDecodes(t *testing.T) {
	content := make([]byte, 300_000)
	for i := range content {
		content[i] = byte(i * 7)
	}
	f := segmentFile(t, content)

	ranges := [][2]int64{{10, 200_000}, {5, 3}, {0, 0}, {250_000, 50_000}}
	for _, version := range []int16{4, 11, 12, 16} {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		var splices []Splice
		topic := kmsg.NewFetchResponseTopic()
		topic.Topic = "t"
		for i, r := range ranges {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(i)
			marker := bytes.Repeat([]byte{0xA0 + byte(i)}, 16)
			p.RecordBatches = marker
			splices = append(splices, Splice{Marker: marker, File: f, Pos: r[0], Size: r[1]})
			topic.Partitions = append(topic.Partitions, p)
		}
		resp.Topics = []kmsg.FetchResponseTopic{topic}

		frame := appendResponse(nil, 42, resp)
		pieces, err := splicePieces(frame, splices, resp.IsFlexible())
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		got := acrossTCP(t, 0, func(c net.Conn) error { return writePieces(c, pieces) })
		if size := int(binary.BigEndian.Uint32(got)); size != len(got)-4 {
			t.Fatalf("v%d: frame size %d, got %d bytes after it", version, size, len(got)-4)
		}
		body := got[8:] // size, correlation id
		if resp.IsFlexible() {
			body = body[1:] // empty header tags
		}
		decoded := kmsg.NewPtrFetchResponse()
		decoded.SetVersion(version)
		if err := decoded.ReadFrom(body); err != nil {
			t.Fatalf("v%d: decoding the spliced response: %v", version, err)
		}
		for i, r := range ranges {
			want := content[r[0] : r[0]+r[1]]
			if got := decoded.Topics[0].Partitions[i].RecordBatches; !bytes.Equal(got, want) {
				t.Fatalf("v%d partition %d: %d bytes, want %d", version, i, len(got), len(want))
			}
		}
	}
}

// segmentFile is a file holding content, open for reading until the test ends.
func segmentFile(t *testing.T, content []byte) *os.File {
	t.Helper()
	file := filepath.Join(t.TempDir(), "segment")
	if err := os.WriteFile(file, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// acrossTCP runs send on the accepting end of a loopback TCP connection
// (so sendfile runs) and returns what the dialing end reads, starting
// after readAfter, until send closes it.
func acrossTCP(t *testing.T, readAfter time.Duration, send func(net.Conn) error) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		errc <- send(c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(readAfter)
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("sending: %v", err)
	}
	return got
}

func TestSpliceMarkerMustBeAWholeField(t *testing.T) {
	marker := bytes.Repeat([]byte{0xEE}, 16)
	frame := append([]byte{0, 0, 0, 0, 9, 9, 9, 9}, marker...) // no length prefix before it
	if _, err := splicePieces(frame, []Splice{{Marker: marker, Size: 1}}, false); err == nil {
		t.Fatal("a marker without its length prefix must be refused")
	}
	if _, err := splicePieces([]byte{0, 0, 0, 0, 1, 2, 3}, []Splice{{Marker: marker}}, true); err == nil {
		t.Fatal("a missing marker must be refused")
	}
}

// A connection without a descriptor to sendfile to (TLS, here a pipe)
// gets the file range copied through user space.
func TestSendFileRangeCopiesWithoutSendfile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "seg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("0123456789"); err != nil {
		t.Fatal(err)
	}
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		_ = sendFileRange(server, f, 3, 5)
	}()
	got, err := io.ReadAll(client)
	if err != nil || string(got) != "34567" {
		t.Fatalf("read %q, %v; want 34567", got, err)
	}
}

// A range larger than the socket's buffers is sent whole: sendfile sends
// part, the socket fills, and the sender waits until it drains.
func TestSendFileRangeWaitsForAFullSocket(t *testing.T) {
	const size = 16 << 20
	want := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	f := segmentFile(t, want)
	// Read only once the socket has filled.
	got := acrossTCP(t, 50*time.Millisecond, func(c net.Conn) error { return sendFileRange(c, f, 0, size) })
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d sent", len(got), size)
	}
}

// TestHandlerSplicesGoOutInTheResponse: a Reply's Splices fill the
// response's marked bytes fields from the file, through the connection's
// writer, and Release runs once it is sent; a splice whose marker the
// response lacks is a handler bug that closes the connection.
func TestHandlerSplicesGoOutInTheResponse(t *testing.T) {
	content := bytes.Repeat([]byte("strata"), 1000)
	f := segmentFile(t, content)
	released := make(chan int32, 2)
	h := newFakeHandler()
	h.versions[1] = [2]int16{4, 16}
	h.handle = func(_ context.Context, req *Request) Reply {
		if req.Key != 1 {
			return Reply{Resp: h.answer(req)}
		}
		marker := bytes.Repeat([]byte{0xA5}, 16)
		resp := req.Body.ResponseKind().(*kmsg.FetchResponse)
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = marker
		if req.CorrelationID == 2 {
			p.RecordBatches = []byte("no marker here")
		}
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: "t", Partitions: []kmsg.FetchResponseTopicPartition{p}}}
		corr := req.CorrelationID
		return Reply{
			Resp:    resp,
			Splices: func() []Splice { return []Splice{{Marker: marker, File: f, Pos: 100, Size: 4000}} },
			Release: func() { released <- corr },
		}
	}
	s := startServer(t, h, nil)
	c := dial(t, s)
	c.send(kmsg.NewPtrFetchRequest(), 12, 1)
	got := c.read(1, 12, 1).(*kmsg.FetchResponse)
	if b := got.Topics[0].Partitions[0].RecordBatches; !bytes.Equal(b, content[100:4100]) {
		t.Fatalf("the spliced field holds %d bytes, want the file's 4000 from 100", len(b))
	}
	if corr := <-released; corr != 1 {
		t.Fatalf("released %d", corr)
	}
	c.send(kmsg.NewPtrFetchRequest(), 12, 2)
	c.expectClosed()
	if corr := <-released; corr != 2 {
		t.Fatalf("released %d", corr)
	}
	apiVersionsOK(t, s)
}
