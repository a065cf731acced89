// Package cleaner is the pure core of log compaction (Kafka's log cleaner,
// DESIGN §5): deciding whether and what to clean (Plan, GroupSegments),
// indexing the dirty range (OffsetMap) and rewriting one batch at a time
// (CleanBatch). It does no I/O, reads no clock and starts no goroutines; a
// driver elsewhere reads segments, calls these, and writes and swaps the
// cleaned segments.
//
// # A pass
//
// Plan picks [FirstDirty, FirstUncleanable). The driver resets an OffsetMap
// and calls AddBatch on whole batches from FirstDirty until it returns false
// or the range ends; mapEnd is the next offset of the last batch added. It
// then runs CleanBatch over every batch in [LogStart, mapEnd) with that map,
// leaves batches at or after mapEnd untouched, and checkpoints mapEnd as the
// next pass's first dirty offset. A full map therefore ends a pass early, at
// a batch boundary, possibly mid-segment.
//
// # Rules of CleanBatch (Kafka's MemoryRecords.filterTo and LogCleaner)
//
//   - A record with a null key is dropped. A record whose key maps to a
//     later offset is dropped (superseded). Keys absent from the map are
//     kept: nothing later is known for them in this pass.
//   - A kept tombstone (null value) is dropped once its batch has a delete
//     horizon (attribute 0x40, KIP-534) and NowMs >= the horizon.
//   - A written batch that holds a tombstone and has no horizon gets one:
//     NowMs + DeleteRetentionMs, stored as the base timestamp, with every
//     record's timestamp delta re-encoded so that base + delta, the record's
//     timestamp, is unchanged. A horizon, once set, is never moved.
//   - Transactions (Rules.Aborted, Kafka's transaction index): a
//     transactional batch inside one of its producer's aborted ranges
//     [First, Last] is aborted: AddBatch leaves it out of the map and
//     CleanBatch drops it. Membership in a range, not a replay of the markers
//     a pass reads, decides it, and a pass is seeded only with the aborted
//     transactions that end at or after its start (DESIGN §5), so a pass
//     that starts after an ABORT marker cannot take that producer's later,
//     committed batches for aborted ones (KAFKA-21410, reference 003).
//     Committed transactional data is cleaned like any other.
//   - A transaction marker (a control batch) stays while its transaction
//     has a batch in the cleaned log (Pass tracks it in log order); once
//     none is left it gets a delete horizon, and goes at the first pass after
//     the horizon. The partition passes its aborted-transaction index and
//     never cleans past the last stable offset.
//   - A batch that loses nothing and gains no horizon is copied byte for byte.
//     A batch that loses some records is rebuilt with the same base offset
//     and last offset delta (so the producer's last sequence survives), the
//     same producer id, epoch, base sequence, leader epoch, codec and
//     timestamp type, a recomputed max timestamp under CreateTime (kept
//     under LogAppendTime), and a fresh CRC.
//   - A batch that loses every record goes, unless it is idempotent and
//     LastBatchOfProducer says it holds the producer's last sequence: then
//     its last record stays (rebuilt with the batch's span), so that a
//     restart rebuilds the producer's sequence from the log. Kafka writes an
//     empty batch there; kafka-go panics reading one (segmentio/kafka-go#874,
//     #1393), so no empty batch is ever written.
//   - A producer's last batch may so hold a superseded record. Its
//     tombstones never expire, and its keys are pinned (Pass) for the
//     rest of the pass: a later tombstone of a pinned key stays past its
//     horizon, or removing it would bring the superseded record back. Such a
//     tombstone does not count for BatchResult.NextHorizonMs; it goes in a
//     pass after the producer writes again or its state expires.
//
// # Invariants
//
//   - Output offsets are a subset of input offsets, in the same order; every
//     batch written spans exactly the offsets its input spanned, so segment
//     boundaries and offset indexes stay valid.
//   - Every kept record is written with the same offset, key, value, headers,
//     attributes and timestamp it had.
//   - Input is validated (framing, magic, CRC, header fields, every record,
//     offset deltas ascending within the span); a bad batch is an error
//     wrapping ErrCorruptBatch, never a panic, and is never rewritten under a
//     fresh CRC.
//   - OffsetMap holds a 128-bit hash per key in a table that grows to the
//     budget as keys arrive; Put and Get allocate only when it grows, and
//     AddBatch is all or nothing.
//   - Offsets are base.Offset; ranges are half-open, [Start, End).
package cleaner
