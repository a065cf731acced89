// Package txn is the transaction coordinator of one __transaction_state
// partition, as a pure state machine: Kafka's TransactionCoordinator,
// TransactionStateManager and TransactionMetadata for transaction protocol
// versions 1 (the epoch is bumped by InitProducerId and by fencing) and 2
// (KIP-890 part 2: every EndTxn v5 bumps it as well, and hands out the
// producer id and epoch of the next transaction; partition leaders add
// partitions for the client, Verify with Add).
//
// Contract. A Coordinator implements runtime.Shard. Handle(op, now) applies
// one InitProducerId (with a transactional id), AddPartitionsToTxn (v0-v3),
// AddOffsetsToTxn, EndTxn, DescribeTransactions or ListTransactions request
// (versions up to MaxVersions), or one MarkersWritten or Verify event (a
// partition leader asking whether a partition is in a producer's ongoing
// transaction before its first transactional batch there, KIP-890 part 1;
// it changes nothing). Tick(now) aborts
// timed-out transactions and removes expired transactional ids, each scan at
// most once per its interval. Both return a runtime.Result: records of
// __transaction_state in Kafka's schema (TxnMetadataKey v0 and
// TxnMetadataValue v0; a removed id is a tombstone), replies, and effects.
// The runtime sends the replies only once the records are durable; every op
// is answered from the Handle that receives it. Replay(key, value) rebuilds
// the state; it rejects what it cannot read with an error wrapping
// ErrBadRecord and then changes nothing. Time only enters as now; producer
// ids only through Options.NextProducerID. No goroutines, no I/O, not safe
// for concurrent use.
//
// Markers. When a transaction enters PrepareCommit or PrepareAbort (EndTxn,
// the abort of a timed-out transaction, the fencing InitProducerId of a
// new producer instance), the Result holds the Prepare record, the reply
// (EndTxn is answered once Prepare is durable, as in Kafka) and a
// WriteMarkers effect. The broker writes a marker to every partition of the
// transaction and then submits MarkersWritten, which completes it
// (CompleteCommit or CompleteAbort, one record). A transaction with no
// partitions completes in the same Result, without an effect. The first Tick
// of a Coordinator emits WriteMarkers again for every transaction it holds
// in Prepare*: after a load, their markers may not have been written.
//
// What the broker must do with WriteMarkers: writing a marker twice is
// harmless, but two writes of the same transaction in flight at once are
// not. Under protocol version 1 successive transactions of one producer
// share its id and epoch, so a late duplicate could put a commit marker on
// the next transaction's data, and its MarkersWritten could complete that
// next transaction before its own markers are written. The marker writer
// must therefore keep at most one write in flight per transactional id (a
// WriteMarkers equal to one in flight joins it), as Kafka's
// TransactionMarkerChannelManager keeps one entry per transaction.
//
// Errors are Kafka error codes inside responses, as Kafka's coordinator and
// KafkaApis answer them: PRODUCER_FENCED (INVALID_PRODUCER_EPOCH for the
// versions before it), CONCURRENT_TRANSACTIONS while a transaction
// completes, INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING,
// INVALID_TRANSACTION_TIMEOUT, TRANSACTIONAL_ID_NOT_FOUND, INVALID_REQUEST,
// and COORDINATOR_NOT_AVAILABLE (retriable) when NextProducerID fails.
// Nothing here answers UNKNOWN_SERVER_ERROR. A request of a type it does not
// serve, an InitProducerId without a transactional id, or an event of
// another type panics (the api layer routes only these).
//
// Partitioning. DescribeTransactions and ListTransactions answer for this
// partition only: the api layer sends each transactional id to its
// partition's coordinator and merges ListTransactions over all the
// partitions it leads, as Kafka's TransactionStateManager does.
//
// Invariants:
//   - Every transaction in c.txns is in Empty, Ongoing, PrepareCommit,
//     PrepareAbort, CompleteCommit or CompleteAbort; Dead and
//     PrepareEpochFence are never held (expiry deletes the id in the step
//     that writes its tombstone; a fence goes from Ongoing to PrepareAbort
//     with the bumped epoch in one step). Every change of state goes through
//     validTransition.
//   - A version 2 end bumps the epoch into its Prepare* record and writes
//     its markers at that epoch; an end from the last usable epoch
//     (math.MaxInt16-1) keeps the old producer id for its markers (at
//     math.MaxInt16) and holds the next one (nextProducerID, only in
//     Prepare*, persisted in value v1), which the producer takes at epoch
//     0 when the transaction completes. Its retries present the epoch
//     before the bump, or the old id's last epoch.
//   - Its producer id and epoch are valid (>= 0), Ongoing and Prepare*
//     transactions have a start time, Empty and Complete* ones have no
//     partitions (Complete* keep the start time of their last transaction),
//     and an Ongoing transaction's epoch is below math.MaxInt16, so it can
//     always be fenced.
//   - Replaying, in order, every record a Coordinator produced yields the
//     same persisted state (producer id and epoch, timeout, state,
//     partitions, start and last-update times) for every id; tested as a
//     property. The last producer id and last epoch (KIP-360 retries) are
//     not in value version 0 and are lost by a reload, as in Kafka.
package txn
