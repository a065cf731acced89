package record

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"pgregory.net/rapid"
)

// testLog concatenates batches with consecutive offsets, as a segment holds
// them, and returns each batch's end.
func testLog(t fataler, codecs []Codec, sizes []int) (log []byte, ends []int) {
	next := base.Offset(0)
	for i, c := range codecs {
		b := buildBatch(t, batchSpec{codec: c, records: recs(sizes[i])})
		SetBaseOffset(b, next)
		next += base.Offset(sizes[i])
		log = append(log, b...)
		ends = append(ends, len(log))
	}
	return log, ends
}

func TestSplitBatches(t *testing.T) {
	log, ends := testLog(t, allCodecs, []int{1, 2, 3, 4, 5})
	it := SplitBatches(log)
	i := 0
	for b, h, ok := it.Next(); ok; b, h, ok = it.Next() {
		if h.Size() != len(b) || it.Offset() != ends[i] || h.NumRecords != int32(i+1) {
			t.Fatalf("batch %d: size %d, header %+v, offset %d", i, len(b), h, it.Offset())
		}
		if cap(b) != len(b) {
			t.Fatalf("batch %d: capacity %d reaches into the next batch", i, cap(b))
		}
		i++
	}
	if it.Err() != nil || i != len(ends) {
		t.Fatalf("stopped after %d batches: %v", i, it.Err())
	}
	if n := testing.AllocsPerRun(50, func() {
		it := SplitBatches(log)
		for _, _, ok := it.Next(); ok; _, _, ok = it.Next() {
		}
	}); n != 0 {
		t.Fatalf("SplitBatches allocates %v times", n)
	}
}

func TestSplitBatchesStopsAtBadFraming(t *testing.T) {
	log, ends := testLog(t, []Codec{CodecNone, CodecNone}, []int{2, 2})
	negative := append([]byte(nil), log...)
	negative[ends[0]+offLength] = 0xff // length field of batch 2 now negative
	tests := []struct {
		name string
		b    []byte
		code int16
	}{
		{"truncated batch", log[:len(log)-1], CodeCorruptMessage},
		{"truncated header", log[:ends[0]+HeaderSize-1], CodeCorruptMessage},
		{"negative length", negative, CodeCorruptMessage},
		{"old magic", append(append([]byte(nil), log[:ends[0]]...), magic(1)(t)...), CodeUnsupportedForMessageFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := SplitBatches(tt.b)
			n := 0
			for _, _, ok := it.Next(); ok; _, _, ok = it.Next() {
				n++
			}
			mustCode(t, it.Err(), tt.code)
			if n != 1 || it.Offset() != ends[0] {
				t.Fatalf("got %d batches, offset %d", n, it.Offset())
			}
		})
	}
}

func TestValidPrefix(t *testing.T) {
	log, ends := testLog(t, []Codec{CodecNone, CodecZstd, CodecGzip}, []int{3, 2, 4})
	backwards := append([]byte(nil), log...)
	SetBaseOffset(backwards[ends[1]:], 0)
	compactedAway := buildBatch(t, batchSpec{records: nil, mutate: func(kb *kmsgBatch) {
		kb.FirstOffset, kb.LastOffsetDelta = 9, 4 // compaction emptied it
	}})
	overlapping := append([]byte(nil), log...)
	SetBaseOffset(overlapping[ends[0]:], 2) // batch 1 holds 0..2
	storedAt := func(mutate func(*kmsgBatch)) []byte {
		b := buildBatch(t, batchSpec{records: recs(2), mutate: mutate})
		SetBaseOffset(b, 9)
		return b
	}
	negativeCount := storedAt(func(kb *kmsgBatch) { kb.NumRecords = -1 })
	tooMany := storedAt(func(kb *kmsgBatch) { kb.NumRecords, kb.LastOffsetDelta = 3, 1 })
	tests := []struct {
		name string
		b    []byte
		want int
		ok   bool
	}{
		{"whole log", log, len(log), true},
		{"empty", nil, 0, true},
		{"torn tail", log[:len(log)-3], ends[1], false},
		{"zero fill after", append(append([]byte(nil), log...), make([]byte, 100)...), len(log), false},
		{"offsets go back", backwards, ends[1], false},
		{"base offset on the last offset before", overlapping, ends[0], false},
		{"negative record count", append(append([]byte(nil), log...), negativeCount...), len(log), false},
		{"more records than offsets", append(append([]byte(nil), log...), tooMany...), len(log), false},
		{"tail as long as the magic's offset", append(append([]byte(nil), log...), make([]byte, offMagic)...), len(log), false},
		{"emptied by compaction", append(append([]byte(nil), log...), compactedAway...), len(log) + len(compactedAway), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := ValidPrefix(tt.b)
			if n != tt.want || (err == nil) != tt.ok {
				t.Fatalf("ValidPrefix = %d, %v; want %d, ok=%v", n, err, tt.want, tt.ok)
			}
		})
	}
}

// TestValidPrefixProperty damages a valid log once, by truncation or by a
// bit flip in bytes that framing, magic or the CRC cover, and checks that
// ValidPrefix keeps exactly the batches before the damage.
func TestValidPrefixProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(rt, "batches")
		codecs := rapid.SliceOfN(rapid.SampledFrom(allCodecs), n, n).Draw(rt, "codecs")
		sizes := rapid.SliceOfN(rapid.IntRange(1, 20), n, n).Draw(rt, "sizes")
		log, ends := testLog(rt, codecs, sizes)
		var want int
		if rapid.Bool().Draw(rt, "truncate") {
			cut := rapid.IntRange(0, len(log)).Draw(rt, "cut")
			log, want = log[:cut], wholeBefore(ends, cut)
		} else {
			pos := rapid.IntRange(0, len(log)-1).Draw(rt, "pos")
			if inBatch := pos - wholeBefore(ends, pos); inBatch < offLength || (inBatch >= offPartitionLeaderEpoch && inBatch < offMagic) {
				rt.Skip("base offset and leader epoch are outside the CRC")
			}
			log[pos] ^= 1 << rapid.IntRange(0, 7).Draw(rt, "bit")
			want = wholeBefore(ends, pos)
		}
		got, err := ValidPrefix(log)
		if got != want {
			rt.Fatalf("ValidPrefix = %d (%v), want %d", got, err, want)
		}
		if (err == nil) != (got == len(log)) {
			rt.Fatalf("err %v with prefix %d of %d", err, got, len(log))
		}
	})
}

// wholeBefore is the end of the last batch that ends at or before pos.
func wholeBefore(ends []int, pos int) int {
	w := 0
	for _, e := range ends {
		if e <= pos {
			w = e
		}
	}
	return w
}
