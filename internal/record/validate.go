package record

// Limits bounds what Validate accepts.
type Limits struct {
	// MaxBatchBytes is the topic's max.message.bytes (broker default
	// message.max.bytes): the largest whole batch, header included. 0
	// refuses every batch, as Kafka's max.message.bytes=0 does; negative is
	// a programmer error.
	MaxBatchBytes int
	// Timestamps, when Check is set, bounds CreateTime timestamps
	// (message.timestamp.before.max.ms / after.max.ms, resolved against the
	// broker clock by the caller).
	Timestamps TimestampRange
	// FromCoordinator marks a coordinator's own batch (Kafka's
	// AppendOrigin.COORDINATOR, such as TxnOffsetCommit records): it
	// carries a producer id and epoch but no sequence, so a negative base
	// sequence is allowed.
	FromCoordinator bool
}

// TimestampRange is the half-open range [StartMs, EndMs) of accepted
// CreateTime timestamps, in milliseconds since the epoch; ignored unless
// Check is set.
type TimestampRange struct {
	Check   bool
	StartMs int64
	EndMs   int64
}

func (t TimestampRange) check(h Header, tsMs int64) *Error {
	if !t.Check || h.LogAppendTime() {
		return nil
	}
	if tsMs < t.StartMs || tsMs >= t.EndMs {
		return newError(CodeInvalidTimestamp, "timestamp %d outside [%d, %d)", tsMs, t.StartMs, t.EndMs)
	}
	return nil
}

// compressedTimestampError is err, a compressed batch's header timestamp
// outside ts, with the records outside it named: the batch is
// decompressed to find them (only on this refusal). Without them (the
// records do not decompress) it is err alone.
func compressedTimestampError(b []byte, ts TimestampRange, err *Error) error {
	var rr RecordReader
	if rr.Reset(b) != nil {
		return err
	}
	var late []RecordError
	for i := int32(0); ; i++ {
		rec, ok := rr.Next()
		if !ok {
			break
		}
		if e := ts.check(rr.Header(), rr.Header().BaseTimestamp+rec.TimestampDelta); e != nil {
			late = append(late, RecordError{Index: i, Msg: e.Msg})
		}
	}
	if rr.Err() != nil || late == nil {
		return err
	}
	return RecordsError(CodeInvalidTimestamp, late)
}

// Validate checks one batch from a producer, which occupies exactly b. It
// returns the parsed header, or an *Error with the Kafka code to answer. It
// does not decompress: a compressed batch's records are checked when they
// are first decompressed (RecordReader, Recompress).
func Validate(b []byte, lim Limits) (Header, error) {
	if lim.MaxBatchBytes < 0 {
		panic("record: Validate needs Limits.MaxBatchBytes >= 0")
	}
	h, err := frame(b)
	if err != nil {
		return Header{}, err
	}
	if len(b) > lim.MaxBatchBytes {
		return Header{}, newError(CodeMessageTooLarge, "batch of %d bytes exceeds max %d", len(b), lim.MaxBatchBytes)
	}
	if got := ComputeCRC(b); got != h.CRC {
		return Header{}, corrupt("CRC is %#08x, computed %#08x", h.CRC, got)
	}
	if err := checkProducerHeader(h, lim.FromCoordinator); err != nil {
		return Header{}, err
	}
	if h.Codec() != CodecNone {
		// Records stay compressed, so the header's first and max
		// timestamps stand in for theirs.
		if err := lim.Timestamps.check(h, h.BaseTimestamp); err != nil {
			return Header{}, compressedTimestampError(b, lim.Timestamps, err)
		}
		if err := lim.Timestamps.check(h, h.MaxTimestamp); err != nil {
			return Header{}, compressedTimestampError(b, lim.Timestamps, err)
		}
		return h, nil
	}
	if err := walkRecords(h, b[HeaderSize:], lim.Timestamps); err != nil {
		return Header{}, err
	}
	return h, nil
}

// frame checks what is needed to trust b as exactly one v2 batch: enough
// bytes, magic 2, and a length field that matches len(b).
func frame(b []byte) (Header, error) {
	if err := checkMagic(b); err != nil {
		return Header{}, err
	}
	if len(b) < HeaderSize {
		return Header{}, corrupt("batch of %d bytes is shorter than a header", len(b))
	}
	h, _ := ParseHeader(b)
	if int64(h.Length)+LogOverhead != int64(len(b)) {
		return Header{}, corrupt("length field %d does not match %d bytes", h.Length, len(b))
	}
	return h, nil
}

// checkMagic rejects old message formats distinctly from garbage, as Kafka
// does, so a client learns to upgrade rather than retry. The magic byte sits
// at the same place in every format.
func checkMagic(b []byte) error {
	if len(b) <= offMagic {
		return corrupt("%d bytes hold no magic byte", len(b))
	}
	switch m := int8(b[offMagic]); m {
	case 2:
		return nil
	case 0, 1:
		return newError(CodeUnsupportedForMessageFormat, "message format v%d is not supported", m)
	default:
		return corrupt("unknown magic %d", m)
	}
}

// checkProducerHeader applies Kafka's LogValidator rules for client
// batches; a coordinator's batch needs no sequence.
func checkProducerHeader(h Header, fromCoordinator bool) error {
	switch {
	case h.Codec() > CodecZstd:
		return corrupt("unknown compression codec %d", h.Codec())
	case h.BaseOffset != 0:
		return invalid("producer batch has base offset %d, want 0", h.BaseOffset)
	case h.Control():
		return invalid("clients may not write control batches")
	case h.NumRecords < 1:
		return invalid("batch has %d records", h.NumRecords)
	case h.LastOffsetDelta != h.NumRecords-1:
		return invalid("last offset delta %d with %d records", h.LastOffsetDelta, h.NumRecords)
	case h.ProducerID >= 0 && h.BaseSequence < 0 && !fromCoordinator:
		return invalid("producer %d sent base sequence %d", h.ProducerID, h.BaseSequence)
	case h.Transactional() && h.ProducerID < 0:
		return invalid("transactional batch without a producer id")
	}
	return nil
}
