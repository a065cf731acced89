// Package share is the state of one share-partition: the records of one
// topic partition that one share group (KIP-932) has in flight, as a pure
// state machine (Kafka's SharePartition without its I/O).
//
// Contract. A Partition covers the offsets [Start, End): Start is the
// share-partition start offset (SPSO), the first offset whose delivery is
// not complete; End (SPEO) is the first offset never acquired. Every offset
// of [Start, End) is in exactly one run of one State: Available (may be
// acquired), Acquired (locked by one member until a deadline), Acknowledged
// or Archived (delivery complete). Offsets at or past End are Available
// and have never been delivered.
//
//   - Acquire(member, fetched, limits, now) locks records the log returned
//     for the share group's fetch: first the Available runs inside [Start,
//     End) that the fetched batches cover, then new offsets from End on, each
//     with its delivery count raised by one and a lock until now plus the
//     lock duration. It takes whole log batches (batch-optimised mode) until
//     MaxRecords is reached, or exactly MaxRecords offsets (record-limit
//     mode), and new offsets only while End - Start is under MaxInFlight.
//     Records delivered many times already are throttled (Kafka 4.2): they
//     are acquired only first, and fewer at each delivery, the last alone.
//   - Acknowledge(member, batches, limits, now) applies a member's
//     acknowledgements all or nothing: every offset in [Start, End) must be
//     Acquired by that member (ErrInvalidRecordState otherwise), offsets
//     below Start are done and skipped, offsets past End were never
//     delivered (ErrInvalidAcknowledgement). Accept acknowledges, Reject
//     and Gap archive, Release makes the record Available again, or Archived
//     once it was delivered DeliveryLimit times, and Renew extends the lock.
//   - ReleaseMember (the member left or closed its share session) and
//     ExpireLocks (their lock deadline passed) release Acquired records by
//     the same rule as a Release acknowledgement.
//   - AdvanceStart(logStart) drops what the log no longer holds.
//   - Snapshot and Restore are the persisted form: Acquired is written as
//     Available with its delivery count, so a restored partition redelivers
//     what was locked when it was written.
//
// Time only enters as the now argument. No goroutines, no I/O, not safe
// for concurrent use.
//
// Invariants (checked by check() in tests and property-tested against a
// per-offset model):
//   - Start <= End; the runs are sorted, non-empty, contiguous and cover
//     [Start, End) exactly; adjacent runs differ (they are merged otherwise).
//   - The first run, when there is one, is not Acknowledged or Archived:
//     Start moves past completed deliveries as soon as they complete.
//   - An Acquired run has a member and a deadline; other runs have neither.
//   - Delivery counts never decrease, and a record is acquired only while
//     its count is under the delivery limit.
package share
