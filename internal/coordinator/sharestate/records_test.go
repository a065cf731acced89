package sharestate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// be builds bytes big-endian, independently of the codec under test.
type be []byte

func (b be) i8(v int8) be   { return append(b, byte(v)) }
func (b be) i16(v int16) be { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func (b be) i32(v int32) be { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func (b be) i64(v int64) be { return binary.BigEndian.AppendUint64(b, uint64(v)) }
func (b be) raw(v ...byte) be {
	return append(b, v...)
}

var testKey = partitionKey{group: "g", topicID: topicA, partition: 1}

// TestRecordBytesMatchKafkaSchemas pins the layout of ShareSnapshotKey,
// ShareUpdateKey and ShareSnapshotValue v0 (with its tagged
// DeliveryCompleteCount), as Kafka's generated code writes them.
func TestRecordBytesMatchKafkaSchemas(t *testing.T) {
	wantKey := be{}.i16(0).i16(1).raw('g').raw(topicA[:]...).i32(1)
	if got := appendKey(snapshotKeyType, testKey); !bytes.Equal(got, wantKey) {
		t.Fatalf("ShareSnapshotKey %x, want %x", got, wantKey)
	}
	wantUpdateKey := be{}.i16(1).i16(1).raw('g').raw(topicA[:]...).i32(1)
	if got := appendKey(updateKeyType, testKey); !bytes.Equal(got, wantUpdateKey) {
		t.Fatalf("ShareUpdateKey %x, want %x", got, wantUpdateKey)
	}

	v := snapshotValue{snapshotEpoch: 1, stateEpoch: 2, leaderEpoch: 3, start: startAt(100), deliveryComplete: some[int32](7),
		createMs: 1000, writeMs: 2000, batches: []stateBatch{sb(100, 109, acked, 1)}}
	head := be{}.i16(0).i32(1).i32(2).i32(3).i64(100).i64(1000).i64(2000)
	batch := be{}.raw(2).i64(100).i64(109).i8(2).i16(1).raw(0) // one element, no batch tags
	want := slices.Concat(head, batch, be{}.raw(1, 0, 4).i32(7))
	if got := v.appendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("ShareSnapshotValue\n%x, want\n%x", got, want)
	}
	// An unknown count is Kafka's default, which is not written.
	v.deliveryComplete, v.start, v.batches = optional[int32]{}, noStart, nil
	want = slices.Concat(be{}.i16(0).i32(1).i32(2).i32(3).i64(-1).i64(1000).i64(2000), be{}.raw(1, 0))
	if got := v.appendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("ShareSnapshotValue without start or count\n%x, want\n%x", got, want)
	}
}

// updateBytes writes a ShareUpdateValue as Kafka does; this coordinator
// never writes one, Kafka's does.
func updateBytes(u updateValue) []byte {
	dst := kbin.AppendInt16(nil, valueVersion)
	dst = kbin.AppendInt32(dst, u.snapshotEpoch)
	dst = kbin.AppendInt32(dst, u.leaderEpoch)
	dst = kbin.AppendInt64(dst, startToWire(u.start))
	dst = appendBatches(dst, u.batches)
	return appendCountTag(dst, u.deliveryComplete)
}

func TestUpdateBytesMatchKafkaSchema(t *testing.T) {
	u := updateValue{snapshotEpoch: 4, leaderEpoch: -1, start: startAt(9), batches: []stateBatch{sb(9, 9, arch, 2)}}
	want := be{}.i16(0).i32(4).i32(-1).i64(9).raw(2).i64(9).i64(9).i8(4).i16(2).raw(0).raw(0)
	if got := updateBytes(u); !bytes.Equal(got, want) {
		t.Fatalf("ShareUpdateValue %x, want %x", got, want)
	}
	back, err := readUpdateValue(want)
	if err != nil || !equalUpdates(back, u) {
		t.Fatalf("read back %+v (%v)", back, err)
	}
}

func equalUpdates(a, b updateValue) bool {
	return a.snapshotEpoch == b.snapshotEpoch && a.leaderEpoch == b.leaderEpoch && a.start == b.start &&
		a.deliveryComplete == b.deliveryComplete && slices.Equal(a.batches, b.batches)
}

func equalSnapshots(a, b snapshotValue) bool {
	return a.snapshotEpoch == b.snapshotEpoch && a.stateEpoch == b.stateEpoch && a.leaderEpoch == b.leaderEpoch &&
		a.start == b.start && a.deliveryComplete == b.deliveryComplete && a.createMs == b.createMs &&
		a.writeMs == b.writeMs && slices.Equal(a.batches, b.batches)
}

func drawSnapshot(rt *rapid.T) snapshotValue {
	v := snapshotValue{
		snapshotEpoch: rapid.Int32().Draw(rt, "snapshotEpoch"),
		stateEpoch:    rapid.Int32().Draw(rt, "stateEpoch"),
		leaderEpoch:   rapid.Int32().Draw(rt, "leaderEpoch"),
		start:         drawStart(rt),
		createMs:      rapid.Int64().Draw(rt, "createMs"),
		writeMs:       rapid.Int64().Draw(rt, "writeMs"),
		batches:       drawBatches(rt, "batches"),
	}
	if rapid.Bool().Draw(rt, "hasCount") {
		v.deliveryComplete = some(rapid.Int32Range(0, 1<<30).Draw(rt, "count"))
	}
	return v
}

func TestPropertyRecordsRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := partitionKey{
			group:     rapid.StringN(1, 40, maxKeyStringBytes).Draw(rt, "group"),
			topicID:   base.TopicID(rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "topic")),
			partition: rapid.Int32Range(0, 1<<20).Draw(rt, "partition"),
		}
		for _, keyType := range []int16{snapshotKeyType, updateKeyType} {
			gotType, gotKey, err := readKey(appendKey(keyType, k))
			if err != nil || gotType != keyType || gotKey != k {
				rt.Fatalf("key %+v type %d read back as %+v type %d (%v)", k, keyType, gotKey, gotType, err)
			}
		}
		v := drawSnapshot(rt)
		back, err := readSnapshotValue(v.appendTo(nil))
		if err != nil || !equalSnapshots(back, v) {
			rt.Fatalf("snapshot %+v read back as %+v (%v)", v, back, err)
		}
		u := updateValue{snapshotEpoch: v.snapshotEpoch, leaderEpoch: v.leaderEpoch, start: v.start, deliveryComplete: v.deliveryComplete, batches: v.batches}
		ub, err := readUpdateValue(updateBytes(u))
		if err != nil || !equalUpdates(ub, u) {
			rt.Fatalf("update %+v read back as %+v (%v)", u, ub, err)
		}
	})
}

// TestReplayOfKafkasUpdates replays what Kafka writes for most writes: a
// snapshot, then updates combined into it.
func TestReplayOfKafkasUpdates(t *testing.T) {
	c := New(Options{})
	snap := snapshotValue{snapshotEpoch: 3, stateEpoch: 2, leaderEpoch: 5, start: startAt(10), createMs: 1, writeMs: 2,
		batches: []stateBatch{sb(10, 19, avail, 1)}}
	updates := []updateValue{
		{snapshotEpoch: 3, leaderEpoch: 5, start: noStart, deliveryComplete: some[int32](3), batches: []stateBatch{sb(10, 12, acked, 1)}},
		{snapshotEpoch: 3, leaderEpoch: 6, start: startAt(13), batches: []stateBatch{sb(15, 15, arch, 1), sb(20, 21, avail, 1)}},
		{snapshotEpoch: 3, leaderEpoch: -1, start: noStart, deliveryComplete: some[int32](1), batches: nil},
	}
	mustReplay(t, c, appendKey(snapshotKeyType, testKey), snap.appendTo(nil))
	for _, u := range updates {
		mustReplay(t, c, appendKey(updateKeyType, testKey), updateBytes(u))
	}
	s := c.states[testKey]
	want := []stateBatch{sb(13, 14, avail, 1), sb(15, 15, arch, 1), sb(16, 21, avail, 1)}
	switch {
	case !slices.Equal(s.batches, want):
		t.Fatalf("batches %v, want %v", s.batches, want)
	case s.start != startAt(13) || s.leaderEpoch != 6 || s.fenceLeaderEpoch != 6:
		t.Fatalf("start %v leader epoch %d fence %d", s.start, s.leaderEpoch, s.fenceLeaderEpoch)
	case s.deliveryComplete != some[int32](1) || s.stateEpoch != 2 || s.snapshotEpoch != 3 || s.createMs != 1 || s.writeMs != 2:
		t.Fatalf("state after updates %+v", s.snapshotValue)
	}

	// An update with no snapshot before it makes a state, as in Kafka.
	other := partitionKey{group: "u", topicID: topicB, partition: 0}
	mustReplay(t, c, appendKey(updateKeyType, other), updateBytes(updates[1]))
	if s := c.states[other]; s == nil || s.stateEpoch != 0 || s.start != startAt(13) || len(s.batches) != 2 {
		t.Fatalf("state from a lone update: %+v", s)
	}
	// Tombstones: an update key's changes nothing, a snapshot key's deletes.
	mustReplay(t, c, appendKey(updateKeyType, testKey), nil)
	if c.states[testKey] == nil {
		t.Fatal("a ShareUpdate tombstone deleted the state")
	}
	mustReplay(t, c, appendKey(snapshotKeyType, testKey), nil)
	mustReplay(t, c, appendKey(snapshotKeyType, partitionKey{group: "never", topicID: topicA}), nil)
	if c.states[testKey] != nil {
		t.Fatal("a ShareSnapshot tombstone left the state")
	}
	// Other record types are skipped, as Kafka's loader skips them.
	mustReplay(t, c, be{}.i16(2).raw(1, 2, 3), []byte{0xff})
	mustReplay(t, c, be{}.i16(-1), nil)
}

// TestPropertyUpdatesCombineLikeWrites: a snapshot followed by any
// ShareUpdate records holds, offset by offset, what the same batches
// written as requests would: the property test's model of writes.
func TestPropertyUpdatesCombineLikeWrites(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := New(Options{})
		snap := drawSnapshot(rt)
		mustReplayRapid(rt, c, appendKey(snapshotKeyType, testKey), snap.appendTo(nil))
		model := offsetModel{}
		model.write(testKey, snap.batches, snap.start)
		for range rapid.IntRange(0, 6).Draw(rt, "updates") {
			u := updateValue{leaderEpoch: drawEpoch(rt, "leaderEpoch"), start: drawStart(rt), batches: drawBatches(rt, "batches")}
			mustReplayRapid(rt, c, appendKey(updateKeyType, testKey), updateBytes(u))
			model.write(testKey, u.batches, c.states[testKey].start)
		}
		s := c.states[testKey]
		checkCanonical(rt, s.batches, s.start)
		if !equalRanks(expand(s.batches), model[testKey]) {
			rt.Fatalf("batches %v, the model holds %v", s.batches, model[testKey])
		}
	})
}

func mustReplay(t *testing.T, c *Coordinator, key, value []byte) {
	t.Helper()
	if err := c.Replay(key, value); err != nil {
		t.Fatalf("Replay(%x, %x): %v", key, value, err)
	}
}

func TestReplaySkipsUnknownTags(t *testing.T) {
	v := snapshotValue{start: startAt(0), batches: []stateBatch{sb(0, 0, avail, 1)}}
	b := v.appendTo(nil)
	// The value ends with an empty tag section (0); make it two tags: an
	// unknown one (tag 5) and the count. Kafka skips what it does not know.
	b = append(b[:len(b)-1], 2, 0, 4, 0, 0, 0, 9, 5, 3, 'x', 'y', 'z')
	got, err := readSnapshotValue(b)
	if err != nil || got.deliveryComplete != some[int32](9) {
		t.Fatalf("value with an unknown tag read as %+v (%v)", got, err)
	}
}

func TestReplayRejectsGarbage(t *testing.T) {
	good := snapshotValue{snapshotEpoch: 1, start: startAt(0), deliveryComplete: some[int32](2), batches: []stateBatch{sb(0, 4, acked, 1)}}
	goodValue := good.appendTo(nil)
	key := appendKey(snapshotKeyType, testKey)
	withBatch := func(first, last int64, state int8, count int16) []byte {
		head := be{}.i16(0).i32(1).i32(0).i32(0).i64(0).i64(0).i64(0)
		return slices.Concat(head, be{}.raw(2).i64(first).i64(last).i8(state).i16(count).raw(0), be{}.raw(0))
	}
	withTags := func(tags ...byte) []byte {
		return append(be{}.i16(0).i32(1).i32(0).i32(0).i64(0).i64(0).i64(0).raw(1), tags...)
	}
	for _, tc := range []struct {
		name       string
		key, value []byte
	}{
		{"empty key", nil, goodValue},
		{"one-byte key", []byte{0}, goodValue},
		{"truncated key", key[:len(key)-1], goodValue},
		{"key with trailing bytes", append(slices.Clone(key), 0), goodValue},
		{"null group", be{}.i16(0).i16(-1).raw(topicA[:]...).i32(0), goodValue},
		{"empty group", appendKey(snapshotKeyType, partitionKey{topicID: topicA}), goodValue},
		{"negative partition", appendKey(snapshotKeyType, partitionKey{group: "g", topicID: topicA, partition: -1}), goodValue},
		{"update key, bad group length", be{}.i16(1).i16(400).raw('g'), goodValue},
		{"empty value", key, []byte{}},
		{"value version 1", key, append(be{}.i16(1), goodValue[2:]...)},
		{"value version -1", key, append(be{}.i16(-1), goodValue[2:]...)},
		{"truncated value", key, goodValue[:len(goodValue)-3]},
		{"value with trailing bytes", key, append(slices.Clone(goodValue), 0)},
		{"start below -1", key, be{}.i16(0).i32(1).i32(0).i32(0).i64(-2).i64(0).i64(0).raw(1, 0)},
		{"null batches", key, be{}.i16(0).i32(1).i32(0).i32(0).i64(0).i64(0).i64(0).raw(0, 0)},
		{"more batches than bytes", key, be{}.i16(0).i32(1).i32(0).i32(0).i64(0).i64(0).i64(0).raw(0xff, 0xff, 0x03, 0)},
		{"reversed batch", key, withBatch(5, 4, 0, 1)},
		{"negative batch", key, withBatch(-1, 4, 0, 1)},
		{"acquired batch", key, withBatch(0, 4, 1, 1)},
		{"negative delivery count", key, withBatch(0, 4, 0, -1)},
		{"count below -1", key, withTags(1, 0, 4, 0xff, 0xff, 0xff, 0xfe)},
		{"short count tag", key, withTags(1, 0, 2, 0, 1)},
		{"long count tag", key, withTags(1, 0, 5, 0, 0, 0, 1, 0)},
		{"tag past the end", key, withTags(1, 7, 9, 1)},
		{"bad update value", appendKey(updateKeyType, testKey), goodValue},
	} {
		c := New(Options{})
		mustReplay(t, c, key, goodValue)
		before := snapshotOf(c)
		err := c.Replay(tc.key, tc.value)
		if !errors.Is(err, ErrBadRecord) {
			t.Fatalf("%s: Replay returned %v", tc.name, err)
		}
		if after := snapshotOf(c); !maps.Equal(before, after) {
			t.Fatalf("%s: a bad record changed the state", tc.name)
		}
	}
}

// TestPropertyReplayOfRandomBytes: Replay of any bytes, and of valid
// records cut or with a byte changed, never panics; it either succeeds or
// fails with ErrBadRecord and leaves the state as it was.
func TestPropertyReplayOfRandomBytes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := New(Options{})
		mustReplayRapid(rt, c, appendKey(snapshotKeyType, testKey), drawSnapshot(rt).appendTo(nil))
		var key, value []byte
		if rapid.Bool().Draw(rt, "random") {
			key = rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(rt, "key")
			value = rapid.SliceOfN(rapid.Byte(), 0, 120).Draw(rt, "value")
			if len(key) >= 2 && rapid.Bool().Draw(rt, "knownType") {
				key[0], key[1] = 0, byte(rapid.IntRange(0, 1).Draw(rt, "type"))
			}
		} else {
			keyType := int16(rapid.IntRange(0, 1).Draw(rt, "type"))
			key = appendKey(keyType, testKey)
			value = drawSnapshot(rt).appendTo(nil)
			if keyType == updateKeyType {
				value = updateBytes(updateValue{start: noStart, batches: drawBatches(rt, "batches")})
			}
			value = mutate(rt, value)
		}
		before := snapshotOf(c)
		err := c.Replay(key, value)
		if err != nil {
			if !errors.Is(err, ErrBadRecord) {
				rt.Fatalf("Replay(%x, %x) returned %v", key, value, err)
			}
			if !maps.Equal(before, snapshotOf(c)) {
				rt.Fatalf("a failed Replay(%x, %x) changed the state", key, value)
			}
		}
		checkInvariants(rt, c)
	})
}

// mutate cuts b short, changes one byte, or leaves it.
func mutate(rt *rapid.T, b []byte) []byte {
	switch rapid.IntRange(0, 2).Draw(rt, "mutation") {
	case 0:
		return b[:rapid.IntRange(0, len(b)).Draw(rt, "cut")]
	case 1:
		b = slices.Clone(b)
		b[rapid.IntRange(0, len(b)-1).Draw(rt, "at")] = rapid.Byte().Draw(rt, "byte")
	}
	return b
}

func mustReplayRapid(rt *rapid.T, c *Coordinator, key, value []byte) {
	if err := c.Replay(key, value); err != nil {
		rt.Fatalf("Replay of a valid record: %v", err)
	}
}

// FuzzReplay: go test -fuzz FuzzReplay. The seeds run as a test.
func FuzzReplay(f *testing.F) {
	v := snapshotValue{snapshotEpoch: 1, start: startAt(3), deliveryComplete: some[int32](1), batches: []stateBatch{sb(3, 9, acked, 2)}}
	f.Add(appendKey(snapshotKeyType, testKey), v.appendTo(nil))
	f.Add(appendKey(updateKeyType, testKey), updateBytes(updateValue{start: noStart, batches: v.batches}))
	f.Add([]byte{0, 0}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c := New(Options{})
		if err := c.Replay(key, value); err != nil && !errors.Is(err, ErrBadRecord) {
			t.Fatalf("Replay returned %v", err)
		}
		checkInvariants(t, c)
	})
}
