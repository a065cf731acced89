// Package sharestate is the share coordinator of KIP-932 for one
// __share_group_state partition, as a pure state machine: Kafka's
// ShareCoordinatorShard. It stores, for each share-partition (a share
// group's view of one topic partition, named by Key), what the partition
// leader persists about the records it delivers: the state epoch, the
// leader epoch, the share-partition start offset (SPSO), the delivery
// complete count, and the state batches (ranges of offsets with a delivery
// state, available, acknowledged or archived, and a delivery count).
//
// Contract. A Coordinator implements runtime.Shard. Handle(op, now) applies
// one InitializeShareGroupState, ReadShareGroupState,
// WriteShareGroupState, DeleteShareGroupState or ReadShareGroupStateSummary
// request (versions up to MaxVersions) and answers every partition of it,
// in the request's order, in one reply: the api layer may route partition
// by partition, but what it hands over is answered whole. The Result holds
// the records to append first: ShareSnapshot records of Kafka's schema,
// one per changed share-partition, each the whole combined state, and
// ShareSnapshot tombstones for deleted ones. The runtime sends the reply
// only once they are durable. ShareUpdate records (Kafka's deltas) are
// never written, so the compacted topic needs only the last record of
// each key. Replay(key, value) rebuilds the state from ShareSnapshot and
// ShareUpdate records and tombstones, as Kafka's replay does; it rejects
// what it cannot read with an error wrapping ErrBadRecord and then changes
// nothing, and skips records of other types. Tick deletes, with
// tombstones, the state of share-partitions whose topic is no longer in
// the metadata (Kafka's cleanup on topic deletion). Time only enters as
// now; topic metadata only through Options.PartitionCount. No goroutines,
// no I/O, not safe for concurrent use.
//
// Semantics, as Kafka 4.2's share coordinator (ShareCoordinatorShard and
// ShareCoordinatorService):
//   - Initialize overwrites the state with the request's state epoch and
//     start offset (-1: none yet, the leader chooses it by
//     share.auto.offset.reset), leader epoch 0 and no batches. It is
//     refused with FENCED_STATE_EPOCH when its state epoch is lower than
//     the stored one (-1 skips the check).
//   - Write combines the request's batches into the stored ones
//     (combineBatches: per offset the higher delivery count wins, then the
//     higher state; offsets below the new start offset are dropped), moves
//     the start offset unless the request's is -1, and stores the
//     request's delivery complete count. Refused with INVALID_REQUEST for
//     a share-partition with no state, FENCED_LEADER_EPOCH or
//     FENCED_STATE_EPOCH when its epoch is lower than the stored one (-1
//     skips either check). A write changes neither epoch.
//   - Read answers the state epoch, start offset and batches; INVALID_REQUEST
//     with no state; FENCED_LEADER_EPOCH below the stored leader epoch
//     (-1 included). A higher leader epoch is stored, with a snapshot.
//   - ReadSummary answers state epoch, leader epoch, start offset and (v1)
//     delivery complete count, without fencing; with no state it answers
//     start offset -1, an unknown count and epochs 0, with no error.
//   - Delete writes a tombstone; deleting what has no state succeeds.
//   - Every request: INVALID_REQUEST for an empty group id or a negative
//     partition; UNKNOWN_TOPIC_OR_PARTITION for a partition that
//     PartitionCount does not know, or of the zero topic id.
//
// Stricter than Kafka, at the gateway: a start offset or delivery complete
// count below -1, and a batch whose offsets are negative or reversed or
// whose state is not 0, 2 or 4 or count negative, are INVALID_REQUEST in a
// write (Kafka stores them), and ErrBadRecord in a record; an empty group
// id gets INVALID_REQUEST per partition (Kafka answers with no partitions).
//
// Invariants:
//   - Every stored state's batches are canonical: sorted, non-empty,
//     non-overlapping, adjacent ones (no offset between them) differ in
//     state or count, and none starts below a known start offset.
//   - The fence epochs are at least the state's own epochs, and only rise
//     until the key is deleted: a tombstone forgets them, as Kafka does.
//   - The state only changes by applying a record that Handle or Tick
//     also returns, through the code Replay uses; so replaying, in order, every
//     record a Coordinator produced yields its state (tested as a property,
//     with every later Read and ReadSummary answered alike).
//   - The snapshot epoch counts the snapshots of a key (wrapping at
//     math.MaxInt32, as Kafka's int does); nothing reads it.
package sharestate
