// Package markers writes the markers of completing transactions: it is
// Kafka's TransactionMarkerChannelManager.
//
// Contract. The transaction coordinator returns a txn.WriteMarkers effect
// when a transaction enters PrepareCommit or PrepareAbort (and again for
// every such transaction after it loads). Writer.OnEffects takes it and,
// on a goroutine of its own, writes one marker to each partition of the
// transaction: through the group coordinator here (a group.TxnCompleted
// event) for __consumer_offsets partitions coordinated here, whose pending
// transactional offsets it settles; with AppendMarker of what
// Options.Partition returns for the others, which is the partition when it
// is led here and a sender of WriteTxnMarkers to its leader when another
// broker leads it (a __consumer_offsets partition led elsewhere included:
// its leader hands the marker to its group coordinator). Once every
// marker is durable (or its partition is gone), it submits
// txn.MarkersWritten to the transaction coordinator, which completes the
// transaction.
//
// Failures: a marker that cannot be written now (a partition reopening, a
// coordinator partition loading, a failing disk) is retried after
// Options.RetryBackoff, doubling up to a minute, until it is written or the
// Writer closes; the transaction stays in Prepare* meanwhile, so its
// producer is told CONCURRENT_TRANSACTIONS and retries, as in Kafka. A
// partition whose topic was deleted is skipped. A marker the partition
// refuses as fenced (a newer epoch of the producer or of the coordinator
// already ended the transaction there) is skipped too: the newer marker
// settled that partition.
//
// One write per transactional id is in flight at a time, and an effect
// identical to it (same producer id, epoch and outcome) joins it: a
// reloaded coordinator emits again what it finds in Prepare, and two
// writers of one transaction could otherwise mark its producer's next
// transaction, which has the same producer id and epoch. The write ends
// only once the coordinator has taken MarkersWritten (retried while it
// loads), or has moved elsewhere (NOT_COORDINATOR: its next load emits the
// effect again).
//
// Invariants: every goroutine belongs to one transactional id's flight and
// exits when its effects are settled or at Close; Close waits for all.
package markers
