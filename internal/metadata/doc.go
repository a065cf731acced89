// Package metadata is the cluster metadata quorum: a Raft log (hashicorp/raft,
// stored with raft-wal) whose state machine publishes immutable Images.
//
// # Contract
//
//   - Every change is a command proposed through raft.Apply and validated by the
//     FSM when it is applied. The transition is the pure function
//     applyCommand(image, command, index) → (image, error): no I/O, no clock, no
//     randomness, so every replica that applies the same log reaches the same
//     Image. Anything random (topic ids, the cluster id) is drawn by the proposer
//     and carried inside the command.
//   - A rejected command (duplicate topic, unknown topic, bad partition count, …)
//     leaves the Image unchanged and returns a typed error to the proposer through
//     the apply response; callers classify it with errors.Is (ErrTopicExists,
//     ErrUnknownTopic, ErrInvalidPartitions, …).
//   - An Image is immutable once published: readers may keep and share it without
//     locks. Applying a command builds a new Image that copies only the maps it
//     changes (copy-on-write); unchanged *Topic values are shared between images.
//   - Image.Version is the Raft index of the command that produced the image.
//     Rejected commands do not produce an image, so versions may skip indexes.
//   - The cluster id is drawn once, on the first leadership of a fresh log, and
//     stored as a command; it survives restarts. Image.ControllerID is written to
//     the log by each new leader (as KRaft writes a LeaderChange record), so it is
//     part of the replicated state too.
//   - Snapshots serialize the whole Image; a restart restores the latest snapshot
//     and replays the log after it, so Open returns the same Image as before Close.
//     The snapshot's first byte names its layout (v2 adds remote segment
//     metadata, v3 SCRAM credentials, v4 ACL bindings, v5 broker registrations,
//     v8 single brokers' dynamic configs, v9 client quotas, v10 ip quotas,
//     v11 delegation tokens); older layouts stay decodable.
//   - LoadOffline rebuilds the Image of a stopped broker's metadata dir the
//     same way (latest snapshot, then the log after it) from a copy of the
//     dir, without starting Raft and without writing to the original; it is
//     what `strata inspect tier` reads.
//   - A configured voter without Raft state writes the voter configuration only
//     when a majority of the voters answer that they have no history either;
//     when one has, the node lost its state and rejoins (rejoin.go): no vote
//     and no candidacy (voteGate) until it knows committed, in its own log, an
//     index the leader committed after its return.
//
// # Remote segment metadata (DESIGN §4)
//
// The quorum is the one source of truth for the remote tier: a new leader reads
// it here, never from an in-memory default. UpdateRemoteSegment records one copy
// attempt (tier/remotemeta.RemoteSegment); the FSM accepts a new segment id only
// in COPY_STARTED and only for a live topic, and a known one only through
// remotemeta.ValidTransition with nothing but its state changed (the one table,
// shared with the tier). Every update names its topic by id and name and a valid
// partition, and is fenced by leader epoch: below the partition's current
// LeaderEpoch it is refused with ErrFencedLeaderEpoch.
//
// A segment that reaches DELETE_FINISHED is recorded (the command is in the log)
// and dropped from the image by that same command: nothing of it is left in the
// bucket, so the image does not grow with every segment ever uploaded. Its id is
// unknown from then on (ErrUnknownRemoteSegment); ids are fresh per attempt and
// never reused.
//
// Deleting a topic that has remote segments keeps them, with the topic's name
// and partitions (so fencing still applies), as a pending remote delete
// (Image.PendingRemoteDeletes): it survives restarts and an unreachable bucket
// until FinishRemoteTopicDelete, which is refused (ErrRemoteSegmentsRemain)
// while any of its segments is not DELETE_FINISHED. Its topic id cannot be
// reused meanwhile; its name can.
//
// # SCRAM credentials (KIP-554)
//
// The quorum stores each user's SCRAM credentials (Kafka's
// UserScramCredentialRecord): salt, StoredKey, ServerKey and iterations per
// mechanism (ScramSHA256, ScramSHA512), never a password.
// AlterScramCredentials changes one user's credentials in one command, all
// or nothing; apply refuses a bad user name, an unsupported or repeated
// mechanism, a credential outside Kafka's bounds (ErrInvalidScramCredential
// and its siblings) and the deletion of a credential the user does not have
// (ErrScramCredentialNotFound). A user whose last credential is deleted
// leaves the image. The image copies credential bytes in and out, so no
// caller shares them with a published image.
//
// # Client quotas (KIP-546)
//
// The quorum stores Kafka's client quotas (ClientQuotaRecord): by entity
// (quota.Entity: a user part and a client-id part, each absent, named or
// the default), the value of each key (quota.ProducerByteRate,
// quota.ConsumerByteRate, quota.ControllerMutationRate,
// quota.RequestPercentage). AlterClientQuotas changes any number of
// entities in one command, all or nothing; apply refuses the whole
// command (ErrInvalidClientQuota) for an entity with no part or an empty
// user name, an entity twice, an alteration with no key, a key Strata
// does not enforce, a value out of range, or a key both set and removed.
// Removing a key the entity does not have is no change; an entity left
// with no key leaves the image. Image.ClientQuotas hands out the image's
// own map (read only); Image.ClientQuotaEntities lists the entities in a
// fixed order. Commands and snapshots (v9) name each part by kind and
// name, never as a string to parse.
//
// # ACLs
//
// The quorum stores Kafka's ACL bindings (acl.Binding, as KRaft stores
// AccessControlEntryRecord): resource type, resource name, pattern type,
// principal, host, operation and permission, by value. CreateAcls stores a
// list of bindings in one command, all or nothing: apply refuses the whole
// list (ErrInvalidAcl) if one binding fails acl.Binding.Validate or holds a
// string that is not UTF-8 (JSON would replace the bad bytes and the log
// would name another binding), or if the list is empty or longer than
// MaxAclsPerCommand. A binding identical to one stored is no change, as
// Kafka dedupes identical ACLs. DeleteAcls removes the listed bindings that
// are stored and ignores the others: the caller resolved them from Kafka's
// filters against an image that may be stale, so deleting twice is harmless.
// It is refused for a string that is not UTF-8 too, and an empty list takes
// no log entry. Snapshots (v4) validate every binding as a create would.
//
// Image.Acls lists the bindings in a fixed order (resource type, name,
// pattern type, principal, host, operation, permission); Image.AclIndex is
// the acl.Index of exactly them, for authorization. The index is built once,
// by the command that changes the bindings (a command that adds or removes
// none changes nothing); every later image shares it until the next change.
//
// # Delegation tokens (KIP-48)
//
// The quorum stores each delegation token's information (Kafka's
// DelegationTokenRecord, DelegationToken): id, owner, requester, renewers,
// issue, maximum and expiry times; never its HMAC, which every broker
// derives from delegation.token.secret.key. Every decision is made in
// apply from the image and the command, and the proposer puts its clock
// in the command: CreateDelegationToken refuses a malformed token
// (ErrInvalidDelegationToken), a renewer that is not a User
// (ErrInvalidPrincipalType) and an id in use (ErrDelegationTokenExists);
// RenewDelegationToken and ExpireDelegationToken refuse, in Kafka's
// order, an unknown token (ErrDelegationTokenNotFound), an expired one
// (ErrDelegationTokenExpired) and a principal that is neither its owner
// nor a renewer (ErrDelegationTokenOwnership), then move its expiry, never
// past its maximum nor before its issue time; an expire with a negative
// period removes it. RemoveExpiredDelegationTokens removes every token
// expired at a given time. Snapshots (v11) validate every token as a
// create would.
//
// # Brokers and partition leadership (DESIGN §6)
//
// The quorum holds Kafka's broker registrations and each partition's
// leader, ISR, leader epoch and partition epoch, and the controller (the
// Raft leader in office) decides them as KRaft's does, with the pure
// functions of partition_change.go:
//
//   - RegisterBroker records a broker incarnation (endpoints, rack); its
//     broker epoch is the Raft index of the registration. A new incarnation
//     of a known id fences the old one first. A registration starts fenced.
//   - Heartbeat goes to the controller (forwarded like a proposal). The
//     controller unfences a broker that has applied its own registration
//     and fences one that stops beating for Options.BrokerSessionTimeout
//     (heartbeat times live in the controller's memory only; a new
//     controller gives every broker a full session from its own start).
//   - Fencing a broker removes it from every ISR it is not the last member
//     of and re-elects, within the ISR, the partitions it led; a partition
//     whose last ISR member is fenced has NoLeader until that member is
//     unfenced. No election of the controller's own picks a replica outside
//     the ISR (it could lose acknowledged records) unless the topic enables
//     unclean.leader.election.enable (unclean_auto.go); otherwise only an
//     operator's UNCLEAN election (electUncleanCmd) does, for a partition
//     without a leader, making that replica the only ISR member.
//   - AlterPartition is a leader's ISR change, fenced by its broker epoch,
//     leader epoch and partition epoch (Kafka's STALE_BROKER_EPOCH,
//     FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); a fenced broker cannot
//     join (INELIGIBLE_REPLICA). ISRs are kept in replica order.
//   - New partitions are spread over the unfenced brokers with Kafka's
//     rack-unaware striping (assign.go); a node where no broker has
//     registered (a single node) assigns everything to itself, as before.
//   - Preferred leader election (leader_balance.go): a partition's
//     preferred replica is the first of its replicas. ElectPreferredLeaders
//     (Kafka's ElectLeaders, PREFERRED) makes it lead when it is in the ISR
//     and eligible; with Options.LeaderImbalanceCheckInterval the
//     controller does so on its own for every broker whose preferred
//     partitions are led by others beyond Options.LeaderImbalancePercentage
//     (auto.leader.rebalance.enable). The command names partitions; its
//     apply decides again against the image of the moment.
//
// # Lifecycle
//
// Without Options.Voters the quorum is this node alone: Open bootstraps a
// one-voter configuration when the directory holds no Raft state, starts
// Raft, and returns once this node is the leader, the log has been replayed
// into the FSM (raft.Barrier) and the cluster id and controller record are
// applied.
//
// With Options.Voters (Kafka's controller.quorum.voters: node id → address)
// the node is a member of a multi-node quorum (DESIGN §6: 3 or 5 voters,
// every other broker a non-voter). A voter on a directory without Raft state
// bootstraps the whole voter configuration, sorted by id; every voter writes
// the same entry, which Raft allows, so the voters may start in any order. A
// non-voter never bootstraps: a background loop asks the leader (or, while it
// knows none, each voter in turn) to add it with raft.AddNonvoter, until the
// configuration holds it at its address; a restart at a new address updates
// it. Voters is read for nothing else but finding the quorum: the voter set
// of an existing log is the one in the log, which AddVoter and RemoveVoter
// change (voters.go: Kafka's AddRaftVoter and RemoveRaftVoter; a non-voter
// becomes a voter, a voter a non-voter). Any node that starts without Raft
// state and does not bootstrap catches up before it may vote (rejoin.go),
// since the log may make it a voter it forgot being. Whoever wins an
// election takes office as a single node does (barrier, cluster id, controller
// record). Open returns on the leader once it has taken office, and on any
// other member once a leader is known, this node's image holds the cluster
// id and that leader's controller record, and it has applied everything the
// controller had committed when asked (read_index.go): a restarted member's
// first image is never older than the one it had. Store.Leader names the
// leader this node knows of; Store.IsController says whether this node leads
// and has taken office.
//
// Every proposing method works on every member. Raft does not forward, so a
// member that does not lead sends the encoded command to the leader over the
// forwarding channel (see Transport); the leader checks it at the same gateway
// as the log (decodeCommand; the commands only a leader taking office writes
// are refused) and applies it on the same path as a local proposal. On
// success the proposer waits until its own FSM has applied the command's
// index and returns its own image, so the caller reads its own write; a
// rejection waits for the leader's version at the time too, so that what
// made the command fail is visible. The rejection comes back with the same
// errors.Is and errors.As classification as on the leader. The proposer sends
// a command again, after a short pause, only when it certainly was not
// applied: no leader known, the leader unreachable, or a node answering that
// it does not lead before appending it. Any other failure leaves the outcome
// unknown and returns ErrNotController wrapping the cause, as a leadership
// loss during a local proposal does.
//
// Close shuts Raft down, closes the listener, every connection it accepted
// or dialed and the stores, and leaves no goroutine behind.
//
// # Transport
//
// Options.BindAddr == "" selects an in-memory transport: it reaches no other node,
// so it is only for a single-node quorum (and for tests); Raft timeouts are short
// then. A non-empty BindAddr starts a TCP transport with Raft's default (safe)
// timeouts. The Raft configuration stored in the log records this node's
// address (Options.AdvertiseAddr, else its entry in Voters, else the
// listener's address). A member that restarts with its state at another
// address has its entry moved when it rejoins: a non-voter's on its word,
// a voter's on its registered directory id (Options.DirectoryID; Kafka's
// UpdateRaftVoter), a leader's by itself when it takes office. A member
// trusts its own copy of the configuration only once a leader has answered
// its join, and asks again whenever it hears from no leader for a while: a
// non-voter taken out of the configuration (an unregistered broker's) comes
// back either way (joinLoop).
//
// One TCP listener serves both Raft and forwarding (transport.go). Each new
// connection's first byte decides: Raft's connections start with an RPC type
// byte (0..4), a forwarding connection with forwardMagic (0xF5); any other
// byte is pushed back and the connection handed to Raft, which closes what it
// cannot decode. A forwarding connection carries one request and one answer
// (forward_wire.go):
//
//	request:  0xF5, version 1, frame(kind 1, encoded command)
//	                         | frame(kind 2, JSON {node_id, address})   join
//	                         | frame(kind 3, JSON Heartbeat)            heartbeat
//	response: frame(JSON {index, error: {codes, message, not_applied,
//	                                     transition, overlap}, heartbeat})
//	frame:    4-byte big-endian length n, then n bytes
//
// A request frame is at most 1+maxCommandBytes, a response at most 64 KiB;
// the length is checked before anything is allocated, and a bad frame or an
// unknown version closes the connection unanswered. Errors travel as stable
// codes (forwardErrorCodes: one line per sentinel error) plus the message.
// The forward server serves at most maxForwardConns connections at once.
// The port, like Raft's, must only be reachable by cluster members.
//
// # Layout of Options.Dir
//
//	wal/        raft-wal segments: the Raft log and stable store (term, vote)
//	snapshots/  raft.FileSnapshotStore
package metadata
