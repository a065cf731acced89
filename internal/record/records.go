package record

// Record is one record of a batch. Its byte slices alias the batch (or the
// reader's decompression buffer) and stay valid until the buffer is reused.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil when the key is null
	Value          []byte // nil when the value is null (a tombstone)
	NumHeaders     int
	// rawHeaders holds NumHeaders encoded headers, already checked; kept
	// encoded so that walking records allocates nothing.
	rawHeaders []byte
}

// RecordHeader is one record header; Value is nil when null.
type RecordHeader struct {
	Key   []byte
	Value []byte
}

// AppendHeaders appends the record's headers to dst. Pass a reused slice to
// avoid allocating.
func (r *Record) AppendHeaders(dst []RecordHeader) []RecordHeader {
	rd := reader{b: r.rawHeaders, ok: true}
	for range r.NumHeaders {
		k := rd.nullableBytes()
		v := rd.nullableBytes()
		dst = append(dst, RecordHeader{Key: k, Value: v})
	}
	return dst
}

// parseRecord decodes the record at the start of p and returns the bytes
// after it. Kafka calls a record that does not parse inside a CRC-valid batch
// an InvalidRecordException, hence INVALID_RECORD.
func parseRecord(p []byte) (Record, []byte, error) {
	outer := reader{b: p, ok: true}
	size := outer.varint()
	body := outer.bytes(size)
	if !outer.ok {
		return Record{}, nil, invalid("record length %d overruns the %d bytes left", size, len(p))
	}
	rd := reader{b: body, ok: true}
	rec := Record{
		Attributes:     int8(rd.byte()),
		TimestampDelta: rd.varlong(),
		OffsetDelta:    rd.varint(),
		Key:            rd.nullableBytes(),
		Value:          rd.nullableBytes(),
	}
	n := rd.varint()
	if !rd.ok || n < 0 {
		return Record{}, nil, invalid("record fields or header count %d malformed", n)
	}
	rec.NumHeaders = int(n)
	rec.rawHeaders = rd.b
	if err := skipHeaders(&rd, n); err != nil {
		return Record{}, nil, err
	}
	if len(rd.b) != 0 {
		return Record{}, nil, invalid("record has %d bytes past its last header", len(rd.b))
	}
	return rec, outer.b, nil
}

// skipHeaders checks n headers; unlike values, a header key may not be null.
func skipHeaders(rd *reader, n int32) error {
	for i := range n {
		k := rd.varint()
		rd.bytes(k)
		rd.nullableBytes()
		if !rd.ok {
			return invalid("record header %d of %d malformed", i, n)
		}
	}
	return nil
}

// walkRecords checks producer input: payload holds exactly h.NumRecords
// records whose offset deltas are their indexes, with timestamps in ts (an
// INVALID_TIMESTAMP naming every record outside it, as Kafka lists them).
func walkRecords(h Header, payload []byte, ts TimestampRange) error {
	var i int32
	var late []RecordError
	for len(payload) > 0 {
		rec, rest, err := parseRecord(payload)
		if err != nil {
			return err
		}
		if rec.OffsetDelta != i {
			return invalid("record %d has offset delta %d", i, rec.OffsetDelta)
		}
		if err := ts.check(h, h.BaseTimestamp+rec.TimestampDelta); err != nil {
			late = append(late, RecordError{Index: i, Msg: err.Msg})
		}
		payload = rest
		i++
	}
	if i != h.NumRecords {
		return invalid("batch claims %d records, holds %d", h.NumRecords, i)
	}
	if late != nil {
		return RecordsError(CodeInvalidTimestamp, late)
	}
	return nil
}

// RecordReader iterates over the records of one batch, decompressing when
// needed into a buffer it keeps, so a reused reader allocates nothing per
// batch once warm. Unlike Validate it accepts offset gaps, which compaction
// leaves. The zero value is ready to use.
type RecordReader struct {
	buf  []byte // decompressed payload; records alias it
	h    Header
	rest []byte
	n    int32
	err  error
}

// Reset points r at batch, one whole batch, and decompresses its records.
// Records returned before are invalidated.
func (r *RecordReader) Reset(batch []byte) error {
	*r = RecordReader{buf: r.buf[:0]}
	h, err := frame(batch)
	if err != nil {
		r.err = err
		return err
	}
	r.h = h
	payload := batch[HeaderSize:]
	if h.Codec() != CodecNone {
		r.buf, err = Decompress(h.Codec(), payload, r.buf)
		if err != nil {
			r.err = err
			return err
		}
		payload = r.buf
	}
	r.rest = payload
	return nil
}

// Header is the header of the batch given to Reset.
func (r *RecordReader) Header() Header { return r.h }

// Next returns the next record; false at the end or on error (see Err).
func (r *RecordReader) Next() (Record, bool) {
	if r.err != nil {
		return Record{}, false
	}
	if len(r.rest) == 0 {
		if r.n != r.h.NumRecords {
			r.err = invalid("batch claims %d records, holds %d", r.h.NumRecords, r.n)
		}
		return Record{}, false
	}
	rec, rest, err := parseRecord(r.rest)
	if err != nil {
		r.err = err
		return Record{}, false
	}
	r.rest = rest
	r.n++
	return rec, true
}

// Err is the error that ended iteration, nil after a clean end.
func (r *RecordReader) Err() error { return r.err }
