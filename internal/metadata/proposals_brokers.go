package metadata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// BrokerRegistration is what a broker process registers at start (Kafka's
// BrokerRegistrationRequest).
type BrokerRegistration struct {
	ID int32
	// Incarnation is drawn once per process start: the same value again is
	// a retry, a new one replaces (and first fences) the old registration.
	Incarnation [16]byte
	// LogDir identifies the broker's log directory (zero: unknown). A new
	// one for a registered id means the broker lost its logs: it leaves
	// the ISRs it was the last member of (applyRegisterBroker).
	LogDir    [16]byte
	Endpoints []Endpoint
	Rack      string
}

// RegisterBroker registers r and returns the registration as applied; its
// Epoch is the broker epoch that fences later changes. It starts fenced
// (UnfenceBroker lets it lead and join ISRs). It is refused with
// ErrInvalidBrokerRegistration for a bad id, endpoint or rack.
func (s *Store) RegisterBroker(ctx context.Context, r BrokerRegistration) (*Broker, error) {
	cmd := &registerBrokerCmd{ID: r.ID, Incarnation: r.Incarnation, LogDir: r.LogDir, Endpoints: slices.Clone(r.Endpoints), Rack: r.Rack}
	// What apply refuses whatever the image is never takes a log entry.
	if err := validateBroker(&Broker{ID: r.ID, Endpoints: cmd.Endpoints, Rack: r.Rack}); err != nil {
		return nil, err
	}
	img, err := s.propose(ctx, cmd)
	if err != nil {
		return nil, err
	}
	b, ok := img.Brokers[r.ID]
	if !ok || b.Incarnation != r.Incarnation {
		// Only a later registration of the same id can have replaced it.
		return nil, fmt.Errorf("%w: broker %d was registered again meanwhile", ErrStaleBrokerEpoch, r.ID)
	}
	return b, nil
}

// FenceBroker fences broker id's registration of epoch (ErrStaleBrokerEpoch
// for another incarnation's, ErrUnknownBroker for an unregistered id): it
// stops leading and leaves the ISRs it is not the last member of. Fencing a
// fenced broker is no change.
func (s *Store) FenceBroker(ctx context.Context, id int32, epoch int64) error {
	_, err := s.propose(ctx, &fenceBrokerCmd{ID: id, Epoch: epoch})
	return err
}

// UnregisterBroker removes broker id's registration (Kafka's
// UnregisterBroker): ErrUnknownBroker when none, ErrBrokerNotFenced while
// the broker runs. Its partitions keep naming it as a replica.
func (s *Store) UnregisterBroker(ctx context.Context, id int32) error {
	// A follower's image may not have the broker's fence (or its return)
	// yet: check against the controller's.
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	b, ok := s.Image().Brokers[id]
	if !ok {
		return fmt.Errorf("%w: broker %d is not registered", ErrUnknownBroker, id)
	}
	if !b.Fenced {
		return fmt.Errorf("%w: broker %d is running (unfenced); stop it first", ErrBrokerNotFenced, id)
	}
	if _, err := s.propose(ctx, &unregisterBrokerCmd{ID: id, Epoch: b.Epoch}); err != nil {
		return err
	}
	s.forgetMember(ctx, id)
	return nil
}

// forgetMemberTimeout bounds forgetMember's wait.
const forgetMemberTimeout = 10 * time.Second

// forgetMember takes an unregistered broker's node out of the Raft
// configuration if it is a non-voter there, so that the leader stops
// replicating to a node that is gone (it joins again if it comes back).
// Best effort: the unregistration stands either way; a voter stays, with
// a warning to remove it as a voter.
func (s *Store) forgetMember(ctx context.Context, id int32) {
	if !s.opts.clustered() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, forgetMemberTimeout)
	defer cancel()
	err := s.changeVoters(ctx, voterRequest{Op: voterForget, NodeID: id, TimeoutMs: forgetMemberTimeout.Milliseconds()})
	switch {
	case err == nil, errors.Is(err, ErrVoterNotFound):
	case errors.Is(err, ErrInvalidVoter):
		s.log.Warn("the unregistered broker's node is still a voter of the metadata quorum", "node", id, "err", err)
	default:
		s.log.Warn("the unregistered broker's node stays a member of the metadata quorum", "node", id, "err", err)
	}
}

// UnfenceBroker unfences broker id's registration of epoch (errors as
// FenceBroker): partitions without a leader whose ISR holds it elect it.
func (s *Store) UnfenceBroker(ctx context.Context, id int32, epoch int64) error {
	_, err := s.propose(ctx, &unfenceBrokerCmd{ID: id, Epoch: epoch})
	return err
}

// ISRChange is a partition leader's request to change its ISR (Kafka's
// AlterPartition), stamped with the state it was planned against.
type ISRChange struct {
	TopicID        base.TopicID
	Partition      int32
	Leader         int32
	BrokerEpoch    int64
	LeaderEpoch    base.Epoch
	PartitionEpoch int32
	ISR            []int32
}

// AlterPartition applies c and returns the partition as it then is. It is
// refused with ErrUnknownTopic/ErrInvalidPartitions for no such partition,
// ErrStaleBrokerEpoch for a replaced leader registration, ErrNotLeader when
// c.Leader does not lead it, ErrFencedLeaderEpoch and
// ErrInvalidUpdateVersion for a stale leader or partition epoch,
// ErrInvalidReplicaAssignment for an ISR without the leader or outside the
// replicas, and ErrIneligibleReplica for adding a fenced broker. An ISR
// equal to the current one is no change.
func (s *Store) AlterPartition(ctx context.Context, c ISRChange) (Partition, error) {
	img, err := s.propose(ctx, &alterPartitionCmd{
		TopicID: c.TopicID, Partition: c.Partition, Leader: c.Leader, BrokerEpoch: c.BrokerEpoch,
		LeaderEpoch: c.LeaderEpoch, PartitionEpoch: c.PartitionEpoch, ISR: slices.Clone(c.ISR),
	})
	if err != nil {
		return Partition{}, err
	}
	t, ok := img.TopicsByID[c.TopicID]
	if !ok || int(c.Partition) >= len(t.Partitions) {
		return Partition{}, fmt.Errorf("%w: topic id %x was deleted meanwhile", ErrUnknownTopic, c.TopicID)
	}
	return t.Partitions[c.Partition], nil
}
