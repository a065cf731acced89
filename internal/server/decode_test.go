package server

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func supportAll(int16, int16) bool  { return true }
func supportNone(int16, int16) bool { return false }

// seedRequests are valid requests, flexible and not, with and without bytes
// fields, used as fuzz seeds and decode cases.
func seedRequests() []kmsg.Request {
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	av.ClientSoftwareName, av.ClientSoftwareVersion = "strata-test", "1.0"

	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr("orders")
	md.Topics = append(md.Topics, topic)

	md4 := kmsg.NewPtrMetadataRequest()
	md4.SetVersion(4)

	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(9)
	produce.Acks = -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "orders"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = []byte("not really a batch, but bytes")
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(11)
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "orders"
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	fetch.Topics = append(fetch.Topics, ft)

	return []kmsg.Request{av, md, md4, produce, fetch}
}

func encodeFrame(req kmsg.Request, corr int32, clientID string) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, corr)[4:]
}

func TestDecodeRequestValid(t *testing.T) {
	var ids clientIDCache
	for i, req := range seedRequests() {
		corr := int32(100 + i)
		d, err := decodeRequest(encodeFrame(req, corr, "cli"), supportAll, &ids)
		if err != nil {
			t.Fatalf("key %d v%d: %v", req.Key(), req.GetVersion(), err)
		}
		if d.key != req.Key() || d.version != req.GetVersion() || d.correlationID != corr {
			t.Fatalf("header %+v for key %d v%d corr %d", d.header, req.Key(), req.GetVersion(), corr)
		}
		if d.clientID == nil || *d.clientID != "cli" {
			t.Fatalf("client id %v", d.clientID)
		}
		if d.body.Key() != req.Key() || d.body.GetVersion() != req.GetVersion() {
			t.Fatalf("body key %d v%d", d.body.Key(), d.body.GetVersion())
		}
	}
}

func TestDecodeRequestReusesClientID(t *testing.T) {
	var ids clientIDCache
	frame := encodeFrame(seedRequests()[0], 1, "same")
	a, _ := decodeRequest(frame, supportAll, &ids)
	b, _ := decodeRequest(frame, supportAll, &ids)
	if a.clientID != b.clientID {
		t.Fatal("the same client id was allocated twice")
	}
	c, _ := decodeRequest(encodeFrame(seedRequests()[0], 1, "other"), supportAll, &ids)
	if *c.clientID != "other" || *a.clientID != "same" {
		t.Fatalf("client ids %q %q", *a.clientID, *c.clientID)
	}
}

func TestDecodeRequestNullClientID(t *testing.T) {
	frame := []byte{0, 18, 0, 0, 0, 0, 0, 9, 0xff, 0xff}
	d, err := decodeRequest(frame, supportAll, new(clientIDCache))
	if err != nil || d.clientID != nil || d.correlationID != 9 {
		t.Fatalf("decoded %+v, %v", d, err)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	md := seedRequests()[1]
	good := encodeFrame(md, 1, "c")
	for _, tc := range []struct {
		name      string
		frame     []byte
		supported func(int16, int16) bool
		want      error
	}{
		{"empty", nil, supportAll, errBadHeader},
		{"short header", good[:7], supportAll, errBadHeader},
		{"client id cut", good[:10], supportAll, errBadHeader},
		{"unknown key", []byte{0x7f, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff}, supportAll, errUnknownKey},
		{"unsupported", good, supportNone, errUnsupportedVersion},
		{"past what kmsg decodes", withVersion(good, 99), supportAll, errUnsupportedVersion},
		{"negative version", withVersion(good, -1), supportAll, errUnsupportedVersion},
		{"body cut", good[:len(good)-3], supportAll, errBadBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeRequest(tc.frame, tc.supported, new(clientIDCache))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

// withVersion is frame with its request header's api version set to v.
func withVersion(frame []byte, v int16) []byte {
	out := append([]byte(nil), frame...)
	binary.BigEndian.PutUint16(out[2:], uint16(v))
	return out
}

func TestDecodeRequestApiVersionsFallback(t *testing.T) {
	d, err := decodeRequest(encodeFrame(seedRequests()[0], 3, ""), supportNone, new(clientIDCache))
	if err != nil || !d.apiVersionsFallback || d.body != nil || d.correlationID != 3 {
		t.Fatalf("decoded %+v, %v", d, err)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for i, req := range seedRequests() {
		f.Add(encodeFrame(req, int32(i), "fuzz"), false)
	}
	f.Add([]byte{0, 18, 0x7f, 0xff, 0, 0, 0, 1, 0xff, 0xff}, true)
	f.Fuzz(func(t *testing.T, frame []byte, rejectAll bool) {
		supported := supportAll
		if rejectAll {
			supported = supportNone
		}
		d, err := decodeRequest(frame, supported, new(clientIDCache))
		if err != nil {
			return
		}
		switch {
		case d.apiVersionsFallback:
			if d.key != apiVersionsKey || d.body != nil {
				t.Fatalf("fallback for key %d, body %v", d.key, d.body)
			}
		case d.body == nil:
			t.Fatal("no error, no body")
		case d.body.Key() != d.key || d.body.GetVersion() != d.version:
			t.Fatalf("body key %d v%d, header key %d v%d", d.body.Key(), d.body.GetVersion(), d.key, d.version)
		}
	})
}
