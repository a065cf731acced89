package record

import (
	"bytes"
	"testing"
)

func seedBatches(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, c := range allCodecs {
		seeds = append(seeds, buildBatch(f, batchSpec{codec: c, records: mixedRecords()[:3]}))
	}
	log, _ := testLog(f, allCodecs, []int{1, 2, 3, 1, 2})
	return append(seeds, log)
}

// FuzzValidate: no input panics, and an accepted batch reads back, rewrites
// and recompresses into batches that stay valid.
func FuzzValidate(f *testing.F) {
	for _, s := range seedBatches(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAccepted(t, b)
		// Random bytes almost never carry a matching CRC; fixing it lets
		// the fuzzer reach the record walk.
		if len(b) >= HeaderSize {
			c := bytes.Clone(b)
			WriteCRC(c)
			checkAccepted(t, c)
		}
	})
}

func checkAccepted(t *testing.T, b []byte) {
	h, err := Validate(b, testLimits)
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error %v is not *Error", err)
		}
		return
	}
	if h.Size() != len(b) {
		t.Fatalf("accepted %d bytes as a batch of %d", len(b), h.Size())
	}
	var r RecordReader
	if r.Reset(b) == nil {
		for _, ok := r.Next(); ok; _, ok = r.Next() {
		}
		if h.Codec() == CodecNone && r.Err() != nil {
			t.Fatalf("validated batch does not read: %v", r.Err())
		}
	}
	if out, err := Recompress(b, CodecSnappy, nil); err == nil {
		if _, err := Validate(out, Limits{MaxBatchBytes: 1 << 30}); err != nil {
			t.Fatalf("recompressed batch invalid: %v", err)
		}
	}
	c := bytes.Clone(b)
	SetLogAppendTime(c, 1)
	if _, err := Validate(c, testLimits); err != nil {
		t.Fatalf("SetLogAppendTime broke the batch: %v", err)
	}
}

// FuzzSplitBatches: no input panics, batches tile the input, and the valid
// prefix is itself entirely valid.
func FuzzSplitBatches(f *testing.F) {
	for _, s := range seedBatches(f) {
		f.Add(s)
		f.Add(s[:len(s)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		it := SplitBatches(b)
		total := 0
		for batch, h, ok := it.Next(); ok; batch, h, ok = it.Next() {
			if h.Size() != len(batch) {
				t.Fatalf("header size %d for %d bytes", h.Size(), len(batch))
			}
			total += len(batch)
		}
		if total != it.Offset() || (it.Err() == nil) != (total == len(b)) {
			t.Fatalf("walked %d of %d bytes, offset %d, err %v", total, len(b), it.Offset(), it.Err())
		}
		n, err := ValidPrefix(b)
		if n > total || (err == nil) != (n == len(b)) {
			t.Fatalf("ValidPrefix = %d, %v with %d framed bytes", n, err, total)
		}
		if n2, err := ValidPrefix(b[:n]); n2 != n || err != nil {
			t.Fatalf("valid prefix %d re-checks as %d, %v", n, n2, err)
		}
	})
}

// FuzzDecompress: no codec panics or exceeds the bound on any input.
func FuzzDecompress(f *testing.F) {
	for _, c := range allCodecs {
		comp, _ := Compress(c, []byte("some data some data some data"), nil)
		f.Add(int8(c), comp)
	}
	f.Fuzz(func(t *testing.T, c int8, src []byte) {
		const limit = 1 << 16
		out, err := decompress(Codec(c), src, nil, limit)
		if err == nil && Codec(c) != CodecNone && len(out) > limit {
			t.Fatalf("%d bytes out past a bound of %d", len(out), limit)
		}
	})
}
