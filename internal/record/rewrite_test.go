package record

import (
	"bytes"
	"hash/crc32"
	"testing"
)

func TestComputeCRCIsCastagnoli(t *testing.T) {
	// "123456789" is the standard check input; CRC-32C gives 0xe3069283.
	b := append(make([]byte, offAttributes), "123456789"...)
	if got := ComputeCRC(b); got != 0xe3069283 {
		t.Fatalf("CRC %#x", got)
	}
	if crc32.Checksum([]byte("123456789"), crc32.MakeTable(crc32.IEEE)) == 0xe3069283 {
		t.Fatal("check value does not tell the polynomials apart")
	}
}

func TestSetLogAppendTime(t *testing.T) {
	for _, c := range allCodecs {
		b := buildBatch(t, batchSpec{codec: c, records: recs(4)})
		before, _ := ParseHeader(b)
		payload := append([]byte(nil), b[HeaderSize:]...)
		const appendMs = int64(1_800_000_000_000)
		SetLogAppendTime(b, appendMs)
		h, err := Validate(b, testLimits)
		if err != nil {
			t.Fatalf("%s: %v", codecName(c), err)
		}
		if !h.LogAppendTime() || h.MaxTimestamp != appendMs || h.BaseTimestamp != before.BaseTimestamp ||
			h.Codec() != c || !bytes.Equal(b[HeaderSize:], payload) {
			t.Fatalf("%s: header %+v", codecName(c), h)
		}
	}
}

func TestRewritesDoNotAllocate(t *testing.T) {
	b := buildBatch(t, batchSpec{records: recs(4)})
	if n := testing.AllocsPerRun(100, func() {
		SetLogAppendTime(b, 42)
		SetBaseOffset(b, 7)
		SetPartitionLeaderEpoch(b, 3)
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
	if _, err := ValidPrefix(b); err != nil {
		t.Fatalf("rewritten batch invalid: %v", err)
	}
}
