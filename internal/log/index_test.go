package log

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

func TestOffsetIndexLookup(t *testing.T) {
	x := offsetIndex{entries: []offsetEntry{{rel: 4, pos: 100}, {rel: 8, pos: 200}}}
	for _, tc := range []struct {
		target uint32
		want   offsetEntry
		ok     bool
	}{
		{target: 0},
		{target: 3},
		{target: 4, want: offsetEntry{rel: 4, pos: 100}, ok: true}, // an entry for the target itself
		{target: 7, want: offsetEntry{rel: 4, pos: 100}, ok: true},
		{target: 8, want: offsetEntry{rel: 8, pos: 200}, ok: true},
		{target: 1 << 30, want: offsetEntry{rel: 8, pos: 200}, ok: true},
	} {
		got, ok := x.lookupEntry(tc.target)
		if got != tc.want || ok != tc.ok {
			t.Errorf("lookupEntry(%d) = %+v, %v; want %+v, %v", tc.target, got, ok, tc.want, tc.ok)
		}
		if pos := x.lookup(tc.target); pos != tc.want.pos {
			t.Errorf("lookup(%d) = %d, want %d", tc.target, pos, tc.want.pos)
		}
	}
}

func TestTimeIndexLookup(t *testing.T) {
	var x timeIndex
	for _, e := range []timeEntry{{ts: 10, rel: 0}, {ts: 10, rel: 2}, {ts: 9, rel: 3}, {ts: 20, rel: 5}} {
		x.maybeAppend(e.ts, e.rel)
	}
	if want := []timeEntry{{ts: 10, rel: 0}, {ts: 20, rel: 5}}; !slices.Equal(x.entries, want) {
		t.Fatalf("entries %+v, want %+v: only a growing timestamp is added", x.entries, want)
	}
	for _, tc := range []struct {
		ts   int64
		want uint32
	}{{ts: 5, want: 0}, {ts: 10, want: 0}, {ts: 19, want: 0}, {ts: 20, want: 5}, {ts: 99, want: 5}} {
		if got := x.lookup(tc.ts); got != tc.want {
			t.Errorf("lookup(%d) = %d, want %d", tc.ts, got, tc.want)
		}
	}
}

// TestDecodeOffsetIndex: every entry must point inside the .log, after its
// start (the first batch needs no entry), with offsets and positions
// strictly ascending; anything else is ErrCorrupt.
func TestDecodeOffsetIndex(t *testing.T) {
	enc := func(es ...offsetEntry) []byte {
		x := offsetIndex{entries: es}
		return x.encode(0)
	}
	const logSize = 1000
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{name: "empty", b: nil, ok: true},
		{name: "ascending", b: enc(offsetEntry{1, 1}, offsetEntry{5, 999}), ok: true},
		{name: "torn entry", b: enc(offsetEntry{1, 100})[:7]},
		{name: "position 0", b: enc(offsetEntry{1, 0})},
		{name: "position at the log's end", b: enc(offsetEntry{1, logSize})},
		{name: "same offset twice", b: enc(offsetEntry{3, 100}, offsetEntry{3, 200})},
		{name: "offset going back", b: enc(offsetEntry{3, 100}, offsetEntry{2, 200})},
		{name: "same position twice", b: enc(offsetEntry{3, 100}, offsetEntry{4, 100})},
		{name: "position going back", b: enc(offsetEntry{3, 100}, offsetEntry{4, 99})},
	} {
		es, err := decodeOffsetIndex(tc.b, logSize)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			} else if got := enc(es...); !slices.Equal(got, tc.b) && len(tc.b) > 0 {
				t.Errorf("%s: decoded %+v, which encodes differently", tc.name, es)
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func TestDecodeTimeIndex(t *testing.T) {
	enc := func(es ...timeEntry) []byte {
		x := timeIndex{entries: es}
		return x.encode(0)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{name: "ascending", b: enc(timeEntry{ts: -1, rel: 0}, timeEntry{ts: 7, rel: 4}), ok: true},
		{name: "torn entry", b: enc(timeEntry{ts: 5, rel: 1})[:11]},
		{name: "same timestamp twice", b: enc(timeEntry{ts: 5, rel: 1}, timeEntry{ts: 5, rel: 2})},
		{name: "timestamp going back", b: enc(timeEntry{ts: 5, rel: 1}, timeEntry{ts: 4, rel: 2})},
		{name: "same offset twice", b: enc(timeEntry{ts: 5, rel: 1}, timeEntry{ts: 6, rel: 1})},
		{name: "offset going back", b: enc(timeEntry{ts: 5, rel: 1}, timeEntry{ts: 6, rel: 0})},
	} {
		es, err := decodeTimeIndex(tc.b)
		if tc.ok {
			if err != nil || len(es) != len(tc.b)/timeEntrySize {
				t.Errorf("%s: %+v, %v", tc.name, es, err)
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", tc.name, err)
		}
	}
}

// TestIndexEncodeFrom: encode(from) is the entries from index from, as
// appended to a file that holds the ones before.
func TestIndexEncodeFrom(t *testing.T) {
	x := offsetIndex{entries: []offsetEntry{{1, 10}, {2, 20}, {3, 30}}}
	want := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 3), 30)
	if got := x.encode(2); !slices.Equal(got, want) {
		t.Fatalf("encode(2) = %x, want %x", got, want)
	}
}

// TestIndexEntryAfterMoreThanIntervalBytes: an index entry goes in before
// a batch once more than index.interval.bytes were appended since the last
// one (Kafka's bytesSinceLastIndexEntry > indexIntervalBytes): with equal
// batches and an interval of exactly two, every third batch gets one, live,
// after a clean reopen, and when a crash makes the log rebuild its indexes
// by scanning; the count since the last entry carries over either.
func TestIndexEntryAfterMoreThanIntervalBytes(t *testing.T) {
	size := len(makeBatch(0, 1, 20, 0))
	entries := func(l *Log) []offsetEntry {
		l.mu.Lock()
		defer l.mu.Unlock()
		return slices.Clone(l.mu.segs[0].offsetIndex.entries)
	}
	at := func(batches ...int) []offsetEntry {
		var out []offsetEntry
		for _, b := range batches {
			out = append(out, offsetEntry{rel: uint32(b), pos: uint32(b * size)})
		}
		return out
	}
	for _, clean := range []bool{true, false} {
		o := testOptions(t)
		o.IndexIntervalBytes = 2 * size
		l := mustOpen(t, o)
		appendN(t, l, 10, 1, 20, 0)
		if got, want := entries(l), at(3, 6, 9); !slices.Equal(got, want) {
			t.Fatalf("index entries %+v, want %+v", got, want)
		}
		l.stop(t, clean)
		l = mustOpen(t, o)
		if got, want := entries(l), at(3, 6, 9); !slices.Equal(got, want) {
			t.Fatalf("index entries after a reopen (clean %v) %+v, want %+v", clean, got, want)
		}
		appendN(t, l, 3, 1, 20, 0)
		if got, want := entries(l), at(3, 6, 9, 12); !slices.Equal(got, want) {
			t.Fatalf("index entries after a reopen (clean %v) and three more batches %+v, want %+v", clean, got, want)
		}
		l.stop(t, true)
	}
}
