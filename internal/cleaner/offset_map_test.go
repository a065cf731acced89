package cleaner

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

func TestOffsetMapCapacity(t *testing.T) {
	for _, tc := range []struct {
		memoryBytes int64
		slots       int
	}{
		{0, 7},            // minTableSlots, one always empty
		{-5, 7},           // nonsense budgets still get a usable map
		{24 * 8, 7},       // 8 slots: 7.2 -> 7
		{24 * 100, 90},    // Kafka's 0.9 load factor
		{24*100 + 23, 90}, // a partial entry buys nothing
		{128 << 20, 5_033_164},
	} {
		if got := NewOffsetMap(tc.memoryBytes).Slots(); got != tc.slots {
			t.Errorf("NewOffsetMap(%d).Slots() = %d, want %d", tc.memoryBytes, got, tc.slots)
		}
	}
	// Capped like Kafka's 2 GiB per cleaner thread (checked without
	// allocating it).
	if slots, capacity := mapSize(1 << 40); slots != math.MaxInt32/24 || capacity != 80_530_636 {
		t.Errorf("mapSize(1 TiB) = %d, %d", slots, capacity)
	}
}

func TestOffsetMapPutGetReset(t *testing.T) {
	m := NewOffsetMap(24 * 100)
	if _, ok := m.Get([]byte("a")); ok {
		t.Fatal("empty map has a")
	}
	m.Put([]byte("a"), 5)
	m.Put([]byte("b"), 6)
	m.Put([]byte("a"), 9) // the later Put wins and adds no entry
	m.Put([]byte{}, 11)   // an empty key is a key, unlike a null one
	if m.Len() != 3 {
		t.Fatalf("Len %d, want 3", m.Len())
	}
	for k, want := range map[string]base.Offset{"a": 9, "b": 6, "": 11} {
		if got, ok := m.Get([]byte(k)); !ok || got != want {
			t.Errorf("Get(%q) = %d, %v; want %d", k, got, ok, want)
		}
	}
	m.Reset()
	if m.Len() != 0 {
		t.Fatalf("Len %d after Reset", m.Len())
	}
	if _, ok := m.Get([]byte("a")); ok {
		t.Fatal("a survives Reset")
	}
}

func TestOffsetMapPutIntoFullMapPanics(t *testing.T) {
	m := NewOffsetMap(0)
	for i := range m.Slots() {
		m.Put([]byte{byte(i)}, base.Offset(i))
	}
	m.Put([]byte{0}, 99) // an existing key still updates
	defer func() {
		if recover() == nil {
			t.Fatal("Put of a new key into a full map did not panic")
		}
	}()
	m.Put([]byte("new"), 1)
}

// Distinct keys never collide in practice: a full map of similar keys
// returns each key's own offset, and misses keys never put.
func TestOffsetMapDistinctKeys(t *testing.T) {
	m := NewOffsetMap(24 * 300_000)
	n := m.Slots()
	key := func(i int) []byte { return binary.BigEndian.AppendUint64([]byte("key-"), uint64(i)) }
	for i := range n {
		m.Put(key(i), base.Offset(i*3))
	}
	if m.Len() != n {
		t.Fatalf("Len %d after %d distinct keys", m.Len(), n)
	}
	for i := range n {
		if got, ok := m.Get(key(i)); !ok || got != base.Offset(i*3) {
			t.Fatalf("Get(key %d) = %d, %v", i, got, ok)
		}
	}
	for i := n; i < n+10_000; i++ {
		if got, ok := m.Get(key(i)); ok {
			t.Fatalf("key %d never put, found at %d", i, got)
		}
	}
}

func TestOffsetMapDoesNotAllocate(t *testing.T) {
	m := NewOffsetMap(1 << 16)
	key := []byte("some-key-of-ordinary-length")
	allocs := testing.AllocsPerRun(100, func() {
		m.Put(key, 7)
		if _, ok := m.Get(key); !ok {
			t.Fatal("lost key")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Put+Get", allocs)
	}
}

func TestOffsetMapAddBatch(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codecName(codec), func(t *testing.T) {
			mk := func(s tBatch) []byte { s.Codec = codec; return build(t, s) }
			m := NewOffsetMap(0) // 7 entries
			b1 := mk(plain(10, kv("a", "1"), tomb("b"), keyless("x"), kv("a", "2")))
			if ok, err := m.AddBatch(b1, nil); !ok || err != nil {
				t.Fatal(ok, err)
			}
			want := map[string]base.Offset{"a": 13, "b": 11}
			check := func() {
				t.Helper()
				if m.Len() != len(want) {
					t.Fatalf("Len %d, want %d", m.Len(), len(want))
				}
				for k, o := range want {
					if got, ok := m.Get([]byte(k)); !ok || got != o {
						t.Fatalf("Get(%q) = %d, %v; want %d", k, got, ok, o)
					}
				}
			}
			check()

			// A control batch adds nothing and does not stop the map.
			ctl := idem(plain(14, kv("ctl", "")))
			ctl.Control = true
			if ok, err := m.AddBatch(mk(ctl), nil); !ok || err != nil {
				t.Fatal(ok, err)
			}
			check()

			// Neither does an aborted transaction's batch; a committed one
			// of the same producer after the abort does.
			ab := idem(plain(14, kv("a", "aborted")))
			ab.Transactional = true
			aborted := NewAbortedTxns([]AbortedTxn{{ProducerID: ab.ProducerID, First: 14, Last: 14}}, 0)
			if ok, err := m.AddBatch(mk(ab), aborted); !ok || err != nil {
				t.Fatal(ok, err)
			}
			check()
			if ok, err := m.AddBatch(mk(ab), nil); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if got, _ := m.Get([]byte("a")); got != 14 {
				t.Fatalf("a committed transactional batch at 14: Get(a) = %d", got)
			}
			m.Put([]byte("a"), want["a"]) // back to what check expects

			// 2 keys + 6 records could exceed 7 entries if all were new,
			// so the batch is refused whole, before anything is decoded.
			big := mk(plain(15, kv("c", "1"), kv("d", "1"), kv("e", "1"), kv("f", "1"), kv("g", "1"), kv("h", "1")))
			if ok, err := m.AddBatch(big, nil); ok || err != nil {
				t.Fatalf("AddBatch past capacity = %v, %v; want false, nil", ok, err)
			}
			check()

			// Sparse offsets: the record's own delta decides its offset.
			sp := plain(20, kv("c", "1"), kv("a", "9"))
			sp.Records[1].OffsetDelta = 4
			if ok, err := m.AddBatch(mk(sp), nil); !ok || err != nil {
				t.Fatal(ok, err)
			}
			want["c"], want["a"] = 20, 24
			check()

			// A batch bigger than the whole map can never be added.
			m.Reset()
			huge := mk(plain(30, kv("1", ""), kv("2", ""), kv("3", ""), kv("4", ""), kv("5", ""), kv("6", ""), kv("7", ""), kv("8", "")))
			if ok, err := m.AddBatch(huge, nil); ok || !errors.Is(err, ErrMapTooSmall) {
				t.Fatalf("AddBatch of a batch bigger than the map = %v, %v", ok, err)
			}
		})
	}
}

// The encoder the cleaner writes with reproduces records exactly as a
// producer encodes them.
func TestAppendRecordRoundTrip(t *testing.T) {
	recs := dense([]tRec{
		kv("a", "1"), tomb("b"), keyless("c"), {Key: []byte{}, Value: []byte{}},
		{Key: []byte("h"), Value: []byte("v"), Headers: []tHdr{{[]byte("k"), nil}, {[]byte(""), []byte("x")}}},
		{Key: []byte("neg"), Value: []byte("ts"), TsDelta: -1 << 40},
	})
	for _, r := range recs {
		enc := encodeRec(r)
		rec, rest, err := record.ParseRecord(enc)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%+v: %v, %d left", r, err, len(rest))
		}
		if got := record.AppendRecord(nil, &rec); string(got) != string(enc) {
			t.Errorf("%+v:\n got %x\nwant %x", r, got, enc)
		}
	}
}

// A big budget is not taken up front: the table starts small and grows as
// keys arrive, keeping every key's offset.
func TestOffsetMapStartsSmallAndGrows(t *testing.T) {
	m := NewOffsetMap(128 << 20)
	if len(m.hashes) != initialTableSlots {
		t.Fatalf("a 128 MiB map starts with %d slots, want %d", len(m.hashes), initialTableSlots)
	}
	const n = 5 * initialTableSlots
	for i := range n {
		m.Put(binary.BigEndian.AppendUint32([]byte("k"), uint32(i)), base.Offset(i))
	}
	if len(m.hashes) < n || len(m.hashes) > 8*initialTableSlots {
		t.Fatalf("%d keys in a table of %d slots", n, len(m.hashes))
	}
	for i := range n {
		if got, ok := m.Get(binary.BigEndian.AppendUint32([]byte("k"), uint32(i))); !ok || got != base.Offset(i) {
			t.Fatalf("key %d after growing: %d, %v", i, got, ok)
		}
	}
	if _, want := mapSize(128 << 20); m.Slots() != want {
		t.Fatalf("Slots %d: the budget's capacity changed", m.Slots())
	}
}

// Only transactional batches are aborted (Kafka's cleaner checks
// isTransactional first): a batch of the same producer id without the
// transactional bit that lies inside an aborted range is indexed, and so
// supersedes older values of its keys.
func TestOffsetMapAddBatchAbortsOnlyTransactionalBatches(t *testing.T) {
	b := idem(plain(14, kv("a", "1")))
	aborted := NewAbortedTxns([]AbortedTxn{{ProducerID: b.ProducerID, First: 10, Last: 20}}, 0)
	m := NewOffsetMap(0)
	if ok, err := m.AddBatch(build(t, b), aborted); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got, ok := m.Get([]byte("a")); !ok || got != 14 {
		t.Fatalf("Get(a) = %d, %v; want 14", got, ok)
	}
	b.Transactional = true
	m.Reset()
	if ok, err := m.AddBatch(build(t, b), aborted); !ok || err != nil || m.Len() != 0 {
		t.Fatalf("aborted transactional batch: %v, %v, %d keys; want none", ok, err, m.Len())
	}
}
