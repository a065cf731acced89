// Package retention decides what a partition's retention pass deletes. It is
// a pure planner: Plan reads an immutable Snapshot of the partition and a
// Policy and returns a Decision; an executor elsewhere applies it. Nothing
// here does I/O, reads a clock or keeps state.
//
// Offsets follow DESIGN §4. All ranges are half-open, [Start, End). The
// remote tier holds [LogStart, tieredNext), where tieredNext is exclusive;
// the local log holds [localLogStart, logEnd). The two overlap where local
// segments are copied but not yet locally expired.
//
// The tiered state is explicit (Tiered): unknown (metadata not loaded yet),
// nothing tiered (every local-only topic is this case), or tiered up to an
// exclusive tieredNext. There is no -1.
//
// Contract of Plan (each line is a test):
//   - Size is counted once per offset: the bytes of remote segments that end
//     after LogStart, plus the bytes of local segments whose base offset is
//     >= tieredNext. A local segment that is already tiered is never counted
//     again, including a one-record segment whose base offset is the last
//     tiered offset (KAFKA-17212). Where local and remote boundaries differ
//     the count may be low, which only delays deletion.
//   - Total retention deletes a prefix of the counted segments, oldest first.
//     retention.bytes removes a segment only if the counted size is still
//     >= RetentionBytes after removing it, so size retention never takes the
//     log below the limit. retention.ms removes a segment only if
//     nowMs-MaxTimestampMs > RetentionMs, and stops at the first that is not
//     expired. DeleteRecordsTo removes every segment that ends at or before it.
//   - Nothing at or after HighWatermark is deleted (a segment goes only if its
//     End <= HighWatermark), and the active segment (the last local one) is
//     never deleted.
//   - NewLogStart >= LogStart, and it is LogStart, DeleteRecordsTo, the end
//     of a deleted segment, or the start of the first remote segment.
//   - A log start below the first remote segment (with anything tiered)
//     moves up to it (KindNeitherTier): the copier starts at the segment
//     holding the log start and the tier grows upward, so the offsets
//     between were deleted from the tier by an earlier leader's retention
//     that this replica heard of late (Kafka's leader takes the tier's first
//     offset when it takes office). Local copies below it go with them.
//   - When the tiered state is unknown, nothing is planned that depends on
//     it: no size, time or local retention at all and no remote deletion.
//     Only DeleteRecords is honoured (it is the user's explicit request), and
//     only local segments below the new log start are deleted. Retention
//     runs on the next pass, once the metadata is loaded (reference 000: a
//     fresh leader must not expire the tier it has not read yet).
//   - Local retention (local.retention.bytes/ms, already resolved from -2 by
//     the caller) deletes only local segments that are entirely tiered
//     (End <= tieredNext) or already outside total retention.
//
// Plan panics on a Snapshot or Policy that fails Validate: snapshots are
// built from validated partition state, so an invalid one is a programmer
// error (STYLE §8).
package retention
