// Package partition is the single owner of one partition's state on this
// broker: its local log, its offsets (log start ≤ high watermark ≤ log end),
// its leader-epoch cache and its idempotent producer state.
//
// Invariants:
//   - Appends are serialized by the partition: offsets are assigned under its
//     lock, so batches land in the log in the order they were accepted.
//   - logStart only moves forward, only through ApplyRetention or
//     DeleteRecords, and is persisted before segments below it are deleted.
//   - A produce with acks=all on a partition whose only in-sync replica is
//     this broker is acknowledged only after its bytes are fdatasynced
//     (group-committed by the log).
//   - Readers never see offsets at or past the high watermark.
//   - A producer-state snapshot file NNNNNNNNNNNNNNNNNNNN.snapshot holds the
//     state after every batch below offset N. One is written when an append
//     rolls a segment (at the new segment's base) and one at Close (at the
//     log end); the newest two are kept. Open restores the newest one within
//     [local log start, log end] that decodes, and replays the log after it;
//     snapshots past the log end (their data was lost in a crash) are
//     removed before anything is appended.
package partition
