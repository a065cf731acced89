// Package metadata is the cluster metadata quorum: a Raft log (hashicorp/raft,
// stored with raft-wal) whose state machine publishes immutable Images.
//
// # Contract
//
//   - Every change is a command proposed through raft.Apply and validated by the
//     FSM when it is applied. The transition is the pure function
//     applyCommand(image, command, index) → (image, error): no I/O, no clock, no
//     randomness, so every replica that applies the same log reaches the same
//     Image. Anything random (topic ids, the cluster id) is drawn by the proposer
//     and carried inside the command.
//   - A rejected command (duplicate topic, unknown topic, bad partition count, …)
//     leaves the Image unchanged and returns a typed error to the proposer through
//     the apply response; callers classify it with errors.Is (ErrTopicExists,
//     ErrUnknownTopic, ErrInvalidPartitions, …).
//   - An Image is immutable once published: readers may keep and share it without
//     locks. Applying a command builds a new Image that copies only the maps it
//     changes (copy-on-write); unchanged *Topic values are shared between images.
//   - Image.Version is the Raft index of the command that produced the image.
//     Rejected commands do not produce an image, so versions may skip indexes.
//   - The cluster id is drawn once, on the first leadership of a fresh log, and
//     stored as a command; it survives restarts. Image.ControllerID is written to
//     the log by each new leader (as KRaft writes a LeaderChange record), so it is
//     part of the replicated state too.
//   - Snapshots serialize the whole Image; a restart restores the latest snapshot
//     and replays the log after it, so Open returns the same Image as before Close.
//     The snapshot's first byte names its layout (v2 adds remote segment
//     metadata, v3 SCRAM credentials, v4 ACL bindings); older layouts stay
//     decodable.
//   - LoadOffline rebuilds the Image of a stopped broker's metadata dir the
//     same way (latest snapshot, then the log after it) from a copy of the
//     dir, without starting Raft and without writing to the original; it is
//     what `strata inspect tier` reads.
//
// # Remote segment metadata (DESIGN §4)
//
// The quorum is the one source of truth for the remote tier: a new leader reads
// it here, never from an in-memory default. UpdateRemoteSegment records one copy
// attempt (tier/remotemeta.RemoteSegment); the FSM accepts a new segment id only
// in COPY_STARTED and only for a live topic, and a known one only through
// remotemeta.ValidTransition with nothing but its state changed (the one table,
// shared with the tier). Every update names its topic by id and name and a valid
// partition, and is fenced by leader epoch: below the partition's current
// LeaderEpoch it is refused with ErrFencedLeaderEpoch.
//
// A segment that reaches DELETE_FINISHED is recorded (the command is in the log)
// and dropped from the image by that same command: nothing of it is left in the
// bucket, so the image does not grow with every segment ever uploaded. Its id is
// unknown from then on (ErrUnknownRemoteSegment); ids are fresh per attempt and
// never reused.
//
// Deleting a topic that has remote segments keeps them, with the topic's name
// and partitions (so fencing still applies), as a pending remote delete
// (Image.PendingRemoteDeletes): it survives restarts and an unreachable bucket
// until FinishRemoteTopicDelete, which is refused (ErrRemoteSegmentsRemain)
// while any of its segments is not DELETE_FINISHED. Its topic id cannot be
// reused meanwhile; its name can.
//
// # SCRAM credentials (KIP-554)
//
// The quorum stores each user's SCRAM credentials (Kafka's
// UserScramCredentialRecord): salt, StoredKey, ServerKey and iterations per
// mechanism (ScramSHA256, ScramSHA512), never a password.
// AlterScramCredentials changes one user's credentials in one command, all
// or nothing; apply refuses a bad user name, an unsupported or repeated
// mechanism, a credential outside Kafka's bounds (ErrInvalidScramCredential
// and its siblings) and the deletion of a credential the user does not have
// (ErrScramCredentialNotFound). A user whose last credential is deleted
// leaves the image. The image copies credential bytes in and out, so no
// caller shares them with a published image.
//
// # ACLs
//
// The quorum stores Kafka's ACL bindings (acl.Binding, as KRaft stores
// AccessControlEntryRecord): resource type, resource name, pattern type,
// principal, host, operation and permission, by value. CreateAcls stores a
// list of bindings in one command, all or nothing: apply refuses the whole
// list (ErrInvalidAcl) if one binding fails acl.Binding.Validate or holds a
// string that is not UTF-8 (JSON would replace the bad bytes and the log
// would name another binding), or if the list is empty or longer than
// MaxAclsPerCommand. A binding identical to one stored is no change, as
// Kafka dedupes identical ACLs. DeleteAcls removes the listed bindings that
// are stored and ignores the others: the caller resolved them from Kafka's
// filters against an image that may be stale, so deleting twice is harmless.
// It is refused for a string that is not UTF-8 too, and an empty list takes
// no log entry. Snapshots (v4) validate every binding as a create would.
//
// Image.Acls lists the bindings in a fixed order (resource type, name,
// pattern type, principal, host, operation, permission); Image.AclIndex is
// the acl.Index of exactly them, for authorization. The index is built once,
// by the command that changes the bindings (a command that adds or removes
// none changes nothing); every later image shares it until the next change.
//
// # Lifecycle
//
// Open bootstraps a one-voter configuration when the directory holds no Raft
// state, starts Raft, and returns once this node is the leader, the log has been
// replayed into the FSM (raft.Barrier) and the cluster id and controller record
// are applied. The same code path serves a multi-voter cluster later; only the
// bootstrap configuration differs. Close shuts Raft down, closes the transport
// and the stores, and leaves no goroutine behind.
//
// # Transport
//
// Options.BindAddr == "" selects an in-memory transport: it reaches no other node,
// so it is only for a single-node quorum (and for tests); Raft timeouts are short
// then. A non-empty BindAddr starts a TCP transport with Raft's default (safe)
// timeouts. The Raft configuration stored in the log records this node's address;
// a cluster member must keep a stable address across restarts.
//
// # Layout of Options.Dir
//
//	wal/        raft-wal segments: the Raft log and stable store (term, vote)
//	snapshots/  raft.FileSnapshotStore
package metadata
