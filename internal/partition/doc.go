// Package partition is the single owner of one partition's state on this
// broker: its local log, its offsets (log start ≤ last stable offset ≤
// high watermark ≤ log end), its leader-epoch cache, its producer state
// (idempotence and transactions) and its aborted-transaction index.
//
// Invariants:
//   - Appends are serialized by the partition: offsets are assigned under its
//     lock, so batches land in the log in the order they were accepted.
//   - logStart only moves forward, only through ApplyRetention or
//     DeleteRecords, and is persisted before segments below it are deleted.
//   - A produce with acks=all on a partition whose only in-sync replica is
//     this broker is acknowledged only after its bytes are fdatasynced
//     (group-committed by the log). So is every transaction marker
//     (AppendMarker) and every coordinator batch (AppendFromCoordinator).
//   - Readers never see offsets at or past the high watermark; read_committed
//     readers (ReadCommitted) never see batches at or past the last stable
//     offset, the first offset of the oldest open transaction.
//   - Only AppendMarker writes control batches; a client's is refused.
//   - A producer-state snapshot file NNNNNNNNNNNNNNNNNNNN.snapshot holds the
//     state after every batch below offset N. One is written when an append
//     rolls a segment (at the new segment's base) and one at Close (at the
//     log end); the newest two are kept. Open restores the newest one within
//     [local log start, log end] that decodes, and replays the log after it;
//     snapshots past the log end (their data was lost in a crash) are
//     removed before anything is appended.
//   - The aborted-transaction index (aborted_index.go) holds every aborted
//     transaction whose marker is at or after the log start. Each entry is
//     durable in its file before any snapshot at or after its marker is
//     written, so Open takes the file below the snapshot it replays from
//     and re-derives the rest from the log.
//   - The cleaner never cleans at or past the last stable offset, and drops
//     the records of aborted transactions.
package partition
