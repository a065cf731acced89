package partition

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

func TestAppendReadRoundTrip(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.LeaderEpoch = 7 })
	p := e.open(t)
	var sent [][]byte
	for i, n := range []int{3, 1, 4} {
		b := batch(t, spec{records: n, seq: int32(i)})
		sent = append(sent, bytes.Clone(b))
		res := mustAppend(t, p, b, AcksLeader)
		if want := []base.Offset{0, 3, 4}[i]; res.BaseOffset != want || res.Duplicate {
			t.Fatalf("append %d: %+v, want base offset %d", i, res, want)
		}
	}
	if off := p.Offsets(); off.LogEnd != 8 || off.HighWatermark != 8 || off.LogStart != 0 || off.LeaderEpoch != 7 {
		t.Fatalf("Offsets = %+v", off)
	}
	rr, err := p.Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := record.SplitBatches(rr.Records)
	for i := 0; ; i++ {
		got, h, ok := it.Next()
		if !ok {
			if i != len(sent) {
				t.Fatalf("read %d batches, want %d (err %v)", i, len(sent), it.Err())
			}
			break
		}
		if h.PartitionLeaderEpoch != 7 {
			t.Errorf("batch %d: leader epoch %d, want 7", i, h.PartitionLeaderEpoch)
		}
		if want := []base.Offset{0, 3, 4}[i]; h.BaseOffset != want {
			t.Errorf("batch %d stored at %d, want %d", i, h.BaseOffset, want)
		}
		// Apart from the offset and epoch, outside the CRC, the bytes are the producer's.
		if !bytes.Equal(got[16:], sent[i][16:]) {
			t.Errorf("batch %d: bytes changed", i)
		}
	}
	// A read from inside a batch returns the whole batch (Kafka semantics).
	if hs := readAll(t, p, 5); len(hs) != 1 || hs[0].BaseOffset != 4 {
		t.Fatalf("Read(5) = %+v, want the batch at 4", hs)
	}
}

func TestAcksAllWaitsForDurability(t *testing.T) {
	p := newEnv(t).open(t)
	res, wait, err := p.Append(batch(t, spec{records: 2}), AcksLeader)
	if err != nil || wait != nil {
		t.Fatalf("acks=1: wait %v, err %v; want no wait", wait != nil, err)
	}
	res, wait, err = p.Append(batch(t, spec{records: 5}), AcksAll)
	if err != nil || wait == nil {
		t.Fatalf("acks=all: wait %v, err %v; want a wait", wait != nil, err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := p.log.DurableEnd(), res.BaseOffset+5; got < want {
		t.Fatalf("DurableEnd = %d after the wait, want >= %d", got, want)
	}
}

func TestIdempotentDuplicateSurvivesRestart(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	const pid = 42
	first := mustAppend(t, p, batch(t, spec{pid: pid, records: 3}), AcksLeader)
	res := mustAppend(t, p, batch(t, spec{pid: pid, records: 3}), AcksAll)
	if !res.Duplicate || res.BaseOffset != first.BaseOffset || p.Offsets().LogEnd != 3 {
		t.Fatalf("resent batch answered %+v, log end %d; want a duplicate at %d", res, p.Offsets().LogEnd, first.BaseOffset)
	}
	// Roll a few segments after it, so the crash case restores a snapshot.
	for i := range 20 {
		mustAppend(t, p, batch(t, spec{pid: pid, seq: int32(3 + i), valueBytes: 100}), AcksLeader)
	}
	if len(p.log.Segments()) < 3 {
		t.Fatal("no roll: the test would not restore a snapshot")
	}

	// Only the last MaxBatches batches are remembered: resend one of those.
	crashed := openAt(t, e.crashCopy(t))
	res = mustAppend(t, crashed, batch(t, spec{pid: pid, seq: 22, valueBytes: 100}), AcksLeader)
	if !res.Duplicate || res.BaseOffset != 22 {
		t.Fatalf("after a crash: %+v, want a duplicate at 22", res)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	res = mustAppend(t, p, batch(t, spec{pid: pid, seq: 22, valueBytes: 100}), AcksLeader)
	if !res.Duplicate || res.BaseOffset != 22 {
		t.Fatalf("after Close and Open: %+v, want a duplicate at 22", res)
	}
}

func TestIdempotentDuplicateAfterCrashWithoutSnapshot(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	first := mustAppend(t, p, batch(t, spec{pid: 9, records: 2}), AcksLeader)
	mustAppend(t, p, batch(t, spec{records: 1}), AcksLeader)
	crashed := openAt(t, e.crashCopy(t)) // one segment: a full replay
	res := mustAppend(t, crashed, batch(t, spec{pid: 9, records: 2}), AcksLeader)
	if !res.Duplicate || res.BaseOffset != first.BaseOffset {
		t.Fatalf("after a crash: %+v, want a duplicate at %d", res, first.BaseOffset)
	}
}

func TestProducerSequenceAndEpochErrors(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, spec{pid: 5, epoch: 2, records: 2}), AcksLeader)

	_, _, err := p.Append(batch(t, spec{pid: 5, epoch: 2, seq: 5}), AcksLeader)
	wantCode(t, err, producers.CodeOutOfOrderSequenceNumber)
	if !errors.Is(err, producers.ErrOutOfOrderSequence) {
		t.Errorf("%v is not ErrOutOfOrderSequence", err)
	}
	_, _, err = p.Append(batch(t, spec{pid: 5, epoch: 1, seq: 2}), AcksLeader)
	wantCode(t, err, producers.CodeInvalidProducerEpoch)
	if end := p.Offsets().LogEnd; end != 2 {
		t.Fatalf("refused batches were written: log end %d", end)
	}
	// The next sequence, and a new epoch from 0, are accepted.
	mustAppend(t, p, batch(t, spec{pid: 5, epoch: 2, seq: 2}), AcksLeader)
	mustAppend(t, p, batch(t, spec{pid: 5, epoch: 3, seq: 0}), AcksLeader)
}

func TestLogAppendTime(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Config.LogAppendTime = true })
	p := e.open(t)
	e.clock.Advance(time.Hour)
	now := e.clock.Now().UnixMilli()
	res := mustAppend(t, p, batch(t, spec{records: 2, pid: 3}), AcksLeader)
	if !res.LogAppendTime || res.LogAppendTimeMs != now {
		t.Fatalf("result %+v, want LogAppendTime %d", res, now)
	}
	rr, err := p.Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, h, _ := func() ([]byte, record.Header, bool) { it := record.SplitBatches(rr.Records); return it.Next() }()
	if !h.LogAppendTime() || h.MaxTimestamp != now {
		t.Fatalf("stored batch: LogAppendTime %v, max timestamp %d; want true, %d", h.LogAppendTime(), h.MaxTimestamp, now)
	}
	if record.ComputeCRC(b) != h.CRC {
		t.Fatal("stored batch has a stale CRC")
	}
	// A duplicate is answered with the original append time.
	e.clock.Advance(time.Minute)
	dup := mustAppend(t, p, batch(t, spec{records: 2, pid: 3}), AcksLeader)
	if !dup.Duplicate || dup.LogAppendTimeMs != now {
		t.Fatalf("duplicate %+v, want append time %d", dup, now)
	}
}

func TestReadOutsideRange(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, spec{records: 3}), AcksLeader)
	if _, err := p.Read(4, 1024, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read beyond the high watermark: %v, want ErrOffsetOutOfRange", err)
	}
	rr, err := p.Read(3, 1024, nil)
	if err != nil || len(rr.Records) != 0 {
		t.Fatalf("Read at the high watermark: %d bytes, %v; want nothing, no error", len(rr.Records), err)
	}
}

func TestRecompressToZstd(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Config.Recompress, o.Config.RecompressSet = record.CodecZstd, true })
	p := e.open(t)
	sent := batch(t, spec{records: 4, valueBytes: 200})
	var want record.RecordReader
	if err := want.Reset(bytes.Clone(sent)); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, sent, AcksLeader)
	rr, err := p.Read(0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := record.SplitBatches(rr.Records)
	b, h, ok := it.Next()
	if !ok || h.Codec() != record.CodecZstd || h.NumRecords != 4 {
		t.Fatalf("stored batch: ok %v, codec %d, %d records; want zstd with 4", ok, h.Codec(), h.NumRecords)
	}
	var got record.RecordReader
	if err := got.Reset(b); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		g, gok := got.Next()
		w, wok := want.Next()
		if gok != wok {
			t.Fatalf("record %d: stored has %v, sent has %v (%v)", i, gok, wok, got.Err())
		}
		if !gok {
			break
		}
		if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) || g.OffsetDelta != w.OffsetDelta {
			t.Fatalf("record %d differs after recompression", i)
		}
	}
}

func TestBatchOverMaxMessageBytes(t *testing.T) {
	p := newEnv(t, func(o *Options) { o.Config.MaxMessageBytes = 500 }).open(t)
	_, _, err := p.Append(batch(t, spec{records: 2, valueBytes: 300}), AcksLeader)
	wantCode(t, err, record.CodeMessageTooLarge)
}

// max.message.bytes=0 is a valid config, as in Kafka: the partition opens
// and refuses every batch.
func TestZeroMaxMessageBytesRefusesEveryBatch(t *testing.T) {
	p := newEnv(t, func(o *Options) { o.Config.MaxMessageBytes = 0 }).open(t)
	_, _, err := p.Append(batch(t, spec{records: 1, valueBytes: 1}), AcksLeader)
	wantCode(t, err, record.CodeMessageTooLarge)
}

// Regression: a batch within max.message.bytes that recompression makes
// larger was written; Kafka checks the size again after recompression.
func TestRecompressedBatchOverMaxMessageBytes(t *testing.T) {
	value := make([]byte, 400)
	_, _ = rand.Read(value) // incompressible: zstd can only add its framing
	b := batch(t, spec{records: 1, valueBytes: 400})
	copy(b[len(b)-400-1:], value) // the value ends one byte (headers count) before the end
	record.WriteCRC(b)
	max := len(b)
	p := newEnv(t, func(o *Options) {
		o.Config.MaxMessageBytes = max
		o.Config.Recompress, o.Config.RecompressSet = record.CodecZstd, true
	}).open(t)
	_, _, err := p.Append(b, AcksLeader)
	wantCode(t, err, record.CodeMessageTooLarge)
	if end := p.Offsets().LogEnd; end != 0 {
		t.Fatalf("oversized batch written: log end %d", end)
	}
}

// Regression: every refused single batch was answered as "more than one
// batch" (87), hiding its own code; and two real producer batches, both at
// base offset 0, were not recognized as two.
func TestTwoBatchesInOneProduce(t *testing.T) {
	p := newEnv(t).open(t)
	two := append(batch(t, spec{}), batch(t, spec{})...)
	if _, _, err := p.Append(two, AcksLeader); !errors.Is(err, ErrInvalidBatchCount) {
		t.Fatalf("two batches: %v, want ErrInvalidBatchCount", err)
	}
}
