package cleaner

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// Sizing follows Kafka's SkimpyOffsetMap and log.cleaner.dedupe.buffer.size:
// an entry is charged 24 bytes (a 16-byte key hash and an 8-byte offset) and
// the table is filled to at most 0.9 of its slots, so probes stay short.
const (
	entryBytes    = 24
	loadFactor    = 0.9
	minTableSlots = 8
	// MaxOffsetMapBytes caps one map's memory, as Kafka caps a cleaner
	// thread's dedupe buffer at 2 GiB; a larger budget gets this much.
	MaxOffsetMapBytes = math.MaxInt32
)

// ErrMapTooSmall means a batch holds more records than an empty offset map
// can take, so no pass could ever get past it: the dedupe buffer must grow.
var ErrMapTooSmall = errors.New("cleaner: offset map too small for one batch")

// keyHash is the first 128 bits of SHA-256(key), with the low bit forced to
// 1 so that the zero value can mark an empty slot. SHA-256 rather than
// Kafka's MD5: MD5 collisions can be crafted, and a producer who crafted one
// could make the cleaner delete another key's records. 127 bits leave an
// accidental collision out of reach (about 2^-127 per pair of keys).
type keyHash struct{ hi, lo uint64 }

func hashKey(key []byte) keyHash {
	sum := sha256.Sum256(key)
	return keyHash{
		hi: binary.BigEndian.Uint64(sum[0:8]),
		lo: binary.BigEndian.Uint64(sum[8:16]) | 1,
	}
}

// OffsetMap maps record keys to the latest offset seen for them in one
// cleaning pass. It stores only a 128-bit hash of each key, in an open
// addressing table (linear probing). The table starts small and doubles as
// keys arrive, up to the memory budget: a broker whose compacted topics
// hold few keys (most hold __consumer_offsets only) does not keep Kafka's
// default 128 MiB resident. Put and Get allocate only when the table
// grows. It is not safe for concurrent use.
//
// Invariants: 0 <= Len() <= tableCapacity(len(hashes)) and Len() <= Slots()
// < maxSlots; a slot is empty iff its hash is the zero keyHash; there are
// no deletions, so a probe for a key may stop at the first empty slot.
type OffsetMap struct {
	hashes   []keyHash
	offsets  []base.Offset
	maxSlots int // the table's size at the memory budget
	capacity int // usable entries at the budget: loadFactor of maxSlots
	n        int
	buf      []byte // AddBatch's decompression buffer, reused
}

// initialTableSlots is where a table starts (384 KiB).
const initialTableSlots = 1 << 14

// NewOffsetMap returns a map sized to memoryBytes (at most
// MaxOffsetMapBytes), charged like Kafka's dedupe buffer; a budget below a
// few entries still gets minTableSlots.
func NewOffsetMap(memoryBytes int64) *OffsetMap {
	slots, capacity := mapSize(memoryBytes)
	first := min(slots, initialTableSlots)
	return &OffsetMap{
		hashes:   make([]keyHash, first),
		offsets:  make([]base.Offset, first),
		maxSlots: slots,
		capacity: capacity,
	}
}

// tableCapacity is how many keys a table of slots may hold.
func tableCapacity(slots int) int { return min(int(float64(slots)*loadFactor), slots-1) }

// grow doubles the table (up to maxSlots) and puts every key back.
func (m *OffsetMap) grow() {
	oldHashes, oldOffsets := m.hashes, m.offsets
	slots := min(2*len(oldHashes), m.maxSlots)
	m.hashes, m.offsets = make([]keyHash, slots), make([]base.Offset, slots)
	for i, h := range oldHashes {
		if h != (keyHash{}) {
			j := m.slot(h)
			m.hashes[j], m.offsets[j] = h, oldOffsets[i]
		}
	}
}

// mapSize returns the table's slots for a memory budget and how many of
// them may be filled.
func mapSize(memoryBytes int64) (slots, capacity int) {
	slots = int(max(min(memoryBytes, MaxOffsetMapBytes)/entryBytes, minTableSlots))
	// One slot always stays empty, so every probe ends.
	return slots, tableCapacity(slots)
}

// Slots is how many distinct keys the map holds at most.
func (m *OffsetMap) Slots() int { return m.capacity }

// Len is how many distinct keys the map holds.
func (m *OffsetMap) Len() int { return m.n }

// Reset empties the map for the next pass, keeping its table (a log that
// filled it once will likely fill it again).
func (m *OffsetMap) Reset() {
	clear(m.hashes)
	clear(m.offsets)
	m.n = 0
}

// slot returns where h lives, or the empty slot where it would go.
func (m *OffsetMap) slot(h keyHash) int {
	// Multiply-shift maps the hash onto [0, len) without a modulo and
	// without needing a power-of-two table (which would waste up to half
	// of the memory budget).
	i, _ := bits.Mul64(h.hi, uint64(len(m.hashes)))
	for {
		if s := m.hashes[i]; s == h || s == (keyHash{}) {
			return int(i)
		}
		i++
		if i == uint64(len(m.hashes)) {
			i = 0
		}
	}
}

// Put records o as key's latest offset; the last Put for a key wins, so a
// pass puts in offset order. Putting a new key into a full map is a
// programmer error (AddBatch checks capacity first).
func (m *OffsetMap) Put(key []byte, o base.Offset) {
	h := hashKey(key)
	i := m.slot(h)
	if m.hashes[i] != h {
		if m.n >= m.capacity {
			panic(fmt.Sprintf("cleaner: Put into a full offset map (%d keys)", m.n))
		}
		if m.n >= tableCapacity(len(m.hashes)) {
			m.grow()
			i = m.slot(h)
		}
		m.hashes[i] = h
		m.n++
	}
	m.offsets[i] = o
}

// Get returns the latest offset put for key.
func (m *OffsetMap) Get(key []byte) (base.Offset, bool) {
	h := hashKey(key)
	i := m.slot(h)
	if m.hashes[i] != h {
		return 0, false
	}
	return m.offsets[i], true
}

// AddBatch puts the offset of every keyed record of one stored batch. It is
// all or nothing: when the batch's record count could take the map past
// Slots(), it adds nothing and returns false, so a pass's map always ends
// at a batch boundary and the next pass starts there. Control batches add
// nothing (their keys are marker types, not data) and return true, as do
// records with a null key, which compaction drops.
//
// Batches of aborted transactions add nothing either: they supersede
// nothing, since a read_committed consumer never sees them.
//
// A batch that does not parse returns an error wrapping ErrCorruptBatch. A
// batch too big for even an empty map returns ErrMapTooSmall.
func (m *OffsetMap) AddBatch(batch []byte, aborted *AbortedTxns) (bool, error) {
	h, err := parseStored(batch)
	if err != nil {
		return false, err
	}
	if h.Control() || h.Transactional() && aborted.Aborted(h.ProducerID, h.BaseOffset) {
		return true, nil
	}
	// The header's count bounds the new keys without decompressing;
	// keys already present or null only make the bound loose.
	if int64(m.n)+int64(h.NumRecords) > int64(m.capacity) {
		if m.n == 0 {
			return false, fmt.Errorf("%w: batch at offset %d holds %d records, the map %d",
				ErrMapTooSmall, h.BaseOffset, h.NumRecords, m.capacity)
		}
		return false, nil
	}
	raw, err := payload(batch, h, &m.buf)
	if err != nil {
		return false, err
	}
	// Check every record before putting any, so a corrupt batch leaves
	// the map as it was.
	if err := checkRecords(h, raw); err != nil {
		return false, err
	}
	for len(raw) > 0 {
		rec, rest, _ := record.ParseRecord(raw) // checked above
		if rec.Key != nil {
			m.Put(rec.Key, h.BaseOffset+base.Offset(rec.OffsetDelta))
		}
		raw = rest
	}
	return true, nil
}
