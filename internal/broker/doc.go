// Package broker keeps the partitions hosted on this node in step with the
// metadata image: it hosts every partition whose replicas include this
// node, applies topic config changes, gives each partition the role the
// image asks (leader or follower), and deletes a partition's data only when
// its topic is gone or this node is no longer one of its replicas. It also
// runs the per-broker background loops (retention checks, time-based
// flushes, the ISR check) and hands out producer ids.
//
// Roles (roles.go). A partition whose Leader is this node is made leader
// in the image's leader epoch (partition.BecomeLeader) and told its ISR's
// size (SetInSyncReplicas) on becoming leader and at every ISR change; any
// other is made a follower in that epoch (BecomeFollower) and
// Options.Followers is told whom it follows (nobody while the partition
// has NoLeader). Options.OnOpen and OnClose hear of each partition this
// node begins and stops leading, which is how __consumer_offsets
// partitions start and resign their coordinators without the broker
// knowing coordinators. Tier loops run on leaders only (DESIGN §4); the
// followers of tiered topics delete their local copies of tiered segments
// in one broker-wide pass every tier interval (tier_follower.go); the
// cleaner and retention run on every hosted partition. The tier
// executors' per-partition counts follow the opens and closes
// (tier_stats.go): a deleted topic's counts, and so its metrics, go with
// it.
//
// The leader side of replication (leader.go, replica_fetch.go, isr.go) is
// Kafka's Partition in its leader role, for each partition led here that
// has other replicas: followers' fetches (ReplicaFetch) move their state,
// the high watermark (replication.HighWatermark over the ISR, any member
// being added and the caught-up eligible followers) and propose ISR
// expansions; a check every replica.lag.time.max.ms/2 proposes shrinks.
// Proposals go to the controller (Metadata.AlterPartition) one at a time
// per partition, off the request path; their outcome comes back through
// the next image. A single node has no such partition: none of it runs.
//
// TierState (tier_state.go) is what the follower fetchers rebuild a
// follower's state from when it skips what its leader's remote tier holds
// (replication.TierState, KIP-405): the image's remote segments and the
// tier reader's objects.
//
// Invariants: a partition directory belongs to exactly one topic id (stored
// in its partition.metadata file); a directory whose topic id is not in the
// image is deleted, never reused. A change of leader, epoch or ISR never
// deletes data. Every OnOpen is followed by exactly one OnClose before the
// partition follows, closes or is deleted; Followers.Unfollow is called
// before a followed partition leads, closes or is deleted.
package broker
