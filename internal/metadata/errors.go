package metadata

import "errors"

// Errors returned by the command methods of Store. They are wrapped with
// detail; classify them with errors.Is.
var (
	// ErrTopicExists: a topic with that name already exists.
	ErrTopicExists = errors.New("metadata: topic already exists")
	// ErrTopicIDExists: a topic with that id already exists (under another name).
	ErrTopicIDExists = errors.New("metadata: topic id already exists")
	// ErrUnknownTopic: no topic with that name (and id) exists.
	ErrUnknownTopic = errors.New("metadata: unknown topic")
	// ErrInvalidTopicName: the name breaks Kafka's rules (1..249 of [a-zA-Z0-9._-], not "." or "..").
	ErrInvalidTopicName = errors.New("metadata: invalid topic name")
	// ErrInvalidPartitions: a partition count out of range, or not larger than the current one.
	ErrInvalidPartitions = errors.New("metadata: invalid partitions")
	// ErrInvalidReplicationFactor: the replication factor cannot be met by the known brokers.
	ErrInvalidReplicationFactor = errors.New("metadata: invalid replication factor")
	// ErrInvalidReplicaAssignment: an assignment with no, duplicate or negative replicas.
	ErrInvalidReplicaAssignment = errors.New("metadata: invalid replica assignment")
	// ErrInvalidConfig: a config map with an empty key or too many entries.
	ErrInvalidConfig = errors.New("metadata: invalid config")
	// ErrInvalidCommand: a command that cannot be decoded or is malformed.
	ErrInvalidCommand = errors.New("metadata: invalid command")
	// ErrClusterInitialized: a second cluster-id command; the first one wins.
	ErrClusterInitialized = errors.New("metadata: cluster id already set")
	// ErrNotController: this node is not the Raft leader, so it cannot propose.
	ErrNotController = errors.New("metadata: not the controller")
	// ErrFencedLeaderEpoch: a remote segment update from a leader epoch below
	// the partition's current one; the writer is no longer the leader.
	ErrFencedLeaderEpoch = errors.New("metadata: fenced leader epoch")
	// ErrUnknownRemoteSegment: an update of a remote segment id the image does
	// not hold, other than a COPY_STARTED: never created, or already
	// DELETE_FINISHED (and so dropped from the image).
	ErrUnknownRemoteSegment = errors.New("metadata: unknown remote segment")
	// ErrOverlappingRemoteSegment: an update to COPY_FINISHED of a segment
	// that overlaps another COPY_FINISHED segment of the partition with the
	// same epoch history (remotemeta.ConflictsWith); the error also matches
	// remotemeta.ErrOverlap. Accepting it would make the partition's tier
	// unknown to every reader of the metadata.
	ErrOverlappingRemoteSegment = errors.New("metadata: overlapping remote segment")
	// ErrRemoteSegmentsRemain: FinishRemoteTopicDelete while some segment of
	// the topic is not DELETE_FINISHED.
	ErrRemoteSegmentsRemain = errors.New("metadata: remote segments remain")
	// ErrInvalidScramCredential: a SCRAM credential change for an empty,
	// oversized or non-UTF-8 user name, one that changes nothing, or one
	// whose credential breaks the invariants of ScramCredential (iterations
	// outside [MinScramIterations, MaxScramIterations], an empty salt, keys
	// not of the mechanism's hash size). Kafka's UNACCEPTABLE_CREDENTIAL.
	ErrInvalidScramCredential = errors.New("metadata: invalid SCRAM credential")
	// ErrUnsupportedScramMechanism: a mechanism other than ScramSHA256 and
	// ScramSHA512. Kafka's UNSUPPORTED_SASL_MECHANISM.
	ErrUnsupportedScramMechanism = errors.New("metadata: unsupported SCRAM mechanism")
	// ErrDuplicateScramMechanism: one change names a mechanism twice
	// (upserted twice, deleted twice, or both). Kafka's DUPLICATE_RESOURCE.
	ErrDuplicateScramMechanism = errors.New("metadata: duplicate SCRAM mechanism")
	// ErrScramCredentialNotFound: a deletion of a credential the user does
	// not have. Kafka's RESOURCE_NOT_FOUND.
	ErrScramCredentialNotFound = errors.New("metadata: SCRAM credential not found")
	// ErrInvalidClientQuota: a client quota change the quorum refuses
	// whole (KIP-546): no alteration; an entity with no part, or with a
	// malformed one (an empty user name, a name that is not UTF-8 or
	// longer than Kafka's strings, a name on a part that is not named, a
	// kind quota does not define); an entity twice; an alteration with no
	// key; a key Strata does not enforce (it also matches
	// quota.ErrInvalidKey); a value out of range (quota.ErrInvalidValue);
	// a key set and removed, or removed twice, in one alteration. Kafka's
	// INVALID_REQUEST.
	ErrInvalidClientQuota = errors.New("metadata: invalid client quota")
	// ErrInvalidAcl: an ACL change the quorum refuses whole: a created
	// binding that acl.Binding.Validate refuses, a created or deleted one
	// whose resource name, principal or host is not UTF-8, or more than
	// MaxAclsPerCommand bindings (or none, for a create). Kafka's
	// INVALID_REQUEST.
	ErrInvalidAcl = errors.New("metadata: invalid ACL")
	// ErrInvalidDelegationToken: a delegation token change the quorum
	// refuses as malformed: a token id that is empty, longer than 256
	// bytes or not UTF-8; an owner, requester or renewer that is not a
	// "Type:name" principal of at most 1024 bytes of UTF-8; renewers not
	// ascending, repeated or too many; times that break 0 ≤ IssueMs ≤
	// ExpiryMs ≤ MaxMs; a negative time or a renew period that is not
	// positive in a renew or expire.
	ErrInvalidDelegationToken = errors.New("metadata: invalid delegation token")
	// ErrInvalidPrincipalType: a delegation token renewer whose principal
	// type is not User. Kafka's INVALID_PRINCIPAL_TYPE.
	ErrInvalidPrincipalType = errors.New("metadata: invalid principal type")
	// ErrDelegationTokenExists: a create with a token id already stored.
	ErrDelegationTokenExists = errors.New("metadata: delegation token already exists")
	// ErrDelegationTokenNotFound: a renew or expire of a token id that is
	// not stored. Kafka's DELEGATION_TOKEN_NOT_FOUND.
	ErrDelegationTokenNotFound = errors.New("metadata: delegation token not found")
	// ErrDelegationTokenExpired: a renew or expire of a token past its
	// expiry or its maximum lifetime. Kafka's DELEGATION_TOKEN_EXPIRED.
	ErrDelegationTokenExpired = errors.New("metadata: delegation token expired")
	// ErrDelegationTokenOwnership: a renew or expire by a principal that is
	// neither the token's owner nor one of its renewers. Kafka's
	// DELEGATION_TOKEN_OWNER_MISMATCH.
	ErrDelegationTokenOwnership = errors.New("metadata: not the delegation token's owner or renewer")
	// ErrInvalidBrokerRegistration: a registration with a negative id, no or
	// bad endpoints, or a bad rack.
	ErrInvalidBrokerRegistration = errors.New("metadata: invalid broker registration")
	// ErrUnknownBroker: no broker with that id is registered.
	ErrUnknownBroker = errors.New("metadata: unknown broker")
	// ErrBrokerNotFenced: the broker to unregister is running; it must be
	// stopped (and so fenced) first.
	ErrBrokerNotFenced = errors.New("metadata: broker not fenced")
	// ErrStaleBrokerEpoch: a change for a broker registration (incarnation)
	// that has been replaced. Kafka's STALE_BROKER_EPOCH.
	ErrStaleBrokerEpoch = errors.New("metadata: stale broker epoch")
	// ErrNotLeader: an ISR change from a broker that does not lead the
	// partition. Kafka's NOT_LEADER_OR_FOLLOWER.
	ErrNotLeader = errors.New("metadata: not the partition leader")
	// ErrInvalidUpdateVersion: an ISR change planned against an older
	// partition epoch. Kafka's INVALID_UPDATE_VERSION.
	ErrInvalidUpdateVersion = errors.New("metadata: stale partition epoch")
	// ErrIneligibleReplica: an ISR change adding a fenced or unregistered
	// broker. Kafka's INELIGIBLE_REPLICA.
	ErrIneligibleReplica = errors.New("metadata: ineligible replica")
	// ErrDuplicateVoter: AddVoter of a node that is already a voter.
	// Kafka's DUPLICATE_VOTER.
	ErrDuplicateVoter = errors.New("metadata: already a voter")
	// ErrVoterNotFound: RemoveVoter of a node that is not a voter, or by a
	// directory id that is not the voter's. Kafka's VOTER_NOT_FOUND.
	ErrVoterNotFound = errors.New("metadata: voter not found")
	// ErrInvalidVoter: a voter change with a directory id or addresses
	// that are not the node's, removing the last voter, or on a
	// single-node quorum. Kafka's INVALID_REQUEST.
	ErrInvalidVoter = errors.New("metadata: invalid voter change")
	// ErrVoterNotReady: AddVoter of a node that has not joined, registered
	// or caught up, or a change that did not commit in time or raced
	// another. Kafka's REQUEST_TIMED_OUT: try again.
	ErrVoterNotReady = errors.New("metadata: voter change not ready")
	// ErrClosed: the Store is closed.
	ErrClosed = errors.New("metadata: store closed")

	// errStaleProposal: the proposer planned against an image that changed
	// before its command was applied; the proposer replans and retries.
	errStaleProposal = errors.New("metadata: stale proposal")
)
