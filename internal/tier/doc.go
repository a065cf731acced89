// Package tier is the remote tier of the tiered log (DESIGN §4). Its pure
// core is an immutable view of one partition's remote segment metadata and
// the planners of one tier-loop pass (metadata_view.go, copy_plan.go,
// tier_pass.go, lineage.go, keys.go): no I/O, no clock, no goroutine. The
// vocabulary of that metadata (State, RemoteSegment, the one transition
// table) lives in the leaf package remotemeta, which the metadata quorum's
// FSM shares.
//
// The executors apply the plans, with I/O at the edges and every decision
// left to the planners: Copier (copier.go) runs a CopyTask, Deleter
// (deleter.go) runs DeleteTasks, Reader (reader.go) serves remote reads and
// timestamp lookups, through ChunkCache (chunk_cache.go), the bounded
// on-disk cache of .log chunks, and the objects a follower rebuilds its
// state from (aux_state.go: a segment's leader-epoch checkpoint and
// producer snapshot). They record state through MetadataWriter
// (*metadata.Store) and start no goroutines, except the chunk cache's
// read-ahead, which its Close stops.
//
// Object layout (keys.go), one object per Suffix of each copy attempt:
//
//	<topicName>-<topicIDhex>/<partition>/<20-digit base offset>-<segmentIDhex>.<suffix>
//
// with suffixes index, timeindex, txnindex, leader-epoch-checkpoint,
// snapshot and log, uploaded in that order (.log last). The snapshot and
// the txnindex are optional: the txnindex (Kafka's 34-byte entries, the
// aborted transactions whose ABORT marker is in the segment; txn_index.go)
// is written only when it has an entry, and segments uploaded before it
// existed have none, so a missing txnindex reads as empty. Deletion and
// the reconciler treat every suffix as the segment's, present or not.
// The topic id, not the name, identifies the topic; the name is cut to
// fit a key component. The offset and time indexes (Kafka's 8- and
// 12-byte entries, an entry every IndexIntervalBytes) are built by the
// copier from the bytes it uploads, relative to the object's first offset
// and byte, so a partial copy's indexes describe its object. The Reader
// checks everything it reads from the bucket (ErrCorruptObject names the
// key) and never serves a batch whose framing, offsets or CRC are wrong.
//
// Ranges are half-open, [Start, End). The remote tier holds
// [logStart, tieredNext); tieredNext is exclusive.
//
// Lifecycle of one copy attempt (one remotemeta.SegmentID), through one
// table (remotemeta.ValidTransition):
//
//	COPY_STARTED ──► COPY_FINISHED ──► DELETE_STARTED ──► DELETE_FINISHED
//	     │                                  ▲   │
//	     └──────────► DANGLING ─────────────┘   └──► DANGLING
//
// Invariants the planners keep, each a test:
//   - COPY_STARTED is written before any object, so every object has
//     metadata; metadata is kept until DELETE_FINISHED, and every segment
//     in DANGLING, COPY_STARTED or DELETE_STARTED is planned for deletion
//     on every pass (PlanDeletes), so no object is forgotten (reference 002).
//     The Copier writes COPY_STARTED before its first Put, and on any
//     failure after it marks the segment DANGLING (best effort; a
//     COPY_STARTED left behind is deleted all the same). The Deleter
//     writes DELETE_STARTED before its first Delete and DANGLING if any
//     fails; RunDeletes stops the retention deletes at the first failure.
//   - tieredNext comes from the view, for the leader's epoch lineage: one
//     past the highest COPY_FINISHED offset, NothingTiered when none, and
//     TieredUnknown when the view is not loaded. Never -1 (reference 000).
//   - COPY_FINISHED segments of one lineage never overlap, and uploads are
//     contiguous from tieredNext, oldest first, only of rolled segments
//     entirely below the last stable offset (PlanCopies), so tieredNext
//     only grows, except when retention deletes the whole tier.
//   - Remote data is deleted only below the retention plan's NewLogStart,
//     or when it holds no data of the log (failed or abandoned attempts),
//     or when the user turned tiering off with
//     remote.log.delete.on.disable=true (KIP-950).
//
// One pass of the per-partition tier loop, run by one goroutine on the
// leader, is: PlanCopies and run them in order, stopping at the first
// failure → rebuild the view → RetentionTier + retention.Plan → apply the
// decision, then PlanDeletes and PlanStrays and run them (the retention
// deletes in order, stopping at the first failure). The planners assume no
// copy or delete of the partition is in flight while they run.
//
// A follower runs no tier loop; its local retention is PlanFollowerLocal
// (follower_retention.go): the leader's retention.Plan on the follower's
// own snapshot, of whose local deletions it keeps those entirely below
// tieredNext and held by COPY_FINISHED segments of its lineage. It never
// moves the log start (the leader's, learned by fetch) and never deletes
// remote data.
package tier
