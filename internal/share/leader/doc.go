// Package leader is the share-partition leader of KIP-932 (Kafka's
// SharePartitionManager): the share.Partition of every (share group, topic
// partition) that a ShareFetch reached on this broker, loaded from the
// share coordinator, changed under one lock each, and written back before
// an acknowledgement is answered.
//
// Contract.
//   - A share-partition is loaded on first use: Persister.Read; when the
//     coordinator holds no state (or one without a start offset), its start
//     is chosen by the group's share.auto.offset.reset (Settings.Reset:
//     the high watermark for latest, the log start for earliest) and written with
//     Persister.Initialize at state epoch leader epoch + 1 (so that a
//     broker which lost the leadership cannot initialize over the new
//     leader's state), then read back. A load at another leader epoch than the one the
//     share-partition was loaded at loads it again: what the previous
//     leadership held in memory (locks, deliveries not yet written) is
//     gone, and the coordinator's state is what counts.
//   - Acquire moves the start past what the log no longer holds, reads from
//     Partition.NextFetch with the caller's read function and acquires, all
//     under the share-partition's lock (Kafka's fetch lock: two members never
//     acquire the same records), up to Bounds.ReadEnd; records of aborted
//     transactions (read_committed) are archived, not delivered. Acquisitions are not written (as Kafka):
//     after a move of leadership a record locked here is delivered again.
//   - Acknowledge applies the acks to a copy, writes the copy's state, and
//     keeps it only if the write succeeded: nothing acknowledged is answered
//     before it is durable, and a failed write changes nothing. A fenced
//     write (ErrFenced: the coordinator holds a later state or leader
//     epoch) drops the share-partition, which the next use loads again.
//   - ReleaseMember (a share session closed) and ExpireLocks (Run calls it
//     every Options.ExpiryInterval) release records and write the result;
//     their state is kept even when the write fails (as Kafka's lock
//     timeout), and the next write carries it.
//   - Changed is closed whenever records became available again (a
//     release, an expiry, a Release acknowledgement), so that waiting
//     fetches look again.
//
// Concurrency: Manager is safe for concurrent use. Its map has one mutex;
// each share-partition has its own, held across its persister calls (one
// operation at a time per share-partition, in the order they took it). Run
// is the one goroutine the package starts, and it stops with its context.
package leader
