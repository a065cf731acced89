// Package group is the consumer-group coordinator of one __consumer_offsets
// partition, as a pure state machine (Kafka's GroupMetadataManager for
// classic and consumer-protocol groups plus its offset manager).
//
// Contract. A Coordinator implements runtime.Shard: Handle(op, now) applies
// one JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// OffsetFetch, OffsetDelete, DescribeGroups, ListGroups, DeleteGroups,
// TxnOffsetCommit, ConsumerGroupHeartbeat or ConsumerGroupDescribe request
// (versions up to MaxVersions), or one TxnCompleted
// event of the broker's, and Tick(now) fires due timers. Both return a
// runtime.Result: records to append to the partition, in Kafka's schemas
// (OffsetCommitKey/Value, GroupMetadataKey/Value), and replies keyed by op
// tokens. The caller must send the replies only after the records are
// durable. A JoinGroup or SyncGroup may get its reply from a later Handle or
// Tick (when the rebalance completes); every op gets exactly one reply.
// Replay(key, value) rebuilds the state from the partition; the first Tick
// after loading arms the loaded members' session timers. Time only enters
// as the now argument; randomness (member ids) only through Options.Random.
// No goroutines, no I/O, not safe for concurrent use.
//
// Transactions (protocol v1; txn_offsets.go). A TxnOffsetCommit's records
// form one transactional batch of its producer (Result.Txn, and nothing
// else in that Result); its offsets are pending until the broker submits
// TxnCompleted, whose Result carries the marker (Result.Markers) and
// nothing else. The Coordinator is a runtime.TxnReplayer: ReplayTxn and
// ReplayMarker read such batches and markers back. A TxnOffsetCommit or
// TxnCompleted of an epoch below the producer's known one writes nothing
// (INVALID_PRODUCER_EPOCH, ErrStaleMarker).
//
// KIP-848 consumer groups (consumer_coordinator.go routes to them): the
// records of consumer_records*.go; the group model of consumer_group.go,
// whose state changes only by replaying its records, as in Kafka
// (consumer_replay.go); and ConsumerGroupHeartbeat (consumer_validate.go,
// consumer_heartbeat.go): join, heartbeat, leave and static leave, the
// target assignment (consumer_target.go, coordinator/assignor) and each
// member's reconciliation (coordinator/reconcile), every change written
// as a record that is applied as it is written (consumerWrite), and the
// session and revocation timers; regular expressions are resolved on the
// coordinator (consumer_regex.go), against the topics of Options.Topics
// that the requesting client may see (Op.TopicVisible). A group is of one
// protocol at a time (group.consumer != nil for the consumer protocol);
// its offsets are shared, and an empty group converts on a join of the
// other protocol. A consumer group may have classic members, which speak
// JoinGroup, SyncGroup, Heartbeat and LeaveGroup to it
// (consumer_classic.go); a group with members moves between the protocols
// as Options.MigrationPolicy allows (consumer_migrate.go): a
// consumer-protocol join upgrades a classic group, whose members become
// classic members of the consumer group, and the leave of the last
// consumer-protocol member among classic ones downgrades it.
//
// KIP-932 share groups (share_*.go) live beside the others, in c.shares:
// a group id names a share group or a classic/consumer group, never both
// (the requests of the other types on a share group's id are refused as
// Kafka refuses them, refuseShareGroupID). ShareGroupHeartbeat joins (the
// client names its member), heartbeats and leaves; the group epoch moves
// on when a subscription, a member or the subscribed topics change, the
// target is assigned by assignor.Simple (members may share a partition),
// and each member takes its target at its next heartbeat: there is no
// revocation. Members are persisted in Kafka's ShareGroup* records and
// fenced when their session ends; an empty share group stays until
// DeleteGroups. The share-partitions' delivery state is not kept here.
//
// Errors are Kafka error codes inside responses, as Kafka's classic
// coordinator answers them (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, MEMBER_ID_REQUIRED, FENCED_INSTANCE_ID, ...). Nothing
// here answers UNKNOWN_SERVER_ERROR. A request of a type it does not serve
// panics (the api layer routes only these).
//
// Invariants:
//   - Replaying, in order, every record a Coordinator produced yields the
//     same committed offsets, the same pending transactional offsets (with
//     their order) and the same persisted group metadata (tested as a
//     property). Committed offsets change only together with a record or
//     a marker.
//   - Pending transactional offsets are kept per group and producer id and
//     are never visible as committed; OffsetFetch v7+ with RequireStable
//     answers UNSTABLE_OFFSET_COMMIT for their partitions. A commit marker
//     moves them to the committed offsets, an abort marker drops them, and
//     an offset tombstone of their partition (OffsetDelete, DeleteGroups,
//     expiry) drops them too. Offset expiry skips a partition with a
//     pending offset and never deletes a group that holds one.
//   - The offset order counter advances by one for every offset-commit
//     record with a value, plain or transactional, when Handle writes it
//     and when Replay reads it, so it follows log order. A committed
//     transaction's offset replaces a committed one only if its record
//     came later (Kafka keeps the most recent record).
//   - Per producer id, the epoch known here (and the coordinator epoch of
//     its last marker) never decreases; a producer is forgotten only after
//     Options.ProducerIDExpiration without writes and without pending
//     offsets.
//   - A group's generation never decreases while the group exists.
//   - A group is in c.groups only if it has members, pending members,
//     offsets (committed or pending) or persisted metadata; a deleted group
//     is gone (never Dead in the map).
//   - Group metadata is persisted when the leader's SyncGroup completes a
//     rebalance, when a group becomes Empty, and when a static member is
//     replaced without a rebalance; the join phase itself is not persisted
//     (as in Kafka: after a reload, clients of an unpersisted generation get
//     ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID and rejoin).
//   - Loaded groups with members are Stable, otherwise Empty.
package group
