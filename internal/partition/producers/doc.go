// Package producers keeps a partition's producer state: for each producer
// id, its epoch, the metadata of its last MaxBatches batches (so that a
// retried batch is answered with its original offsets and a gap in the
// sequence is refused), its open transaction and the coordinator epoch of
// its last transaction marker. It is pure: no I/O, no clock, no
// goroutines. The partition owns one State and serializes calls to it.
//
// The rules are Kafka's (ProducerAppendInfo, ProducerStateEntry,
// transactions v1). Client batches (Check, Update; origin CLIENT):
//   - An unknown producer id is accepted with any sequence: its state may
//     have been removed by retention, DeleteRecords or expiry.
//   - An epoch lower than the producer's is refused with
//     INVALID_PRODUCER_EPOCH (47).
//   - A higher epoch must start at sequence 0, else
//     OUT_OF_ORDER_SEQUENCE_NUMBER (45); it replaces the batch history.
//   - In the same epoch, a batch whose first and last sequence equal one of
//     the cached batches is a Duplicate, answered with the original
//     BatchMeta (Kafka answers success with the original base offset).
//     Otherwise its first sequence must follow the last one, wrapping from
//     math.MaxInt32 to 0, else OUT_OF_ORDER_SEQUENCE_NUMBER. A producer
//     with no cached batch in its epoch (after a marker bumped it) must
//     start at 0 (Kafka's inSequence(NO_SEQUENCE, 0)).
//   - A non-transactional batch from a producer whose transaction is open
//     is refused with INVALID_TXN_STATE (48). A transactional batch from a
//     producer with none open opens one at the batch's first offset.
//
// A coordinator's own batches (CheckCoordinator, UpdateCoordinator; origin
// COORDINATOR) carry no sequence: only the epoch and the transaction state
// are checked, and no batch is remembered.
//
// Transaction markers (CheckMarker, ApplyMarker): an epoch lower than the
// producer's is INVALID_PRODUCER_EPOCH; a coordinator epoch lower than
// that of the producer's last marker is TRANSACTION_COORDINATOR_FENCED
// (52). A marker sets the producer's epoch (a different one clears the
// batch history) and coordinator epoch and closes its open transaction,
// returning it as a CompletedTxn; a marker with no open transaction
// completes nothing.
//
// Check decides and changes nothing; Update records a batch after it is
// appended (or replayed). Errors a client should see are *CodeError values
// carrying the Kafka error code; test them with errors.Is against the Err
// values.
//
// Invariants of an Entry: 0 <= len(Batches) <= MaxBatches, oldest first,
// all in the entry's epoch, offsets strictly ascending and disjoint. An
// entry with no batch exists only once a marker or a coordinator batch
// made it, or while its transaction is open; one whose batches are all
// truncated away and that has no open transaction is removed. The open
// transactions (OpenTxns) are exactly the entries' CurrentTxnFirstOffset
// values, ascending. Expiry never removes a producer with an open
// transaction. Restore checks the entry invariants on snapshot bytes (a
// gateway); the rest of the package relies on them.
//
// Limitation: TruncateTo can only forget (see its documentation); exact
// state after a truncation needs a snapshot below the truncation point
// plus replay, which is the partition's job.
package producers
