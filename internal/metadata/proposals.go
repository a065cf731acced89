package metadata

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// maxStaleRetries bounds how often a proposer replans a command that raced
// with another change to the same topic.
const maxStaleRetries = 8

// CreateTopic is a request to create a topic.
type CreateTopic struct {
	Name string
	// ID is the topic id; the zero value asks the Store to draw a random one.
	ID                base.TopicID
	Partitions        int32
	ReplicationFactor int16
	// Assignments, when set, are the replicas of each partition (Kafka's
	// manual replica assignment), in preference order; Partitions and
	// ReplicationFactor are then ignored. Apply refuses what it refuses
	// of any assignment (ErrInvalidReplicaAssignment).
	Assignments [][]int32
	Configs     map[string]string
}

// CreateTopic creates a topic and returns it as applied. Its partitions are
// spread over the unfenced brokers (assignReplicas), unless req names
// their replicas, each led by its first in-sync replica at epoch 0.
func (s *Store) CreateTopic(ctx context.Context, req CreateTopic) (*Topic, error) {
	assignments := req.Assignments
	if len(assignments) == 0 {
		if req.Partitions < 1 || req.Partitions > maxPartitionsPerTopic {
			return nil, fmt.Errorf("%w: %d partitions for %q, want 1..%d", ErrInvalidPartitions, req.Partitions, req.Name, maxPartitionsPerTopic)
		}
		var err error
		if assignments, err = s.assignReplicas(0, int(req.Partitions), req.ReplicationFactor); err != nil {
			return nil, fmt.Errorf("topic %q: %w", req.Name, err)
		}
	}
	id := req.ID
	if id.IsZero() {
		id = newTopicID() // drawn here, never in the FSM: apply must be deterministic
	}
	img, err := s.propose(ctx, &createTopicCmd{Name: req.Name, ID: id, Assignments: assignments, Configs: req.Configs})
	if err != nil {
		return nil, err
	}
	t, ok := img.Topics[req.Name]
	if !ok || t.ID != id {
		// Only on a follower, whose image may already hold later changes.
		return nil, fmt.Errorf("%w: %q was deleted right after it was created", ErrUnknownTopic, req.Name)
	}
	return t, nil
}

// DeleteTopic deletes a topic.
func (s *Store) DeleteTopic(ctx context.Context, name string) error {
	t, err := s.topic(name)
	if err != nil {
		return err
	}
	_, err = s.propose(ctx, &deleteTopicCmd{Name: name, ID: t.ID})
	return err
}

// CreatePartitions grows a topic to newTotal partitions; newTotal must exceed
// the current count (ErrInvalidPartitions otherwise). The new partitions
// get assignments, one replica list each (Kafka's manual assignment,
// checked as CreateTopic's), or with nil the topic's replication factor,
// spread as CreateTopic spreads them.
func (s *Store) CreatePartitions(ctx context.Context, name string, newTotal int32, assignments [][]int32) error {
	for range maxStaleRetries {
		t, err := s.topic(name)
		if err != nil {
			return err
		}
		current := int32(len(t.Partitions))
		if newTotal <= current || newTotal > maxPartitionsPerTopic {
			return fmt.Errorf("%w: topic %q has %d partitions, cannot grow to %d (at most %d)",
				ErrInvalidPartitions, name, current, newTotal, maxPartitionsPerTopic)
		}
		planned := assignments
		if planned == nil {
			if planned, err = s.assignReplicas(int(current), int(newTotal-current), int16(len(t.Partitions[0].TargetReplicas()))); err != nil {
				return fmt.Errorf("topic %q: %w", name, err)
			}
		} else if len(planned) != int(newTotal-current) {
			return fmt.Errorf("%w: %d assignments for the %d new partitions of %q", ErrInvalidReplicaAssignment, len(planned), newTotal-current, name)
		}
		_, err = s.propose(ctx, &createPartitionsCmd{Name: name, ID: t.ID, NewTotal: newTotal, Assignments: planned})
		if !errors.Is(err, errStaleProposal) {
			return err
		}
		if assignments != nil {
			// They were given for partitions another change created.
			return fmt.Errorf("%w: topic %q grew meanwhile; ask again", ErrInvalidPartitions, name)
		}
	}
	return fmt.Errorf("%w: topic %q kept changing while adding partitions", ErrInvalidPartitions, name)
}

// SetTopicConfigs replaces a topic's whole config map.
func (s *Store) SetTopicConfigs(ctx context.Context, name string, configs map[string]string) error {
	t, err := s.topic(name)
	if err != nil {
		return err
	}
	_, err = s.propose(ctx, &setTopicConfigsCmd{Name: name, ID: t.ID, Configs: configs})
	return err
}

// SetBrokerConfigs replaces the whole map of dynamic cluster-wide broker configs.
func (s *Store) SetBrokerConfigs(ctx context.Context, configs map[string]string) error {
	_, err := s.propose(ctx, &setBrokerConfigsCmd{Configs: configs})
	return err
}

// SetGroupConfigs replaces the whole map of dynamic configs of consumer
// group group; an empty map removes them.
func (s *Store) SetGroupConfigs(ctx context.Context, group string, configs map[string]string) error {
	_, err := s.propose(ctx, &setGroupConfigsCmd{Group: group, Configs: configs})
	return err
}

// SetClientMetricsConfigs replaces the whole map of configs of client
// metrics subscription name (Kafka's CLIENT_METRICS config resource,
// KIP-714); an empty map removes them.
func (s *Store) SetClientMetricsConfigs(ctx context.Context, name string, configs map[string]string) error {
	_, err := s.propose(ctx, &setClientMetricsConfigsCmd{Name: name, Configs: configs})
	return err
}

// SetFeature finalizes feature name at level (UpdateFeatures); the
// caller checked the change is allowed (FeatureLevels).
func (s *Store) SetFeature(ctx context.Context, name string, level int16) error {
	_, err := s.propose(ctx, &setFeatureCmd{Name: name, Level: level})
	return err
}

// SetNodeConfigs replaces the whole map of dynamic configs of broker node
// (an empty map removes them).
func (s *Store) SetNodeConfigs(ctx context.Context, node int32, configs map[string]string) error {
	_, err := s.propose(ctx, &setBrokerConfigsCmd{Node: &node, Configs: configs})
	return err
}

// UpdateRemoteSegment records a remote segment copy attempt, as the leader of
// seg.TP at leaderEpoch: a new attempt (seg.State COPY_STARTED, a fresh id, a
// live topic) or a state change of a known one (the same attempt, one step of
// remotemeta.ValidTransition). It is refused with ErrFencedLeaderEpoch when
// leaderEpoch is below the partition's, ErrUnknownTopic or
// ErrInvalidPartitions when seg names no such partition, ErrUnknownRemoteSegment
// for an unknown id that is not COPY_STARTED, and a *remotemeta.TransitionError
// (errors.Is remotemeta.ErrInvalidTransition) for a step the table forbids.
//
// Segments of a deleted topic can still change state until its remote delete
// is finished. A DELETE_FINISHED segment leaves the image. After an unknown
// outcome (ctx ended) a retry may find its own update applied: a
// *remotemeta.TransitionError with From equal to the target state, or
// ErrUnknownRemoteSegment for a DELETE_FINISHED; read the image to tell.
func (s *Store) UpdateRemoteSegment(ctx context.Context, seg remotemeta.RemoteSegment, leaderEpoch base.Epoch) error {
	if err := seg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidCommand, err)
	}
	_, err := s.propose(ctx, &updateRemoteSegmentCmd{Segment: toWireSegment(seg), LeaderEpoch: leaderEpoch})
	return err
}

// FinishRemoteTopicDelete forgets deleted topic topicID once every one of its
// remote segments is DELETE_FINISHED (ErrRemoteSegmentsRemain otherwise;
// ErrUnknownTopic when no remote delete is pending for it).
func (s *Store) FinishRemoteTopicDelete(ctx context.Context, topicID base.TopicID) error {
	_, err := s.propose(ctx, &finishRemoteTopicDeleteCmd{ID: topicID})
	return err
}

// AlterScramCredentials changes user's SCRAM credentials, all or nothing:
// upserts add or replace the credential of each mechanism (ScramSHA256,
// ScramSHA512), deletions remove credentials the user has. A user left with
// none is forgotten. It is refused with ErrInvalidScramCredential (a bad user
// name or credential, or nothing to change), ErrUnsupportedScramMechanism,
// ErrDuplicateScramMechanism (a mechanism named twice, in either list or
// both) and ErrScramCredentialNotFound (a deletion the user has no
// credential for). The image keeps copies: the caller's slices stay the
// caller's. After an unknown outcome (ctx ended) a retried deletion may find
// its own change applied (ErrScramCredentialNotFound); an upsert is
// idempotent.
func (s *Store) AlterScramCredentials(ctx context.Context, user string, upserts map[string]ScramCredential, deletions []string) error {
	cmd := newAlterScramCmd(user, upserts, deletions)
	// What apply refuses whatever the image is never takes a log entry.
	if err := validateAlterScram(cmd); err != nil {
		return err
	}
	_, err := s.propose(ctx, cmd)
	return err
}

// AlterClientQuotas applies alts in one command, all or nothing (Kafka's
// AlterClientQuotas, KIP-546): for each entity, Set adds or replaces the
// value of each key, Remove drops keys (one the entity does not have is
// no change, as in Kafka). An entity left with no key leaves the image.
// It is refused with ErrInvalidClientQuota (see there) before anything
// is proposed, and with ErrInvalidCommand when its command would exceed
// the bound of one log entry. The image keeps copies: the caller's maps stay the
// caller's. Setting and removing are idempotent, so a retry after an
// unknown outcome (ctx ended) is safe.
func (s *Store) AlterClientQuotas(ctx context.Context, alts []ClientQuotaAlteration) error {
	cmd := newAlterClientQuotasCmd(alts)
	// What apply refuses whatever the image is never takes a log entry.
	if _, err := validateAlterClientQuotas(cmd); err != nil {
		return err
	}
	_, err := s.propose(ctx, cmd)
	return err
}

// CreateAcls stores bindings (Kafka's CreateAcls), all or nothing; a
// binding already stored, or named twice, is stored once. It is refused
// with ErrInvalidAcl when a binding fails acl.Binding.Validate or holds a
// string that is not UTF-8, or when there are none or more than
// MaxAclsPerCommand. The image keeps copies. Creating is idempotent, so a
// retry after an unknown outcome (ctx ended) is safe.
func (s *Store) CreateAcls(ctx context.Context, bindings []acl.Binding) error {
	cmd := &createAclsCmd{Bindings: toWireAcls(bindings)}
	// What apply refuses whatever the image is never takes a log entry.
	if err := validateCreateAcls(cmd); err != nil {
		return err
	}
	_, err := s.propose(ctx, cmd)
	return err
}

// DeleteAcls removes those of bindings that are stored (Kafka's DeleteAcls,
// once the caller has resolved its filters against an image) and ignores
// the others, so a binding deleted meanwhile, or a retry after an unknown
// outcome, is harmless. No binding is no change and takes no log entry.
// It is refused with ErrInvalidAcl when a binding holds a string that is
// not UTF-8 or there are more than MaxAclsPerCommand.
func (s *Store) DeleteAcls(ctx context.Context, bindings []acl.Binding) error {
	if len(bindings) == 0 {
		return nil
	}
	cmd := &deleteAclsCmd{Bindings: toWireAcls(bindings)}
	if err := validateDeleteAcls(cmd); err != nil {
		return err
	}
	_, err := s.propose(ctx, cmd)
	return err
}

func (s *Store) topic(name string) (*Topic, error) {
	t, ok := s.Image().Topics[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTopic, name)
	}
	return t, nil
}

// assignReplicas plans the replica lists of n new partitions numbered from
// first: striped over the unfenced registered brokers (stripedAssignment),
// or over this node alone while no broker has registered (a single node).
func (s *Store) assignReplicas(first, n int, replicationFactor int16) ([][]int32, error) {
	brokers := s.Image().UnfencedBrokers()
	if len(s.Image().Brokers) == 0 {
		brokers = []int32{s.opts.NodeID}
	}
	if len(brokers) == 0 {
		return nil, fmt.Errorf("%w: %d with no unfenced broker", ErrInvalidReplicationFactor, replicationFactor)
	}
	// Drawn here, never in the FSM: apply must be deterministic.
	start, shift := rand.IntN(len(brokers)), rand.IntN(len(brokers))
	return stripedAssignment(brokers, first, n, replicationFactor, start, shift)
}
