package producers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"
)

func TestSnapshotRoundTrip(t *testing.T) {
	for _, s := range []*State{New(), func() *State { s, _ := fixture(); return s }(), txnFixture()} {
		data := s.Snapshot()
		got, err := Restore(data)
		if err != nil {
			t.Fatalf("Restore: %v", err)
		}
		if !reflect.DeepEqual(got.Entries(), s.Entries()) {
			t.Fatalf("round trip: got %+v, want %+v", got.Entries(), s.Entries())
		}
		if !bytes.Equal(got.Snapshot(), data) {
			t.Fatal("encoding is not deterministic")
		}
	}
}

// snapshotV1 encodes s as version 1 did (no coordinator epoch, no
// transaction, at least one batch per entry), as files of existing
// deployments hold it.
func snapshotV1(s *State) []byte {
	entries := s.Entries()
	buf := make([]byte, headerSize)
	copy(buf, snapshotMagic[:])
	binary.BigEndian.PutUint16(buf[4:], 1)
	binary.BigEndian.PutUint32(buf[crcEnd:], uint32(len(entries)))
	for _, e := range entries {
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.ProducerID))
		buf = binary.BigEndian.AppendUint16(buf, uint16(e.Epoch))
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.LastTimestampMs))
		buf = append(buf, uint8(len(e.Batches)))
		for _, b := range e.Batches {
			buf = appendBatch(buf, b)
		}
	}
	return reseal(buf)
}

func TestRestoreReadsVersion1(t *testing.T) {
	s, _ := fixture()
	got, err := Restore(snapshotV1(s))
	if err != nil {
		t.Fatalf("Restore of a version 1 snapshot: %v", err)
	}
	if !reflect.DeepEqual(got.Entries(), s.Entries()) {
		t.Fatalf("version 1: got %+v, want %+v", got.Entries(), s.Entries())
	}
	if v := binary.BigEndian.Uint16(got.Snapshot()[4:]); v != snapshotVersion {
		t.Fatalf("re-encoded as version %d", v)
	}
	// Version 1 never had an entry without batches.
	v1 := snapshotV1(s)
	v1[headerSize+18] = 0
	if _, err := Restore(reseal(v1)); !errors.Is(err, ErrCorruptSnapshot) {
		t.Fatalf("version 1 entry with no batch: %v", err)
	}
}

// reseal recomputes the checksum, so that a test reaches the checks behind it.
func reseal(data []byte) []byte {
	binary.BigEndian.PutUint32(data[6:], crc32.Checksum(data[crcEnd:], castagnoli))
	return data
}

func TestRestoreRejectsCorruption(t *testing.T) {
	s, _ := fixture()
	good := s.Snapshot()
	// Entry 0 is producer 1 with five batches; its coordinator epoch is at
	// byte headerSize+18, its transaction's first offset at +22, its batch
	// count at +30, its first batch right after.
	firstBatch := headerSize + entrySize
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"short header", func(b []byte) []byte { return b[:headerSize-1] }},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"unknown version", func(b []byte) []byte { b[5] = 9; return b }},
		{"flipped bit", func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }},
		{"truncated", func(b []byte) []byte { return reseal(b[:len(b)-3]) }},
		{"trailing bytes", func(b []byte) []byte { return reseal(append(b, 0)) }},
		{"huge count", func(b []byte) []byte { binary.BigEndian.PutUint32(b[crcEnd:], 1<<31); return reseal(b) }},
		{"fewer batches than written", func(b []byte) []byte { b[headerSize+30] = 0; return reseal(b) }},
		{"six batches", func(b []byte) []byte { b[headerSize+30] = 6; return reseal(b) }},
		{"negative coordinator epoch", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[headerSize+18:], 1<<31)
			return reseal(b)
		}},
		{"transaction first offset -2", func(b []byte) []byte {
			binary.BigEndian.PutUint64(b[headerSize+22:], ^uint64(1))
			return reseal(b)
		}},
		{"offsets reversed", func(b []byte) []byte {
			binary.BigEndian.PutUint64(b[firstBatch+8:], 1<<40)
			return reseal(b)
		}},
		{"duplicate producer id", func(b []byte) []byte {
			second := firstBatch + 5*batchSize
			copy(b[second:second+8], b[headerSize:headerSize+8])
			return reseal(b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.mutate(bytes.Clone(good))
			if _, err := Restore(data); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("Restore = %v, want ErrCorruptSnapshot", err)
			}
		})
	}
}

func FuzzRestore(f *testing.F) {
	s, _ := fixture()
	f.Add(s.Snapshot())
	f.Add(snapshotV1(s))
	f.Add(txnFixture().Snapshot())
	f.Add(New().Snapshot())
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Restore(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("error %v does not wrap ErrCorruptSnapshot", err)
			}
			return
		}
		enc := got.Snapshot()
		if binary.BigEndian.Uint16(data[4:]) == snapshotVersion {
			if !bytes.Equal(enc, data) {
				t.Fatal("accepted bytes do not re-encode to themselves")
			}
			return
		}
		// A version 1 snapshot re-encodes as the current version, to the
		// same state.
		again, err := Restore(enc)
		if err != nil || !reflect.DeepEqual(again.Entries(), got.Entries()) {
			t.Fatalf("version 1 state does not survive re-encoding: %v", err)
		}
	})
}
