// Package partition is the single owner of one partition's state on this
// broker: its local log, its offsets (log start ≤ last stable offset ≤
// high watermark ≤ log end), its leader-epoch cache, its producer state
// (idempotence and transactions) and its aborted-transaction index.
//
// Invariants:
//   - Appends are serialized by the partition: offsets are assigned under its
//     lock, so batches land in the log in the order they were accepted.
//   - logStart only moves forward, only through ApplyRetention,
//     DeleteRecords or (a follower) SetLogStartFromLeader, and is persisted
//     before segments below it are deleted. The one exception is a
//     follower's start over (TruncateFullyAndStartAt, StartOverFromTier,
//     or TruncateTo below its log start), which may set it lower, to where
//     its leader's log is.
//   - A produce with acks=all on a partition whose only in-sync replica is
//     this broker is acknowledged only after its bytes are fdatasynced
//     (group-committed by the log). So is every transaction marker
//     (AppendMarker) and every coordinator batch (AppendFromCoordinator);
//     with followers in the ISR, those two also wait until the high
//     watermark passes them (a coordinator answers only committed writes).
//     With more in-sync replicas the wait function still fdatasyncs here;
//     the caller also waits for the high watermark to pass the batch.
//   - Readers never see offsets at or past the high watermark; read_committed
//     readers (ReadCommitted) never see batches at or past the last stable
//     offset, the first offset of the oldest open transaction. Only a
//     leader serving a follower's fetch reads further (ReadLogEnd), up to
//     the log end.
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
//
// # Replication (role.go, follower.go, truncate.go)
//
// A partition is a leader or a follower (one role field, transitions in
// roleTransitions); Open makes it a leader, as before replication, in the
// epoch it is given, and the broker then calls BecomeFollower if metadata
// says so. A role change needs a newer leader epoch, except leader to
// follower in the same epoch (that reopen); a stale one is refused with
// ErrStaleLeaderEpoch, a repeated one ignored.
//
// A leader:
//   - takes client writes; a follower refuses them (Append, AppendMarker,
//     AppendFromCoordinator, DeleteRecords) with ErrNotLeader;
//   - with its ISR of one (SetInSyncReplicas(1), the state after Open)
//     moves its high watermark to the log end at every append, as before;
//     with more, only AdvanceHighWatermark moves it, forward and never past
//     the log end; a follower made leader has no ISR count until told, so
//     it refuses acks=all while min.insync.replicas >= 1;
//   - serves its followers' fetches with ReadLogEnd, and OffsetForLeaderEpoch
//     with EndOffsetForEpoch; Lineage is its epoch lineage.
//
// A follower:
//   - appends its leader's batches as they are (AppendAsFollower): offsets,
//     leader epochs, compression and bytes unchanged, so its log is its
//     leader's byte for byte (but for what it fetched before its leader
//     cleaned it, which each replica's cleaner cleans on its own, as in
//     Kafka). Each batch is validated as a stored one, and their offsets
//     must increase from the log end: a batch that overlaps the log or the
//     batch before it is refused with an AppendOffsetError.
//     They may skip offsets: a leader whose log was compacted serves a
//     fetch in a gap with the next batch, and its cleaned segments have
//     gaps between batches; the follower's log takes them as they are
//     (log.AppendReplicated), in its active segment too, as Kafka's
//     followers of compacted topics (__consumer_offsets,
//     __transaction_state) do. Its leader-epoch cache, producer state,
//     aborted-transaction index and last stable offset follow the batches
//     exactly as Open's replay derives them from the log, so a follower
//     made leader catches the same duplicates and serves the same
//     read_committed fetches. Its segments roll and its producer snapshots
//     are written as a leader's appends roll and write them (a segment
//     rolled for a batch after a gap starts at the log end before it, the
//     gap inside the new segment, and the snapshot is written there).
//   - does not fdatasync as it appends: its fetcher calls SyncFollower
//     before it fetches again, so the log end it reports to its leader
//     (which counts it in the high watermark that acknowledges acks=all)
//     is durable on every in-sync replica.
//   - takes its high watermark from its leader, bounded by its own log end
//     (SetHighWatermarkFromLeader; it may move backward, to a new leader's),
//     and its log start, forward only (SetLogStartFromLeader).
//   - of a tiered topic, deletes its local copies of tiered segments
//     (DeleteTieredLocalBefore, as the broker's follower local retention
//     decides): only its local log start moves, so logStart <= localLogStart.
//   - truncates where its log diverges from its new leader's (TruncateTo):
//     the cut is durable, epochs starting at or past the new end go,
//     producer state is rebuilt from the newest snapshot at or below it
//     plus a replay, snapshots and aborted transactions past it go, and
//     the high watermark is clamped. TruncateFullyAndStartAt empties it.
//     A producer snapshot or a cleaner checkpoint decided before a
//     truncation is never written after it.
//   - keeps no state of its own on disk beyond a leader's files: a
//     reopened follower is a leader until BecomeFollower, and its high
//     watermark is its log end until its leader's first answer lowers it.
package partition
