// Package reconcile moves one member of a KIP-848 consumer group from the
// partitions it has towards its target assignment (Kafka's
// CurrentAssignmentBuilder), as pure functions of the member, the target
// and what the member's heartbeat reported.
//
// Contract. Next(m, in) is m's next state:
//   - Stable at the target epoch stays as it is, except that partitions of
//     topics it no longer subscribes to (in.SubscriptionChanged) are taken
//     away: to revoke if the member still reports them, dropped otherwise.
//   - A member behind the target epoch (Stable or UnreleasedPartitions)
//     keeps Assigned ∩ Target, must revoke Assigned − Target, and gets the
//     partitions of Target that no other member holds (in.PartitionEpoch is
//     -1). While it still reports a partition to revoke it stays at its
//     epoch in UnrevokedPartitions with nothing new; otherwise it moves to
//     the target epoch with the free partitions added, Stable, or
//     UnreleasedPartitions while some of its target is still held by
//     another member.
//   - UnrevokedPartitions waits until the heartbeat no longer reports any
//     partition pending revocation (a heartbeat that reports nothing
//     waits), then reconciles as above at epoch min(epoch+1, target epoch).
//   - Unknown (a state this code does not know, read from a newer
//     coordinator's records) fences the member unless it reports that it
//     owns nothing; it then restarts from the target.
//
// CheckEpoch is the heartbeat's and the offset commit's epoch check: the
// member's epoch, or its previous epoch when it owns only partitions it
// still has (the response that moved it on was lost); any other epoch is
// FENCED_MEMBER_EPOCH.
//
// Invariants (property-tested): Assigned and PendingRevocation are
// disjoint; a partition enters Assigned only if it is in the target and
// free or already the member's; the epoch never decreases and never passes
// the target epoch; a member whose client revokes what it is asked to
// reaches Stable with Assigned equal to its target once the partitions are
// free.
package reconcile
