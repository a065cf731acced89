package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// commandFormatV1 is the first byte of every encoded command: JSON of envelope.
// A new layout gets a new byte; old bytes stay decodable forever (they are in logs).
const commandFormatV1 byte = 1

// maxCommandBytes bounds one encoded command (a topic with the maximum number of
// partitions and configs fits comfortably).
const maxCommandBytes = 16 << 20

// command is one state change carried in the Raft log. Commands carry every
// decision the proposer made (ids, replica assignments), so that applying them
// is deterministic.
type command interface{ isCommand() }

// initClusterCmd sets the cluster id; only the first one is accepted.
type initClusterCmd struct {
	ClusterID string `json:"cluster_id"`
}

// controllerChangeCmd records that NodeID took office as Raft leader.
type controllerChangeCmd struct {
	NodeID int32 `json:"node_id"`
}

// createTopicCmd creates a topic with one replica list per partition; partition
// i gets Assignments[i], led by its first replica at epoch 0.
type createTopicCmd struct {
	Name        string            `json:"name"`
	ID          base.TopicID      `json:"id"`
	Assignments [][]int32         `json:"assignments"`
	Configs     map[string]string `json:"configs,omitempty"`
}

// deleteTopicCmd removes the topic Name, provided it still has id ID.
type deleteTopicCmd struct {
	Name string       `json:"name"`
	ID   base.TopicID `json:"id"`
}

// createPartitionsCmd grows topic Name (with id ID) to NewTotal partitions; the
// new partitions [current, NewTotal) get Assignments, planned by the proposer
// against a topic with NewTotal-len(Assignments) partitions. If the topic has a
// different count by apply time, the command is stale.
type createPartitionsCmd struct {
	Name        string       `json:"name"`
	ID          base.TopicID `json:"id"`
	NewTotal    int32        `json:"new_total"`
	Assignments [][]int32    `json:"assignments"`
}

// setTopicConfigsCmd replaces the whole config map of topic Name (with id ID).
type setTopicConfigsCmd struct {
	Name    string            `json:"name"`
	ID      base.TopicID      `json:"id"`
	Configs map[string]string `json:"configs"`
}

// setBrokerConfigsCmd replaces the whole map of dynamic broker configs of
// one resource: the cluster-wide default (Node nil), or broker *Node's own.
type setBrokerConfigsCmd struct {
	Node    *int32            `json:"node,omitempty"`
	Configs map[string]string `json:"configs"`
}

// setGroupConfigsCmd replaces the whole map of dynamic configs of consumer
// group Group (Kafka's GROUP config resource); empty removes them.
type setGroupConfigsCmd struct {
	Group   string            `json:"group"`
	Configs map[string]string `json:"configs"`
}

// setClientMetricsConfigsCmd replaces the whole map of configs of client
// metrics subscription Name (Kafka's CLIENT_METRICS config resource,
// KIP-714); empty removes them.
type setClientMetricsConfigsCmd struct {
	Name    string            `json:"name"`
	Configs map[string]string `json:"configs"`
}

// setFeatureCmd finalizes feature Name at Level (UpdateFeatures).
type setFeatureCmd struct {
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

// updateRemoteSegmentCmd records one remote segment copy attempt, written by
// the leader of the segment's partition at LeaderEpoch: a new attempt (which
// must be COPY_STARTED) or a state change of a known one (which must follow
// remotemeta.ValidTransition and change nothing else).
type updateRemoteSegmentCmd struct {
	Segment     wireSegment `json:"segment"`
	LeaderEpoch base.Epoch  `json:"leader_epoch"`
}

// finishRemoteTopicDeleteCmd forgets deleted topic ID once none of its
// remote segments is left.
type finishRemoteTopicDeleteCmd struct {
	ID base.TopicID `json:"id"`
}

// alterScramCredentialsCmd changes the SCRAM credentials of User, all or
// nothing: each of Upserts adds or replaces the credential of its
// mechanism, each of Deletions removes one the user has. No mechanism
// appears twice in one command.
type alterScramCredentialsCmd struct {
	User      string                `json:"user"`
	Upserts   []wireScramCredential `json:"upserts"`
	Deletions []string              `json:"deletions"`
}

// alterClientQuotasCmd changes the client quotas of each entity of
// Alterations, all or nothing (Kafka's ClientQuotaRecord, one per key).
// Entities are in compareQuotaEntities order and none appears twice.
type alterClientQuotasCmd struct {
	Alterations []wireQuotaAlteration `json:"alterations"`
}

// createAclsCmd stores Bindings, all or nothing (Kafka's
// AccessControlEntryRecord, one per binding); a binding already stored is
// no change.
type createAclsCmd struct {
	Bindings []wireAcl `json:"bindings"`
}

// deleteAclsCmd removes those of Bindings that are stored, resolved by the
// proposer from Kafka's filters; the others are ignored.
type deleteAclsCmd struct {
	Bindings []wireAcl `json:"bindings"`
}

// createDelegationTokenCmd stores a new delegation token (Kafka's
// DelegationTokenRecord); Token holds every invariant of DelegationToken,
// and its id is not in use.
type createDelegationTokenCmd struct {
	Token wireDelegationToken `json:"token"`
}

// renewDelegationTokenCmd renews token ID for Principal at NowMs (the
// proposer's clock) by RenewMs > 0 (resolved by the proposer from the
// request and the broker's default), as applyRenewDelegationToken decides.
type renewDelegationTokenCmd struct {
	ID        string `json:"id"`
	Principal string `json:"principal"`
	NowMs     int64  `json:"now_ms"`
	RenewMs   int64  `json:"renew_ms"`
}

// expireDelegationTokenCmd expires token ID for Principal at NowMs: at
// once (PeriodMs < 0, the token leaves the image) or PeriodMs from NowMs,
// as applyExpireDelegationToken decides.
type expireDelegationTokenCmd struct {
	ID        string `json:"id"`
	Principal string `json:"principal"`
	NowMs     int64  `json:"now_ms"`
	PeriodMs  int64  `json:"period_ms"`
}

// removeExpiredDelegationTokensCmd removes every token expired at NowMs
// (Kafka's expired-token remover, one RemoveDelegationTokenRecord each).
type removeExpiredDelegationTokensCmd struct {
	NowMs int64 `json:"now_ms"`
}

func (*initClusterCmd) isCommand()      {}
func (*controllerChangeCmd) isCommand() {}
func (*createTopicCmd) isCommand()      {}
func (*deleteTopicCmd) isCommand()      {}
func (*createPartitionsCmd) isCommand() {}
func (*setTopicConfigsCmd) isCommand()  {}
func (*setBrokerConfigsCmd) isCommand() {}
func (*setGroupConfigsCmd) isCommand()  {}
func (*setFeatureCmd) isCommand()       {}

func (*setClientMetricsConfigsCmd) isCommand() {}

func (*updateRemoteSegmentCmd) isCommand()     {}
func (*finishRemoteTopicDeleteCmd) isCommand() {}

func (*alterScramCredentialsCmd) isCommand() {}

func (*alterClientQuotasCmd) isCommand() {}

func (*createAclsCmd) isCommand() {}
func (*deleteAclsCmd) isCommand() {}

func (*createDelegationTokenCmd) isCommand()         {}
func (*renewDelegationTokenCmd) isCommand()          {}
func (*expireDelegationTokenCmd) isCommand()         {}
func (*removeExpiredDelegationTokensCmd) isCommand() {}

// envelope is the v1 wire form: exactly one field is set.
type envelope struct {
	InitCluster      *initClusterCmd      `json:"init_cluster,omitempty"`
	ControllerChange *controllerChangeCmd `json:"controller_change,omitempty"`
	CreateTopic      *createTopicCmd      `json:"create_topic,omitempty"`
	DeleteTopic      *deleteTopicCmd      `json:"delete_topic,omitempty"`
	CreatePartitions *createPartitionsCmd `json:"create_partitions,omitempty"`
	SetTopicConfigs  *setTopicConfigsCmd  `json:"set_topic_configs,omitempty"`
	SetBrokerConfigs *setBrokerConfigsCmd `json:"set_broker_configs,omitempty"`
	SetGroupConfigs  *setGroupConfigsCmd  `json:"set_group_configs,omitempty"`
	SetFeature       *setFeatureCmd       `json:"set_feature,omitempty"`

	SetClientMetricsConfigs *setClientMetricsConfigsCmd `json:"set_client_metrics_configs,omitempty"`

	UpdateRemoteSegment     *updateRemoteSegmentCmd     `json:"update_remote_segment,omitempty"`
	FinishRemoteTopicDelete *finishRemoteTopicDeleteCmd `json:"finish_remote_topic_delete,omitempty"`

	AlterScramCredentials *alterScramCredentialsCmd `json:"alter_scram_credentials,omitempty"`

	AlterClientQuotas *alterClientQuotasCmd `json:"alter_client_quotas,omitempty"`

	CreateAcls *createAclsCmd `json:"create_acls,omitempty"`
	DeleteAcls *deleteAclsCmd `json:"delete_acls,omitempty"`

	RegisterBroker   *registerBrokerCmd   `json:"register_broker,omitempty"`
	FenceBroker      *fenceBrokerCmd      `json:"fence_broker,omitempty"`
	UnfenceBroker    *unfenceBrokerCmd    `json:"unfence_broker,omitempty"`
	UnregisterBroker *unregisterBrokerCmd `json:"unregister_broker,omitempty"`
	AlterPartition   *alterPartitionCmd   `json:"alter_partition,omitempty"`

	AllocateProducerIDs *allocateProducerIDsCmd `json:"allocate_producer_ids,omitempty"`

	ElectPreferred *electPreferredCmd `json:"elect_preferred,omitempty"`
	ElectUnclean   *electUncleanCmd   `json:"elect_unclean,omitempty"`

	ReassignPartition *reassignPartitionCmd `json:"reassign_partition,omitempty"`

	ClaimTierStore *claimTierStoreCmd `json:"claim_tier_store,omitempty"`

	CreateDelegationToken         *createDelegationTokenCmd         `json:"create_delegation_token,omitempty"`
	RenewDelegationToken          *renewDelegationTokenCmd          `json:"renew_delegation_token,omitempty"`
	ExpireDelegationToken         *expireDelegationTokenCmd         `json:"expire_delegation_token,omitempty"`
	RemoveExpiredDelegationTokens *removeExpiredDelegationTokensCmd `json:"remove_expired_delegation_tokens,omitempty"`
}

func (e *envelope) command() (command, error) {
	var found []command
	add := func(set bool, c command) {
		if set {
			found = append(found, c)
		}
	}
	add(e.InitCluster != nil, e.InitCluster)
	add(e.ControllerChange != nil, e.ControllerChange)
	add(e.CreateTopic != nil, e.CreateTopic)
	add(e.DeleteTopic != nil, e.DeleteTopic)
	add(e.CreatePartitions != nil, e.CreatePartitions)
	add(e.SetTopicConfigs != nil, e.SetTopicConfigs)
	add(e.SetBrokerConfigs != nil, e.SetBrokerConfigs)
	add(e.SetGroupConfigs != nil, e.SetGroupConfigs)
	add(e.SetFeature != nil, e.SetFeature)
	add(e.SetClientMetricsConfigs != nil, e.SetClientMetricsConfigs)
	add(e.UpdateRemoteSegment != nil, e.UpdateRemoteSegment)
	add(e.FinishRemoteTopicDelete != nil, e.FinishRemoteTopicDelete)
	add(e.AlterScramCredentials != nil, e.AlterScramCredentials)
	add(e.AlterClientQuotas != nil, e.AlterClientQuotas)
	add(e.CreateAcls != nil, e.CreateAcls)
	add(e.DeleteAcls != nil, e.DeleteAcls)
	add(e.RegisterBroker != nil, e.RegisterBroker)
	add(e.FenceBroker != nil, e.FenceBroker)
	add(e.UnfenceBroker != nil, e.UnfenceBroker)
	add(e.UnregisterBroker != nil, e.UnregisterBroker)
	add(e.AlterPartition != nil, e.AlterPartition)
	add(e.AllocateProducerIDs != nil, e.AllocateProducerIDs)
	add(e.ElectPreferred != nil, e.ElectPreferred)
	add(e.ElectUnclean != nil, e.ElectUnclean)
	add(e.ReassignPartition != nil, e.ReassignPartition)
	add(e.ClaimTierStore != nil, e.ClaimTierStore)
	add(e.CreateDelegationToken != nil, e.CreateDelegationToken)
	add(e.RenewDelegationToken != nil, e.RenewDelegationToken)
	add(e.ExpireDelegationToken != nil, e.ExpireDelegationToken)
	add(e.RemoveExpiredDelegationTokens != nil, e.RemoveExpiredDelegationTokens)
	if len(found) != 1 {
		return nil, fmt.Errorf("%w: envelope holds %d commands, want 1", ErrInvalidCommand, len(found))
	}
	return found[0], nil
}

func encodeCommand(c command) ([]byte, error) {
	var e envelope
	switch c := c.(type) {
	case *initClusterCmd:
		e.InitCluster = c
	case *controllerChangeCmd:
		e.ControllerChange = c
	case *createTopicCmd:
		e.CreateTopic = c
	case *deleteTopicCmd:
		e.DeleteTopic = c
	case *createPartitionsCmd:
		e.CreatePartitions = c
	case *setTopicConfigsCmd:
		e.SetTopicConfigs = c
	case *setBrokerConfigsCmd:
		e.SetBrokerConfigs = c
	case *setGroupConfigsCmd:
		e.SetGroupConfigs = c
	case *setFeatureCmd:
		e.SetFeature = c
	case *setClientMetricsConfigsCmd:
		e.SetClientMetricsConfigs = c
	case *updateRemoteSegmentCmd:
		e.UpdateRemoteSegment = c
	case *finishRemoteTopicDeleteCmd:
		e.FinishRemoteTopicDelete = c
	case *alterScramCredentialsCmd:
		e.AlterScramCredentials = c
	case *alterClientQuotasCmd:
		e.AlterClientQuotas = c
	case *createAclsCmd:
		e.CreateAcls = c
	case *deleteAclsCmd:
		e.DeleteAcls = c
	case *registerBrokerCmd:
		e.RegisterBroker = c
	case *fenceBrokerCmd:
		e.FenceBroker = c
	case *unfenceBrokerCmd:
		e.UnfenceBroker = c
	case *unregisterBrokerCmd:
		e.UnregisterBroker = c
	case *alterPartitionCmd:
		e.AlterPartition = c
	case *allocateProducerIDsCmd:
		e.AllocateProducerIDs = c
	case *electPreferredCmd:
		e.ElectPreferred = c
	case *electUncleanCmd:
		e.ElectUnclean = c
	case *reassignPartitionCmd:
		e.ReassignPartition = c
	case *claimTierStoreCmd:
		e.ClaimTierStore = c
	case *createDelegationTokenCmd:
		e.CreateDelegationToken = c
	case *renewDelegationTokenCmd:
		e.RenewDelegationToken = c
	case *expireDelegationTokenCmd:
		e.ExpireDelegationToken = c
	case *removeExpiredDelegationTokensCmd:
		e.RemoveExpiredDelegationTokens = c
	default:
		panic(fmt.Sprintf("metadata: encodeCommand: unknown command type %T", c))
	}
	body, err := json.Marshal(&e)
	if err != nil {
		return nil, fmt.Errorf("metadata: encode command: %w", err)
	}
	if len(body)+1 > maxCommandBytes {
		return nil, fmt.Errorf("%w: encoded command is %d bytes, at most %d", ErrInvalidCommand, len(body)+1, maxCommandBytes)
	}
	return append([]byte{commandFormatV1}, body...), nil
}

// decodeCommand is the gateway from the log: it checks the format byte and the
// shape of the envelope; the FSM then validates the content against the image.
func decodeCommand(data []byte) (command, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrInvalidCommand)
	}
	if len(data) > maxCommandBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidCommand, len(data), maxCommandBytes)
	}
	if data[0] != commandFormatV1 {
		return nil, fmt.Errorf("%w: unknown format byte %d", ErrInvalidCommand, data[0])
	}
	dec := json.NewDecoder(bytes.NewReader(data[1:]))
	// Unknown fields would mean a newer writer whose meaning we cannot apply.
	dec.DisallowUnknownFields()
	var e envelope
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidCommand, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrInvalidCommand)
	}
	return e.command()
}
