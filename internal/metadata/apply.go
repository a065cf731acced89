package metadata

import (
	"fmt"
	"slices"
)

// applyCommand is the pure state transition of the metadata FSM: it validates
// cmd against img and returns the next image, stamped with index, or an error
// and no image. It never mutates img, does no I/O and draws no randomness, so
// every replica computes the same result from the same log.
func applyCommand(img *Image, cmd command, index uint64) (*Image, error) {
	switch c := cmd.(type) {
	case *initClusterCmd:
		return applyInitCluster(img, c, index)
	case *controllerChangeCmd:
		return applyControllerChange(img, c, index)
	case *createTopicCmd:
		return applyCreateTopic(img, c, index)
	case *deleteTopicCmd:
		return applyDeleteTopic(img, c, index)
	case *createPartitionsCmd:
		return applyCreatePartitions(img, c, index)
	case *setTopicConfigsCmd:
		return applySetTopicConfigs(img, c, index)
	case *setBrokerConfigsCmd:
		return applySetBrokerConfigs(img, c, index)
	case *setGroupConfigsCmd:
		return applySetGroupConfigs(img, c, index)
	case *setClientMetricsConfigsCmd:
		return applySetClientMetricsConfigs(img, c, index)
	case *setFeatureCmd:
		if err := validFeatureLevel(c.Name, c.Level); err != nil {
			return nil, err
		}
		next := img.with(index)
		next.Features = copyMap(img.Features, 1)
		next.Features[c.Name] = c.Level
		next.FeaturesVersion = index
		return next, nil
	case *updateRemoteSegmentCmd:
		return applyUpdateRemoteSegment(img, c, index)
	case *finishRemoteTopicDeleteCmd:
		return applyFinishRemoteTopicDelete(img, c, index)
	case *alterScramCredentialsCmd:
		return applyAlterScramCredentials(img, c, index)
	case *alterClientQuotasCmd:
		return applyAlterClientQuotas(img, c, index)
	case *createAclsCmd:
		return applyCreateAcls(img, c, index)
	case *deleteAclsCmd:
		return applyDeleteAcls(img, c, index)
	case *registerBrokerCmd:
		return applyRegisterBroker(img, c, index)
	case *fenceBrokerCmd:
		return applyFenceBroker(img, c, index)
	case *unfenceBrokerCmd:
		return applyUnfenceBroker(img, c, index)
	case *unregisterBrokerCmd:
		return applyUnregisterBroker(img, c, index)
	case *alterPartitionCmd:
		return applyAlterPartition(img, c, index)
	case *allocateProducerIDsCmd:
		return applyAllocateProducerIDs(img, c, index)
	case *electPreferredCmd:
		return applyElectPreferred(img, c, index)
	case *electUncleanCmd:
		return applyElectUnclean(img, c, index)
	case *reassignPartitionCmd:
		return applyReassignPartition(img, c, index)
	case *claimTierStoreCmd:
		return applyClaimTierStore(img, c, index)
	case *createDelegationTokenCmd:
		return applyCreateDelegationToken(img, c, index)
	case *renewDelegationTokenCmd:
		return applyRenewDelegationToken(img, c, index)
	case *expireDelegationTokenCmd:
		return applyExpireDelegationToken(img, c, index)
	case *removeExpiredDelegationTokensCmd:
		return applyRemoveExpiredDelegationTokens(img, c, index)
	default:
		return nil, fmt.Errorf("%w: unknown command type %T", ErrInvalidCommand, cmd)
	}
}

func applyInitCluster(img *Image, c *initClusterCmd, index uint64) (*Image, error) {
	if img.ClusterID != "" {
		return nil, fmt.Errorf("%w: %q", ErrClusterInitialized, img.ClusterID)
	}
	if err := validateClusterID(c.ClusterID); err != nil {
		return nil, err
	}
	next := img.with(index)
	next.ClusterID = c.ClusterID
	return next, nil
}

func applyControllerChange(img *Image, c *controllerChangeCmd, index uint64) (*Image, error) {
	if c.NodeID < 0 {
		return nil, fmt.Errorf("%w: controller node id %d", ErrInvalidCommand, c.NodeID)
	}
	next := img.with(index)
	next.ControllerID = c.NodeID
	return next, nil
}

func applyCreateTopic(img *Image, c *createTopicCmd, index uint64) (*Image, error) {
	if err := validateTopicName(c.Name); err != nil {
		return nil, err
	}
	if _, ok := img.Topics[c.Name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrTopicExists, c.Name)
	}
	if c.ID.IsZero() {
		return nil, fmt.Errorf("%w: topic %q has a zero id", ErrInvalidCommand, c.Name)
	}
	if other, ok := img.TopicsByID[c.ID]; ok {
		return nil, fmt.Errorf("%w: id of %q is taken by %q", ErrTopicIDExists, c.Name, other.Name)
	}
	if other, ok := img.pendingDeletes[c.ID]; ok {
		// Object keys hold the topic id: reusing it would mix two topics' objects.
		return nil, fmt.Errorf("%w: id of %q is taken by deleted %q, whose remote data is not yet deleted",
			ErrTopicIDExists, c.Name, other.Name)
	}
	if n := len(c.Assignments); n == 0 || n > maxPartitionsPerTopic {
		return nil, fmt.Errorf("%w: %d partitions for %q, want 1..%d", ErrInvalidPartitions, n, c.Name, maxPartitionsPerTopic)
	}
	if err := validateConfigs(c.Configs); err != nil {
		return nil, err
	}
	partitions := make([]Partition, 0, len(c.Assignments))
	for i, replicas := range c.Assignments {
		p, err := newPartition(img, int32(i), replicas)
		if err != nil {
			return nil, fmt.Errorf("topic %q partition %d: %w", c.Name, i, err)
		}
		partitions = append(partitions, p)
	}
	t := &Topic{Name: c.Name, ID: c.ID, Partitions: partitions, Configs: cloneConfigs(c.Configs)}
	return img.withTopic(t, index), nil
}

// newPartition builds partition index of a new topic or a grown one from
// its replica list (initialPartition). Once brokers are registered, every
// replica must be one of them and one must be eligible.
func newPartition(img *Image, index int32, replicas []int32) (Partition, error) {
	if err := validateReplicas(replicas); err != nil {
		return Partition{}, err
	}
	if len(img.Brokers) > 0 {
		for _, r := range replicas {
			if _, ok := img.Brokers[r]; !ok {
				return Partition{}, fmt.Errorf("%w: replica %d is not a registered broker", ErrInvalidReplicaAssignment, r)
			}
		}
	}
	p, ok := initialPartition(index, replicas, img.Eligible)
	if !ok {
		return Partition{}, fmt.Errorf("%w: every replica of %v is fenced", ErrInvalidReplicaAssignment, replicas)
	}
	return p, nil
}

// lookupTopic finds topic name and checks it still has id; a mismatch means the
// topic the proposer saw was deleted (and perhaps re-created) meanwhile.
func lookupTopic(img *Image, name string, id [16]byte) (*Topic, error) {
	t, ok := img.Topics[name]
	if !ok || t.ID != id {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	return t, nil
}

// applyDeleteTopic removes the topic. Its remote segments, if it has any,
// stay in the image as a pending remote delete (fenced by the partitions'
// last leader epochs) until FinishRemoteTopicDelete: deleting the objects
// survives restarts and an unreachable bucket. A topic without remote
// segments has no objects (COPY_STARTED precedes every upload), so it
// leaves nothing pending.
func applyDeleteTopic(img *Image, c *deleteTopicCmd, index uint64) (*Image, error) {
	t, err := lookupTopic(img, c.Name, c.ID)
	if err != nil {
		return nil, err
	}
	next := img.withoutTopic(t, index)
	if len(img.remote[t.ID]) > 0 {
		next.pendingDeletes = copyMap(img.pendingDeletes, 1)
		next.pendingDeletes[t.ID] = &pendingDelete{Name: t.Name, Partitions: t.Partitions}
	}
	return next, nil
}

func applyCreatePartitions(img *Image, c *createPartitionsCmd, index uint64) (*Image, error) {
	t, err := lookupTopic(img, c.Name, c.ID)
	if err != nil {
		return nil, err
	}
	current := int32(len(t.Partitions))
	if c.NewTotal <= current || c.NewTotal > maxPartitionsPerTopic {
		return nil, fmt.Errorf("%w: topic %q has %d partitions, cannot grow to %d (at most %d)",
			ErrInvalidPartitions, c.Name, current, c.NewTotal, maxPartitionsPerTopic)
	}
	if int(c.NewTotal-current) != len(c.Assignments) {
		return nil, fmt.Errorf("%w: %d new assignments for %q growing %d→%d",
			errStaleProposal, len(c.Assignments), c.Name, current, c.NewTotal)
	}
	// A fresh slice: the old one's backing array belongs to the published image.
	partitions := make([]Partition, 0, c.NewTotal)
	partitions = append(partitions, t.Partitions...)
	for i, replicas := range c.Assignments {
		idx := current + int32(i)
		p, err := newPartition(img, idx, replicas)
		if err != nil {
			return nil, fmt.Errorf("topic %q partition %d: %w", c.Name, idx, err)
		}
		partitions = append(partitions, p)
	}
	grown := *t
	grown.Partitions = partitions
	return img.withTopic(&grown, index), nil
}

func applySetTopicConfigs(img *Image, c *setTopicConfigsCmd, index uint64) (*Image, error) {
	t, err := lookupTopic(img, c.Name, c.ID)
	if err != nil {
		return nil, err
	}
	if err := validateConfigs(c.Configs); err != nil {
		return nil, err
	}
	changed := *t
	changed.Configs = cloneConfigs(c.Configs)
	// Partitions are shared with the previous image: they are immutable.
	changed.Partitions = slices.Clip(t.Partitions)
	return img.withTopic(&changed, index), nil
}

func applySetGroupConfigs(img *Image, c *setGroupConfigsCmd, index uint64) (*Image, error) {
	if c.Group == "" {
		return nil, fmt.Errorf("%w: configs of a group without an id", ErrInvalidConfig)
	}
	if err := validateConfigs(c.Configs); err != nil {
		return nil, err
	}
	next := img.with(index)
	next.GroupConfigs = withNamedConfigs(img.GroupConfigs, c.Group, c.Configs)
	return next, nil
}

func applySetClientMetricsConfigs(img *Image, c *setClientMetricsConfigsCmd, index uint64) (*Image, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("%w: configs of a client metrics subscription without a name", ErrInvalidConfig)
	}
	if err := validateConfigs(c.Configs); err != nil {
		return nil, err
	}
	next := img.with(index)
	next.ClientMetricsConfigs = withNamedConfigs(img.ClientMetricsConfigs, c.Name, c.Configs)
	return next, nil
}

// withNamedConfigs is a copy of a map of configs by name (groups, client
// metrics subscriptions) with name's replaced by configs, or removed when
// configs is empty.
func withNamedConfigs(old map[string]map[string]string, name string, configs map[string]string) map[string]map[string]string {
	next := copyMap(old, 1)
	if len(configs) == 0 {
		delete(next, name)
	} else {
		next[name] = cloneConfigs(configs)
	}
	return next
}

func applySetBrokerConfigs(img *Image, c *setBrokerConfigsCmd, index uint64) (*Image, error) {
	if err := validateConfigs(c.Configs); err != nil {
		return nil, err
	}
	next := img.with(index)
	if c.Node == nil {
		next.BrokerConfigs = cloneConfigs(c.Configs)
		return next, nil
	}
	if *c.Node < 0 {
		return nil, fmt.Errorf("%w: dynamic configs of broker %d", ErrInvalidConfig, *c.Node)
	}
	next.NodeConfigs = copyMap(img.NodeConfigs, 1)
	if len(c.Configs) == 0 {
		delete(next.NodeConfigs, *c.Node)
	} else {
		next.NodeConfigs[*c.Node] = cloneConfigs(c.Configs)
	}
	return next, nil
}
