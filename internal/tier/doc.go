// Package tier is the remote tier of the tiered log (DESIGN §4). This file
// set is its pure core: an immutable view of one partition's remote segment
// metadata, and the planners of one tier-loop pass. The vocabulary of that
// metadata (State, RemoteSegment, the one transition table) lives in the
// leaf package remotemeta, which the metadata quorum's FSM shares. Nothing
// here does I/O, reads a clock or starts a goroutine; executors elsewhere
// apply the plans.
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
package tier
