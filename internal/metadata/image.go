package metadata

import (
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/quota"
)

// Limits enforced by the FSM; commands beyond them are rejected.
const (
	// maxTopicNameLen is Kafka's limit on topic names.
	maxTopicNameLen = 249
	// maxPartitionsPerTopic bounds one command and one topic's share of an image.
	maxPartitionsPerTopic = 100_000
	// maxReplicationFactor bounds the replica list of one partition.
	maxReplicationFactor = 64
	// maxConfigEntries bounds a topic's or the brokers' config map.
	maxConfigEntries = 1024
)

// Image is one immutable state of the cluster metadata. Once published it is
// never mutated: share it freely, never write to its maps or slices.
//
// Invariants: Topics and TopicsByID index the same set of *Topic values (by Name
// and by ID); no topic has a zero ID; maps are never nil.
//
// Remote segment metadata (DESIGN §4): remote holds it for live topics and for
// topics pending remote delete, and nothing else; no id is both a live topic
// and pending; every segment is valid, not DELETE_FINISHED, of the topic id and
// partition it is filed under (TP.Topic is that topic's name, TP.Partition a
// partition index of it), with ids unique per partition, ascending by base
// offset then id; no empty slice or inner map is kept. An applied command
// never makes two COPY_FINISHED segments of a partition overlap with the same
// epoch history (remotemeta.ConflictsWith; see restoreRemote for snapshots).
//
// SCRAM credentials: scram holds, by user name, the user's credentials by
// mechanism; every user name passes validateScramUser, no user is kept
// without a credential, every mechanism is ScramSHA256 or ScramSHA512 and
// every credential holds the invariants of ScramCredential for it. Its byte
// slices are the image's own: copied in from commands, copied out by
// Image.ScramCredential.
//
// Brokers: every key is its broker's ID and every broker passes
// validateBroker. Once any broker is registered, new assignments name only
// registered brokers, and no command makes a fenced broker lead a partition
// or join an ISR; fencing removes it from every ISR it is in, unless it is
// that ISR's only member (the partition then has NoLeader).
//
// Client quotas: clientQuotas holds, by entity, the entity's quotas by
// key; every entity passes validateQuotaEntity, none is kept without a
// key, every key passes quota.ValidateKey and every value
// quota.ValidateValue. Its maps are the image's own: copied in from
// commands, and never written once published (Image.ClientQuotas hands
// them out). requestQuotaEntities counts its entities that are not ip
// entities.
//
// ACLs: acls is the set of stored bindings, each of which passes
// validateAcl; aclIndex is acl.NewIndex of exactly them in Acls order
// (emptyAclIndex when there is none), built by the command that changed
// them and shared by the images after it that did not.
//
// Delegation tokens: delegationTokens holds, by id, tokens that each hold
// the invariants of DelegationToken (validateDelegationToken) and are
// filed under their own ID. Their Renewers slices are the image's own:
// copied in from commands, copied out by Image.DelegationToken and
// Image.DelegationTokens, shared between images and never written.
type Image struct {
	// ClusterID is the base64url (unpadded) form of 16 random bytes, as Kafka's.
	ClusterID string
	// ControllerID is the node id of the Raft leader that last took office.
	ControllerID int32
	Topics       map[string]*Topic
	TopicsByID   map[base.TopicID]*Topic
	// BrokerConfigs are the dynamic cluster-wide broker configs (Kafka's
	// default broker resource).
	BrokerConfigs map[string]string
	// NodeConfigs are the dynamic configs of single brokers, by node id;
	// a node's win over BrokerConfigs on that node. Never nil; a node
	// without any has no entry.
	NodeConfigs map[int32]map[string]string
	// GroupConfigs are the dynamic configs of consumer groups, by group id
	// (Kafka's GROUP config resource). Never nil; a group without any has
	// no entry.
	GroupConfigs map[string]map[string]string
	// ClientMetricsConfigs are the configs of client metrics
	// subscriptions, by subscription name (Kafka's CLIENT_METRICS config
	// resource, KIP-714). Never nil; a subscription without configs has
	// no entry.
	ClientMetricsConfigs map[string]map[string]string
	// Features are the finalized feature levels UpdateFeatures set, by
	// name (never nil); a feature without an entry has its default
	// (FeatureLevel). FeaturesVersion is the Version of their last change
	// (0: never changed).
	Features        map[string]int16
	FeaturesVersion uint64
	// Brokers are the registered brokers, by id (never nil; empty on a
	// single node that never registered).
	Brokers map[int32]*Broker
	// NextProducerIDBlock is the first producer id no broker has been
	// given (AllocateProducerIDs); blocks are handed out ascending.
	NextProducerIDBlock int64
	// TierStore is the token of the remote store the cluster tiers to
	// (ClaimTierStore); "" until a node claims one.
	TierStore string
	// Version is the Raft index of the command that produced this image.
	Version uint64

	// remote is the remote segment metadata, by topic id (RemoteSegments).
	remote map[base.TopicID]remoteTopic
	// pendingDeletes are the deleted topics whose remote data is not yet
	// deleted, by topic id (PendingRemoteDeletes); their segments stay in remote.
	pendingDeletes map[base.TopicID]*pendingDelete
	// scram are the SCRAM credentials, by user (ScramCredential).
	scram map[string]scramUser
	// clientQuotas are the client quotas, by entity (ClientQuotas).
	clientQuotas         map[quota.Entity]map[string]float64
	requestQuotaEntities int
	// acls are the ACL bindings (Acls), by value.
	acls map[acl.Binding]struct{}
	// aclIndex indexes acls (AclIndex).
	aclIndex *acl.Index
	// delegationTokens are the delegation tokens, by id (DelegationToken).
	delegationTokens map[string]DelegationToken
}

// Topic is one topic. Immutable once part of a published Image.
//
// Invariants: Partitions[i].Index == i; 1 ≤ len(Partitions) ≤ maxPartitionsPerTopic.
type Topic struct {
	Name       string
	ID         base.TopicID
	Partitions []Partition
	Configs    map[string]string
}

// Partition is one partition's replica assignment and leadership.
//
// Invariants: Replicas is non-empty, without duplicates; ISR is a subset of
// Replicas without duplicates, in replica order, empty only once its last
// member came back without its logs (partitionAfterLogLoss); Leader ∈ ISR,
// or NoLeader when the only ISR member is fenced or the ISR is empty. LeaderEpoch grows with every
// change of leader, PartitionEpoch with every change (Kafka's leader and
// partition epochs); both start at 0.
//
// A reassignment in flight (KIP-455; reassign.go) is AddingReplicas and
// RemovingReplicas, nil when there is none: Replicas is then the target
// followed by RemovingReplicas (Kafka's PartitionReassignmentReplicas), so
// RemovingReplicas is the tail of Replicas; AddingReplicas are members of
// the target; the two are disjoint; the target and the original replicas
// (Replicas without AddingReplicas) are non-empty.
type Partition struct {
	Index            int32
	Leader           int32
	LeaderEpoch      base.Epoch
	PartitionEpoch   int32 `json:",omitempty"`
	Replicas         []int32
	ISR              []int32
	AddingReplicas   []int32 `json:",omitempty"`
	RemovingReplicas []int32 `json:",omitempty"`
}

// DynamicConfigsOf is what broker node runs with of the dynamic broker
// configs: the cluster-wide ones and its own (nil when it has none).
func (img *Image) DynamicConfigsOf(node int32) (clusterWide, own map[string]string) {
	return img.BrokerConfigs, img.NodeConfigs[node]
}

func emptyImage() *Image {
	return &Image{
		Topics:        map[string]*Topic{},
		TopicsByID:    map[base.TopicID]*Topic{},
		BrokerConfigs: map[string]string{},
		NodeConfigs:   map[int32]map[string]string{},
		GroupConfigs:  map[string]map[string]string{},
		Features:      map[string]int16{},
		Brokers:       map[int32]*Broker{},

		ClientMetricsConfigs: map[string]map[string]string{},

		remote:         map[base.TopicID]remoteTopic{},
		pendingDeletes: map[base.TopicID]*pendingDelete{},
		scram:          map[string]scramUser{},
		clientQuotas:   map[quota.Entity]map[string]float64{},
		acls:           map[acl.Binding]struct{}{},
		aclIndex:       emptyAclIndex,

		delegationTokens: map[string]DelegationToken{},
	}
}

// with returns a shallow copy of img stamped with version; the caller replaces
// the maps it changes instead of writing into the shared ones.
func (img *Image) with(version uint64) *Image {
	next := *img
	next.Version = version
	return &next
}

// withTopic returns a copy of img with t added or replaced (by name), copying
// both topic maps.
func (img *Image) withTopic(t *Topic, version uint64) *Image {
	next := img.with(version)
	next.Topics = copyMap(img.Topics, 1)
	next.TopicsByID = copyMap(img.TopicsByID, 1)
	if old, ok := next.Topics[t.Name]; ok {
		delete(next.TopicsByID, old.ID)
	}
	next.Topics[t.Name] = t
	next.TopicsByID[t.ID] = t
	return next
}

// withoutTopic returns a copy of img without t.
func (img *Image) withoutTopic(t *Topic, version uint64) *Image {
	next := img.with(version)
	next.Topics = copyMap(img.Topics, 0)
	next.TopicsByID = copyMap(img.TopicsByID, 0)
	delete(next.Topics, t.Name)
	delete(next.TopicsByID, t.ID)
	return next
}

func copyMap[K comparable, V any](m map[K]V, extra int) map[K]V {
	out := make(map[K]V, len(m)+extra)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// cloneConfigs returns a private copy of configs, never nil.
func cloneConfigs(configs map[string]string) map[string]string {
	return copyMap(configs, 0)
}

// validateTopicName applies Kafka's topic name rules.
func validateTopicName(name string) error {
	if name == "" || len(name) > maxTopicNameLen || name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidTopicName, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		legal := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !legal {
			return fmt.Errorf("%w: %q has illegal character %q", ErrInvalidTopicName, name, c)
		}
	}
	return nil
}

func validateConfigs(configs map[string]string) error {
	if len(configs) > maxConfigEntries {
		return fmt.Errorf("%w: %d entries, at most %d", ErrInvalidConfig, len(configs), maxConfigEntries)
	}
	for k := range configs {
		if k == "" {
			return fmt.Errorf("%w: empty config name", ErrInvalidConfig)
		}
	}
	return nil
}

func validateReplicas(replicas []int32) error {
	if len(replicas) == 0 || len(replicas) > maxReplicationFactor {
		return fmt.Errorf("%w: %d replicas", ErrInvalidReplicaAssignment, len(replicas))
	}
	for i, r := range replicas {
		if r < 0 || slices.Contains(replicas[:i], r) {
			return fmt.Errorf("%w: replicas %v", ErrInvalidReplicaAssignment, replicas)
		}
	}
	return nil
}

// validatePartitionState checks the leadership invariants of p.
func validatePartitionState(p Partition) error {
	if p.LeaderEpoch < 0 || p.PartitionEpoch < 0 || len(p.ISR) == 0 && p.Leader != NoLeader ||
		p.Leader != NoLeader && !slices.Contains(p.ISR, p.Leader) {
		return fmt.Errorf("%w: leader %d epoch %d partition epoch %d isr %v",
			ErrInvalidReplicaAssignment, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.ISR)
	}
	for i, r := range p.ISR {
		if !slices.Contains(p.Replicas, r) || slices.Contains(p.ISR[:i], r) {
			return fmt.Errorf("%w: isr %v not a set within replicas %v", ErrInvalidReplicaAssignment, p.ISR, p.Replicas)
		}
	}
	if !slices.Equal(p.ISR, isrInReplicaOrder(p.ISR, p.Replicas)) {
		return fmt.Errorf("%w: isr %v not in the order of replicas %v", ErrInvalidReplicaAssignment, p.ISR, p.Replicas)
	}
	return validateReassignmentState(p)
}

// validateTopic checks every invariant of a Topic; used where topics enter from
// disk (snapshot restore).
func validateTopic(t *Topic) error {
	if err := validateTopicName(t.Name); err != nil {
		return err
	}
	if t.ID.IsZero() {
		return fmt.Errorf("%w: topic %q has a zero id", ErrInvalidCommand, t.Name)
	}
	if n := len(t.Partitions); n == 0 || n > maxPartitionsPerTopic {
		return fmt.Errorf("%w: topic %q has %d partitions", ErrInvalidPartitions, t.Name, n)
	}
	if err := validateConfigs(t.Configs); err != nil {
		return err
	}
	for i, p := range t.Partitions {
		if p.Index != int32(i) {
			return fmt.Errorf("%w: topic %q partition at %d has index %d", ErrInvalidPartitions, t.Name, i, p.Index)
		}
		if err := validateReplicas(p.Replicas); err != nil {
			return fmt.Errorf("topic %q partition %d: %w", t.Name, i, err)
		}
		if err := validatePartitionState(p); err != nil {
			return fmt.Errorf("topic %q partition %d: %w", t.Name, i, err)
		}
	}
	return nil
}
