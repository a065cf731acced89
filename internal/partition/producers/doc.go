// Package producers keeps a partition's idempotent-producer state: for each
// producer id, its epoch and the metadata of its last MaxBatches batches, so
// that a retried batch is answered with its original offsets and a gap in
// the sequence is refused. It is pure: no I/O, no clock, no goroutines. The
// partition owns one State and serializes calls to it.
//
// The rules are Kafka's (ProducerAppendInfo.checkSequence, origin CLIENT,
// transactions v1):
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
//     math.MaxInt32 to 0, else OUT_OF_ORDER_SEQUENCE_NUMBER.
//
// Check decides and changes nothing; Update records a batch after it is
// appended. Errors a client should see are *CodeError values carrying the
// Kafka error code; test them with errors.Is against the Err values.
//
// Invariants of an Entry: 1 <= len(Batches) <= MaxBatches, oldest first,
// all in the entry's epoch, offsets strictly ascending and disjoint; an
// entry with no batch left is removed. Restore checks these on snapshot
// bytes (a gateway); the rest of the package relies on them.
//
// Limitation: TruncateTo can only forget. If every cached batch of a
// producer is at or after the truncation point, the producer becomes
// unknown (any sequence accepted) rather than falling back to older state;
// exact state needs a snapshot below the truncation point plus replay,
// which is the partition's job.
package producers
