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
	for _, s := range []*State{New(), func() *State { s, _ := fixture(); return s }()} {
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

// reseal recomputes the checksum, so that a test reaches the checks behind it.
func reseal(data []byte) []byte {
	binary.BigEndian.PutUint32(data[6:], crc32.Checksum(data[crcEnd:], castagnoli))
	return data
}

func TestRestoreRejectsCorruption(t *testing.T) {
	s, _ := fixture()
	good := s.Snapshot()
	// Entry 0 is producer 1 with five batches; its batch count is at byte
	// headerSize+18, its first batch right after.
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
		{"zero batches", func(b []byte) []byte { b[headerSize+18] = 0; return reseal(b) }},
		{"six batches", func(b []byte) []byte { b[headerSize+18] = 6; return reseal(b) }},
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
	f.Add(New().Snapshot())
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Restore(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("error %v does not wrap ErrCorruptSnapshot", err)
			}
			return
		}
		if !bytes.Equal(got.Snapshot(), data) {
			t.Fatal("accepted bytes do not re-encode to themselves")
		}
	})
}
