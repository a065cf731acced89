package cleaner

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// The helpers here build and read stored v2 batches by hand, independently
// of the encoder the cleaner uses (record.AppendRecord/AppendHeader), so a
// bug there cannot hide itself in the tests.

// tRec is a record a test writes; nil Key/Value are null.
type tRec struct {
	Key, Value  []byte
	Headers     []tHdr
	TsDelta     int64
	OffsetDelta int32
}

type tHdr struct{ Key, Value []byte }

// tBatch describes one stored batch.
type tBatch struct {
	Base    base.Offset
	Records []tRec // OffsetDelta as given; see dense
	// LastDelta overrides the last offset delta (else the last record's).
	LastDelta     int32
	SetLastDelta  bool
	Codec         record.Codec
	BaseTs        int64
	LogAppendTime bool
	AppendTs      int64 // max timestamp of a LogAppendTime batch
	Control       bool
	Transactional bool
	ProducerID    int64 // -1 for plain batches: use plain() or set it
	ProducerEpoch int16
	BaseSequence  int32
	LeaderEpoch   int32
	Horizon       bool // BaseTs is then the delete horizon
}

const testTs = int64(1_700_000_000_000)

// plain returns a non-idempotent batch spec at base with dense records.
func plain(b base.Offset, recs ...tRec) tBatch {
	return tBatch{Base: b, Records: dense(recs), BaseTs: testTs, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
}

// dense gives records offset deltas 0, 1, 2, ... and timestamp deltas equal
// to them, as a producer writes.
func dense(recs []tRec) []tRec {
	out := slices.Clone(recs)
	for i := range out {
		out[i].OffsetDelta = int32(i)
		if out[i].TsDelta == 0 {
			out[i].TsDelta = int64(i)
		}
	}
	return out
}

func kv(k, v string) tRec { return tRec{Key: []byte(k), Value: []byte(v)} }
func tomb(k string) tRec  { return tRec{Key: []byte(k)} }
func keyless(v string) tRec {
	return tRec{Value: []byte(v)}
}

func appendNullable(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}

func encodeRec(r tRec) []byte {
	var body []byte
	body = append(body, 0)
	body = binary.AppendVarint(body, r.TsDelta)
	body = binary.AppendVarint(body, int64(r.OffsetDelta))
	body = appendNullable(body, r.Key)
	body = appendNullable(body, r.Value)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = appendNullable(body, h.Key)
		body = appendNullable(body, h.Value)
	}
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

type fataler interface {
	Helper()
	Fatal(args ...any)
}

func build(t fataler, s tBatch) []byte {
	t.Helper()
	var raw []byte
	for _, r := range s.Records {
		raw = append(raw, encodeRec(r)...)
	}
	p := raw
	if s.Codec != record.CodecNone {
		var err error
		if p, err = record.Compress(s.Codec, raw, nil); err != nil {
			t.Fatal(err)
		}
	}
	last := int32(0)
	if n := len(s.Records); n > 0 {
		last = s.Records[n-1].OffsetDelta
	}
	if s.SetLastDelta {
		last = s.LastDelta
	}
	attrs := uint16(s.Codec)
	maxTs := s.BaseTs
	if len(s.Records) > 0 {
		maxTs = s.BaseTs + s.Records[0].TsDelta
		for _, r := range s.Records {
			maxTs = max(maxTs, s.BaseTs+r.TsDelta)
		}
	}
	if s.LogAppendTime {
		attrs |= 0x08
		maxTs = s.AppendTs
	}
	if s.Transactional {
		attrs |= 0x10
	}
	if s.Control {
		attrs |= 0x20
	}
	if s.Horizon {
		attrs |= 0x40
	}
	be := binary.BigEndian
	b := be.AppendUint64(nil, uint64(s.Base))
	b = be.AppendUint32(b, uint32(record.HeaderSize-record.LogOverhead+len(p)))
	b = be.AppendUint32(b, uint32(s.LeaderEpoch))
	b = append(b, 2)
	b = be.AppendUint32(b, 0) // CRC, below
	b = be.AppendUint16(b, attrs)
	b = be.AppendUint32(b, uint32(last))
	b = be.AppendUint64(b, uint64(s.BaseTs))
	b = be.AppendUint64(b, uint64(maxTs))
	b = be.AppendUint64(b, uint64(s.ProducerID))
	b = be.AppendUint16(b, uint16(s.ProducerEpoch))
	b = be.AppendUint32(b, uint32(s.BaseSequence))
	b = be.AppendUint32(b, uint32(len(s.Records)))
	b = append(b, p...)
	record.WriteCRC(b)
	return b
}

// gotRec is a record as read back: absolute offset, and timestamp as
// base + delta (what a client computes under CreateTime).
type gotRec struct {
	Offset     base.Offset
	Key, Value []byte
	Ts         int64
	Headers    []tHdr
}

func (g gotRec) String() string {
	return fmt.Sprintf("{@%d %q=%q ts=%d h=%v}", g.Offset, g.Key, g.Value, g.Ts, g.Headers)
}

func equalRec(a, b gotRec) bool {
	if a.Offset != b.Offset || a.Ts != b.Ts || !eqNullable(a.Key, b.Key) || !eqNullable(a.Value, b.Value) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if !eqNullable(a.Headers[i].Key, b.Headers[i].Key) || !eqNullable(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

func eqNullable(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// readBatch decodes one batch with the record package's own reader,
// checking its CRC, and copies its records out.
func readBatch(t fataler, b []byte) (record.Header, []gotRec) {
	t.Helper()
	var rd record.RecordReader
	if err := rd.Reset(b); err != nil {
		t.Fatal(err)
	}
	h := rd.Header()
	if got := record.ComputeCRC(b); got != h.CRC {
		t.Fatal(fmt.Sprintf("batch at %d: CRC %#x, computed %#x", h.BaseOffset, h.CRC, got))
	}
	var out []gotRec
	var hs []record.RecordHeader
	for r, ok := rd.Next(); ok; r, ok = rd.Next() {
		g := gotRec{
			Offset: h.BaseOffset + base.Offset(r.OffsetDelta),
			Key:    clone(r.Key),
			Value:  clone(r.Value),
			Ts:     h.BaseTimestamp + r.TimestampDelta,
		}
		hs = r.AppendHeaders(hs[:0])
		for _, x := range hs {
			g.Headers = append(g.Headers, tHdr{clone(x.Key), clone(x.Value)})
		}
		out = append(out, g)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return h, out
}

// expected is what a record of spec s reads back as.
func expected(s tBatch, i int) gotRec {
	r := s.Records[i]
	return gotRec{Offset: s.Base + base.Offset(r.OffsetDelta), Key: r.Key, Value: r.Value, Ts: s.BaseTs + r.TsDelta, Headers: r.Headers}
}

var allCodecs = []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}

// neverLast is a LastBatchOfProducer for tests where no batch is kept empty.
func neverLast(int64, base.Offset) bool { return false }

// mapOf builds an offset map from key/offset pairs.
func mapOf(pairs ...any) *OffsetMap {
	m := NewOffsetMap(1 << 16)
	for i := 0; i < len(pairs); i += 2 {
		m.Put([]byte(pairs[i].(string)), base.Offset(pairs[i+1].(int)))
	}
	return m
}
