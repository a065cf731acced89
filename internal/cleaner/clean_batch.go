package cleaner

import (
	"fmt"
	"math"
	"sync"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// Rules are what decides which records of a batch survive a pass.
type Rules struct {
	// Map holds the latest offset of every key in the pass's dirty range
	// [firstDirty, mapEnd). A record whose key maps to a later offset is
	// superseded. Nil is an empty map: only tombstone expiry applies.
	Map *OffsetMap
	// NowMs is the pass's clock reading; a tombstone goes once NowMs
	// reaches its batch's delete horizon.
	NowMs int64
	// DeleteRetentionMs is delete.retention.ms: how long tombstones stay
	// after the pass that first writes them with a horizon. It must be >= 0.
	DeleteRetentionMs int64
	// LastBatchOfProducer reports whether the batch ending at lastOffset
	// holds the producer's last sequence (the partition's producer state
	// says so). Such a batch is kept whole when all its records would go,
	// so that the producer's sequence survives in the log. It must not be
	// nil.
	LastBatchOfProducer func(producerID int64, lastOffset base.Offset) bool
	// Pass is the state one pass carries from batch to batch, in log
	// order (pass.go). It must not be nil; use one per pass.
	Pass *Pass
	// Aborted are the aborted transactions the pass knows of (Kafka's
	// transaction index); nil when there are none.
	Aborted *AbortedTxns
}

// Outcome is what CleanBatch did with a batch.
type Outcome int

const (
	// BatchCopied: every record kept and no horizon to add; the bytes
	// were copied unchanged.
	BatchCopied Outcome = iota + 1
	// BatchRebuilt: some records went, or the batch got its delete
	// horizon; a new batch with the same offset span was written.
	BatchRebuilt
	// BatchRemoved: every record went and nothing was written.
	BatchRemoved
)

func (o Outcome) String() string {
	switch o {
	case BatchCopied:
		return "copied"
	case BatchRebuilt:
		return "rebuilt"
	case BatchRemoved:
		return "removed"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// BatchResult says what happened to one batch, for the caller's stats and
// for deciding whether a segment changed at all. Results of many batches
// sum with Add.
type BatchResult struct {
	// Outcome is set for one batch; a sum has none (zero).
	Outcome Outcome
	// RecordsKept and RecordsDropped count the input's records;
	// TombstonesExpired is the part of RecordsDropped that were
	// tombstones past their horizon (the rest were superseded or keyless).
	RecordsKept       int
	RecordsDropped    int
	TombstonesExpired int
	// TombstonesPinned counts tombstones past their horizon kept because
	// their key is pinned (Pass).
	TombstonesPinned int
	// RecordsAborted is the part of RecordsDropped that aborted
	// transactions wrote; MarkersRemoved counts transaction markers gone.
	RecordsAborted int
	MarkersRemoved int
	// HorizonsSet counts batches this cleaning gave a delete horizon (0 or
	// 1 for one batch).
	HorizonsSet int
	// BatchesRemoved counts batches that went entirely.
	BatchesRemoved int
	// BytesRead is the input's size; BytesWritten what was appended.
	BytesRead    int64
	BytesWritten int64
	// NextHorizonMs, when HasNextHorizon, is the earliest delete horizon
	// of the kept batches that still hold a tombstone: the time after
	// which another pass over the clean part of the log removes one.
	NextHorizonMs  int64
	HasNextHorizon bool
}

// Add sums the counts of o into r; r's Outcome becomes zero, as a sum
// has none.
func (r *BatchResult) Add(o BatchResult) {
	r.Outcome = 0
	r.RecordsKept += o.RecordsKept
	r.RecordsDropped += o.RecordsDropped
	r.TombstonesExpired += o.TombstonesExpired
	r.TombstonesPinned += o.TombstonesPinned
	r.RecordsAborted += o.RecordsAborted
	r.MarkersRemoved += o.MarkersRemoved
	r.HorizonsSet += o.HorizonsSet
	r.BatchesRemoved += o.BatchesRemoved
	r.BytesRead += o.BytesRead
	r.BytesWritten += o.BytesWritten
	if o.HasNextHorizon && (!r.HasNextHorizon || o.NextHorizonMs < r.NextHorizonMs) {
		r.NextHorizonMs, r.HasNextHorizon = o.NextHorizonMs, true
	}
}

// Cleaner holds the scratch buffers of CleanBatch, so that cleaning a run
// of batches allocates nothing per record and, once warm, nothing per
// batch but what compression needs. The zero value is ready; it is not
// safe for concurrent use.
type Cleaner struct {
	buf  []byte // decompressed input payload
	raw  []byte // kept records, encoded, before compression
	keep []bool // per input record: survives the pass
}

// scratchKeepBytes caps what the pool keeps, so one huge batch does not pin
// its buffers for ever.
const scratchKeepBytes = 8 << 20

var cleaners = sync.Pool{New: func() any { return new(Cleaner) }}

// CleanBatch is Cleaner.CleanBatch with a pooled Cleaner.
func CleanBatch(dst, batch []byte, r Rules) ([]byte, BatchResult, error) {
	c := cleaners.Get().(*Cleaner)
	out, res, err := c.CleanBatch(dst, batch, r)
	if cap(c.buf) <= scratchKeepBytes && cap(c.raw) <= scratchKeepBytes {
		cleaners.Put(c)
	}
	return out, res, err
}

// CleanBatch appends to dst the cleaned form of batch, one whole v2 batch
// as a log segment stores it (offsets assigned), and returns the extended
// slice. See the package documentation for the rules. On error dst is
// returned unextended; the error wraps ErrCorruptBatch when batch does not
// parse. dst must not overlap batch.
func (c *Cleaner) CleanBatch(dst, batch []byte, r Rules) ([]byte, BatchResult, error) {
	if r.LastBatchOfProducer == nil || r.Pass == nil || r.DeleteRetentionMs < 0 {
		panic("cleaner: Rules need LastBatchOfProducer, Pass and DeleteRetentionMs >= 0")
	}
	h, err := parseStored(batch)
	if err != nil {
		return dst, BatchResult{}, err
	}
	raw, err := payload(batch, h, &c.buf)
	if err != nil {
		return dst, BatchResult{}, err
	}
	if err := checkRecords(h, raw); err != nil {
		return dst, BatchResult{}, err
	}
	res := BatchResult{BytesRead: int64(len(batch))}
	if h.Control() {
		return c.cleanMarker(dst, batch, h, raw, r, res)
	}
	// A producer's last batch may hold superseded records (kept whole by
	// an earlier pass): its tombstones do not expire and its keys are
	// pinned for the rest of the pass, or removing a tombstone would bring
	// a superseded value back.
	isLast := h.Idempotent() && r.LastBatchOfProducer(h.ProducerID, h.LastOffset())
	if isLast {
		defer c.pin(raw, r.Pass)
	}
	var keptTombstone bool
	if h.Transactional() && r.Aborted.Aborted(h.ProducerID, h.BaseOffset) {
		// Aborted data: a read_committed consumer never sees it, and it
		// supersedes nothing (the offset map left it out).
		c.dropAll(raw, &res)
	} else {
		keptTombstone = c.decide(h, raw, r, isLast, &res)
	}
	if res.RecordsKept == 0 && h.NumRecords > 0 && isLast {
		// The batch holds its producer's last sequence, which a restart
		// rebuilds from the log. Kafka writes an empty batch with the same
		// span here, but kafka-go panics reading one ("markRead: negative
		// count", segmentio/kafka-go#874, #1393), so Strata keeps the
		// batch's last record: a superseded record before a newer one is
		// allowed by compaction's guarantee; an empty batch breaks a
		// client. The batch's keys are pinned (above), so no later
		// tombstone of that record's key goes while it is there.
		keptTombstone = c.keepLastRecord(raw, &res)
	}
	horizon, hasHorizon := h.DeleteHorizon()
	setHorizon := keptTombstone && !hasHorizon
	if setHorizon {
		horizon = addSaturating(r.NowMs, r.DeleteRetentionMs)
	}
	res.NextHorizonMs, res.HasNextHorizon = horizon, keptTombstone
	if res.RecordsKept == 0 && !isLast {
		res.Outcome, res.BatchesRemoved = BatchRemoved, 1
		return dst, res, nil
	}
	if h.Transactional() {
		r.Pass.keptTxnData(h.ProducerID) // its marker stays
	}
	if res.RecordsDropped == 0 && !setHorizon {
		res.Outcome = BatchCopied
		return c.copyBatch(dst, batch, res)
	}
	res.Outcome = BatchRebuilt
	if setHorizon {
		res.HorizonsSet = 1
	}
	return c.rebuild(dst, h, raw, r, setHorizon, res)
}

func (c *Cleaner) copyBatch(dst, batch []byte, res BatchResult) ([]byte, BatchResult, error) {
	res.BytesWritten = int64(len(batch))
	return append(dst, batch...), res, nil
}

// decide fills c.keep with each record's fate, counts them into res, and
// reports whether a kept record is a tombstone. Records are checked.
// With pinAll no tombstone expires. keptTombstone counts only tombstones
// whose horizon is still ahead: one kept past it (pinned) waits for a pass
// that dirty data brings, not for its horizon.
func (c *Cleaner) decide(h record.Header, raw []byte, r Rules, pinAll bool, res *BatchResult) (keptTombstone bool) {
	horizon, hasHorizon := h.DeleteHorizon()
	expired := hasHorizon && r.NowMs >= horizon
	c.keep = c.keep[:0]
	for len(raw) > 0 {
		rec, rest, _ := record.ParseRecord(raw)
		raw = rest
		keep := rec.Key != nil && !superseded(r.Map, rec.Key, h.BaseOffset+base.Offset(rec.OffsetDelta))
		tombstone := rec.Value == nil
		if keep && tombstone && expired {
			if pinAll || r.Pass.pinned(rec.Key) {
				res.TombstonesPinned++
			} else {
				keep = false
				res.TombstonesExpired++
			}
		}
		c.keep = append(c.keep, keep)
		if keep {
			res.RecordsKept++
			keptTombstone = keptTombstone || tombstone && !expired
		} else {
			res.RecordsDropped++
		}
	}
	return keptTombstone
}

// dropAll marks every record of the batch dropped.
func (c *Cleaner) dropAll(raw []byte, res *BatchResult) {
	c.keep = c.keep[:0]
	for len(raw) > 0 {
		_, raw, _ = record.ParseRecord(raw)
		c.keep = append(c.keep, false)
		res.RecordsDropped++
		res.RecordsAborted++
	}
}

// cleanMarker decides the fate of a transaction marker (a control batch),
// as Kafka's cleaner does: it stays while its transaction has data in the
// cleaned log; once none is left it gets a delete horizon (KIP-534), and
// goes at the first pass after that. A control batch that is not one
// marker record stays as it is.
func (c *Cleaner) cleanMarker(dst, batch []byte, h record.Header, raw []byte, r Rules, res BatchResult) ([]byte, BatchResult, error) {
	keptData := r.Pass.endTxn(h.ProducerID)
	res.RecordsKept = int(h.NumRecords)
	rec, _, _ := record.ParseRecord(raw) // checked
	if _, ok := markerType(rec.Key); keptData || !ok || h.NumRecords != 1 {
		res.Outcome = BatchCopied
		return c.copyBatch(dst, batch, res)
	}
	horizon, hasHorizon := h.DeleteHorizon()
	switch {
	case hasHorizon && r.NowMs >= horizon:
		res.Outcome, res.BatchesRemoved, res.MarkersRemoved = BatchRemoved, 1, 1
		res.RecordsKept, res.RecordsDropped = 0, 1
		return dst, res, nil
	case hasHorizon:
		res.NextHorizonMs, res.HasNextHorizon = horizon, true
		res.Outcome = BatchCopied
		return c.copyBatch(dst, batch, res)
	}
	res.NextHorizonMs, res.HasNextHorizon = addSaturating(r.NowMs, r.DeleteRetentionMs), true
	res.Outcome, res.HorizonsSet = BatchRebuilt, 1
	c.keep = append(c.keep[:0], true)
	return c.rebuild(dst, h, raw, r, true, res)
}

// keepLastRecord marks the batch's last record kept (decide dropped them
// all, none as an expired tombstone since the batch is pinned) and reports
// whether it is a tombstone.
func (c *Cleaner) keepLastRecord(raw []byte, res *BatchResult) (tombstone bool) {
	var last record.Record
	for len(raw) > 0 {
		last, raw, _ = record.ParseRecord(raw)
	}
	c.keep[len(c.keep)-1] = true
	res.RecordsKept, res.RecordsDropped = 1, res.RecordsDropped-1
	if res.RecordsAborted > 0 {
		res.RecordsAborted--
	}
	return last.Value == nil
}

// pin pins the keys of a producer's last batch for the rest of the pass.
func (c *Cleaner) pin(raw []byte, pass *Pass) {
	for len(raw) > 0 {
		rec, rest, _ := record.ParseRecord(raw)
		raw = rest
		if rec.Key != nil {
			pass.pin(rec.Key)
		}
	}
}

// superseded reports whether a later record of the pass has the same key.
// A key missing from the map lies past the map's end (or the map stopped
// early), so nothing newer is known and the record stays.
func superseded(m *OffsetMap, key []byte, o base.Offset) bool {
	if m == nil {
		return false
	}
	latest, ok := m.Get(key)
	return ok && latest > o
}

// rebuild writes a batch of the kept records with the original offset span
// (Kafka keeps the last offset delta so that the producer's last sequence,
// baseSequence + lastOffsetDelta, stays meaningful), producer fields, leader
// epoch, codec and timestamp type.
func (c *Cleaner) rebuild(dst []byte, h record.Header, raw []byte, r Rules, setHorizon bool, res BatchResult) ([]byte, BatchResult, error) {
	out := h
	if setHorizon {
		out = h.WithDeleteHorizon(res.NextHorizonMs)
	}
	c.raw = c.raw[:0]
	maxTs := int64(math.MinInt64)
	for i := 0; len(raw) > 0; i++ {
		rec, rest, _ := record.ParseRecord(raw)
		raw = rest
		if !c.keep[i] {
			continue
		}
		// Absolute timestamps are base + delta in wrapping int64
		// arithmetic, as clients compute them; rebasing the same way
		// keeps every record's timestamp bit for bit.
		ts := h.BaseTimestamp + rec.TimestampDelta
		rec.TimestampDelta = ts - out.BaseTimestamp
		maxTs = max(maxTs, ts)
		c.raw = record.AppendRecord(c.raw, &rec)
	}
	if !h.LogAppendTime() {
		// Under LogAppendTime every record reads as MaxTimestamp, the
		// append time, which must not change.
		out.MaxTimestamp = maxTs
	}
	out.NumRecords = int32(res.RecordsKept)
	out.Length, out.CRC = 0, 0
	b := record.AppendHeader(dst, out)
	b, err := record.Compress(h.Codec(), c.raw, b)
	if err != nil {
		return dst, BatchResult{}, fmt.Errorf("cleaner: compressing batch at %d: %w", h.BaseOffset, err)
	}
	return c.finish(dst, b, res)
}

// finish frames the batch appended to dst as out[len(dst):].
func (c *Cleaner) finish(dst, out []byte, res BatchResult) ([]byte, BatchResult, error) {
	if err := record.FinishBatch(out[len(dst):]); err != nil {
		return dst, BatchResult{}, fmt.Errorf("cleaner: %w", err)
	}
	res.BytesWritten = int64(len(out) - len(dst))
	return out, res, nil
}

// addSaturating adds a non-negative b to a without wrapping: a huge
// delete.retention.ms must mean "never", not a horizon in the past.
func addSaturating(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
