// Package replication is the decision core of Kafka-style partition
// replication (DESIGN §6): what a leader concludes from its followers'
// fetches, when the high watermark moves, who leaves or joins the ISR, where
// a diverged follower truncates. Which replica leads is the controller's
// decision (metadata's electLeader), not this package's.
//
// Contract: every function of the decision core is pure. Nothing does
// I/O, starts a goroutine, reads a clock or keeps state; time comes in as
// int64 milliseconds (names end in Ms) and every answer is a value the
// caller applies. The same inputs always give the same output, which is
// what the table and property tests pin. The drivers are apart: the
// follower fetchers (fetchers.go, fetcher.go, fetcher_tier.go, Kafka's
// ReplicaFetcherManager and ReplicaFetcherThread) do the requests and
// apply the core's answers to partitions.
//
// A follower whose fetch offset is in its leader's remote tier
// (OFFSET_MOVED_TO_TIERED_STORAGE), or an empty one when
// follower.fetch.last.tiered.offset.enable is on (KIP-1023,
// TieredBootstrap), rebuilds its leader-epoch lineage, producer state and
// aborted transactions from the remote tier instead of fetching those
// offsets (KIP-405; PlanAuxState decides from which remote segments, the
// fetcher reads them through TierState and installs them with
// partition.StartOverFromTier), then fetches from there.
//
// Each function mirrors a named Kafka rule as of Kafka 3.9/4.0 (apache/kafka
// trunk of October 2024:
// kafka.cluster.Replica and Partition, kafka.server.AbstractFetcherThread,
// and org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache); its comment names the
// class and says where Strata differs.
//
// Invariants the caller keeps, which the functions rely on:
//   - Offsets are base.Offset; a name ending in End is exclusive, so a log
//     end is the next offset to be written and a high watermark is the first
//     offset that is not committed; it never exceeds the leader's log end.
//   - A lineage ([]base.EpochStart) is a leader-epoch cache: epochs strictly
//     ascending, start offsets non-decreasing, every start below or at the
//     log end. Functions taking a lineage panic on one that is not (a
//     programmer error, STYLE §8).
//   - Replica and ISR lists hold broker ids without duplicates, and the ISR
//     is a subset of the replicas. An ISR this package proposes is in
//     replica order (InReplicaOrder), the order the controller keeps; other
//     id lists it returns are sorted ascending. Returned slices are new;
//     inputs are never modified.
//   - Nothing inside uses -1 for "unknown": a follower that has not fetched
//     in this leader's term says so (Follower.Fetched), and a leader's
//     OffsetForLeaderEpoch answer says which parts are undefined
//     (LeaderAnswer.Kind). The api layer translates Kafka's wire sentinels.
package replication
