// Package remotemeta is the vocabulary of remote segment metadata (DESIGN
// §4): the lifecycle State of one copy attempt, the one table of its valid
// transitions, and RemoteSegment, the metadata record that the metadata
// quorum stores and the tier plans on.
//
// It is a leaf (it imports only base) so that both the writer side
// (internal/tier, which plans and executes copies and deletes) and the
// gateway (internal/metadata, whose FSM validates every remote segment
// update at Raft apply) use the same types and the same transition table;
// the table exists exactly once, here (ValidTransition), and so does the
// rule that no two COPY_FINISHED segments of a partition overlap with the
// same epoch history (ConflictsWith).
//
// Lifecycle of one copy attempt (one SegmentID):
//
//	COPY_STARTED ──► COPY_FINISHED ──► DELETE_STARTED ──► DELETE_FINISHED
//	     │                                  ▲   │
//	     └──────────► DANGLING ─────────────┘   └──► DANGLING
//
// Invariants of a RemoteSegment (checked by Validate): a non-zero id, a
// valid state, a non-empty range [Start, End) with Start ≥ 0, a size ≥ 0,
// and a leader-epoch lineage that starts at Range.Start and ascends in
// both epoch and start offset inside the range. Over a segment's life only
// State changes (SameAttempt), and only through ValidTransition.
//
// Nothing here does I/O, reads a clock or starts a goroutine.
package remotemeta
