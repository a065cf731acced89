package metadata

import (
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// registerBrokerCmd registers a broker incarnation (Kafka's
// BrokerRegistrationRecord). A known incarnation again is a retry and
// changes nothing; a new incarnation of a known id replaces the old one,
// which is fenced first (the new process may have lost the old one's log).
// A new incarnation with another known LogDir than the old one's did lose
// its logs: the partitions whose only in-sync replica it was lose that
// member too (partitionAfterLogLoss). The new registration starts fenced.
type registerBrokerCmd struct {
	ID          int32      `json:"id"`
	Incarnation [16]byte   `json:"incarnation"`
	LogDir      [16]byte   `json:"log_dir,omitzero"`
	Endpoints   []Endpoint `json:"endpoints"`
	Rack        string     `json:"rack,omitempty"`
}

// fenceBrokerCmd fences broker ID's registration of epoch Epoch (Kafka's
// FenceBrokerRecord): it stops leading, and leaves every ISR it is not the
// last member of.
type fenceBrokerCmd struct {
	ID    int32 `json:"id"`
	Epoch int64 `json:"epoch"`
}

// unfenceBrokerCmd unfences broker ID's registration of epoch Epoch
// (Kafka's UnfenceBrokerRecord): partitions left without a leader whose ISR
// holds it elect it.
type unfenceBrokerCmd struct {
	ID    int32 `json:"id"`
	Epoch int64 `json:"epoch"`
}

// alterPartitionCmd is a partition leader's ISR change (Kafka's
// AlterPartition), fenced by the leader's broker epoch, leader epoch and
// partition epoch.
type alterPartitionCmd struct {
	TopicID        base.TopicID `json:"topic_id"`
	Partition      int32        `json:"partition"`
	Leader         int32        `json:"leader"`
	BrokerEpoch    int64        `json:"broker_epoch"`
	LeaderEpoch    base.Epoch   `json:"leader_epoch"`
	PartitionEpoch int32        `json:"partition_epoch"`
	ISR            []int32      `json:"isr"`
}

// unregisterBrokerCmd removes broker ID's registration of epoch Epoch
// (Kafka's UnregisterBrokerRecord, what `kafka-cluster unregister` asks
// for a decommissioned broker). Only a fenced registration is removed: a
// running broker would lose its place under its feet. The partitions that
// name the broker keep it as a replica (an offline one), and as the ISR
// member of those it was the last of, as a fence leaves them.
type unregisterBrokerCmd struct {
	ID    int32 `json:"id"`
	Epoch int64 `json:"epoch"`
}

func (*unregisterBrokerCmd) isCommand() {}

func (*registerBrokerCmd) isCommand() {}
func (*fenceBrokerCmd) isCommand()    {}
func (*unfenceBrokerCmd) isCommand()  {}
func (*alterPartitionCmd) isCommand() {}

func applyRegisterBroker(img *Image, c *registerBrokerCmd, index uint64) (*Image, error) {
	b := &Broker{ID: c.ID, Incarnation: c.Incarnation, LogDir: c.LogDir, Epoch: int64(index),
		Endpoints: slices.Clone(c.Endpoints), Rack: c.Rack, Fenced: true}
	if err := validateBroker(b); err != nil {
		return nil, err
	}
	next := img
	if old, ok := img.Brokers[c.ID]; ok {
		if old.Incarnation == c.Incarnation {
			return img.with(index), nil // a retry: the registration stands
		}
		if !old.Fenced {
			next = fenceBroker(img, old, index)
		}
		b.LostLogs = lostLogs(old.LogDir, c.LogDir) || old.LostLogs && old.LogDir == c.LogDir
		if lostLogs(old.LogDir, c.LogDir) {
			if next == img {
				next = img.with(index)
			}
			next = withPartitionChanges(next, index, func(p Partition) (Partition, bool) {
				return partitionAfterLogLoss(p, c.ID)
			})
		}
	}
	return next.withBroker(b, index), nil
}

// lostLogs reports whether a broker that registered with log directory old
// and registers again with now lost its logs: both known, and different.
func lostLogs(old, now [16]byte) bool {
	var unknown [16]byte
	return old != unknown && now != unknown && old != now
}

func applyUnregisterBroker(img *Image, c *unregisterBrokerCmd, index uint64) (*Image, error) {
	b, err := registration(img, c.ID, c.Epoch)
	if err != nil {
		return nil, err
	}
	if !b.Fenced {
		return nil, fmt.Errorf("%w: broker %d is running (unfenced); stop it first", ErrBrokerNotFenced, c.ID)
	}
	next := img.with(index)
	next.Brokers = copyMap(img.Brokers, 0)
	delete(next.Brokers, c.ID)
	return next, nil
}

func applyFenceBroker(img *Image, c *fenceBrokerCmd, index uint64) (*Image, error) {
	b, err := registration(img, c.ID, c.Epoch)
	if err != nil {
		return nil, err
	}
	if b.Fenced {
		return img.with(index), nil
	}
	return fenceBroker(img, b, index), nil
}

func applyUnfenceBroker(img *Image, c *unfenceBrokerCmd, index uint64) (*Image, error) {
	b, err := registration(img, c.ID, c.Epoch)
	if err != nil {
		return nil, err
	}
	if !b.Fenced {
		return img.with(index), nil
	}
	unfenced := *b
	unfenced.Fenced = false
	next := img.withBroker(&unfenced, index)
	return withPartitionChanges(next, index, func(p Partition) (Partition, bool) {
		return partitionAfterUnfence(p, b.ID, next.Eligible)
	}), nil
}

// fenceBroker marks b fenced in img's successor and applies
// partitionAfterFence to every partition.
func fenceBroker(img *Image, b *Broker, index uint64) *Image {
	fenced := *b
	fenced.Fenced = true
	next := img.withBroker(&fenced, index)
	return withPartitionChanges(next, index, func(p Partition) (Partition, bool) {
		return partitionAfterFence(p, b.ID, next.Eligible)
	})
}

// registration finds broker id's registration of epoch; ErrStaleBrokerEpoch
// when it is another incarnation's.
func registration(img *Image, id int32, epoch int64) (*Broker, error) {
	b, ok := img.Brokers[id]
	if !ok {
		return nil, fmt.Errorf("%w: broker %d", ErrUnknownBroker, id)
	}
	if b.Epoch != epoch {
		return nil, fmt.Errorf("%w: broker %d has epoch %d, not %d", ErrStaleBrokerEpoch, id, b.Epoch, epoch)
	}
	return b, nil
}

// withPartitionChanges applies change to every partition of img (which
// must already be a fresh successor stamped with index), copying the topic
// maps once and the topics it changes.
func withPartitionChanges(img *Image, index uint64, change func(Partition) (Partition, bool)) *Image {
	var changed []*Topic
	for _, t := range img.Topics {
		var parts []Partition
		for i, p := range t.Partitions {
			np, ok := change(p)
			if !ok {
				continue
			}
			if parts == nil {
				parts = slices.Clone(t.Partitions)
			}
			parts[i] = np
		}
		if parts != nil {
			grown := *t
			grown.Partitions = parts
			changed = append(changed, &grown)
		}
	}
	if len(changed) == 0 {
		return img
	}
	next := img.with(index)
	next.Topics = copyMap(img.Topics, 0)
	next.TopicsByID = copyMap(img.TopicsByID, 0)
	for _, t := range changed {
		next.Topics[t.Name] = t
		next.TopicsByID[t.ID] = t
	}
	return next
}

func applyAlterPartition(img *Image, c *alterPartitionCmd, index uint64) (*Image, error) {
	t, p, err := lookupPartitionByID(img, c.TopicID, c.Partition)
	if err != nil {
		return nil, err
	}
	tp := base.TopicPartition{Topic: t.Name, Partition: c.Partition}
	if c.Leader < 0 {
		return nil, fmt.Errorf("%w: %s: leader %d", ErrNotLeader, tp, c.Leader)
	}
	if len(img.Brokers) > 0 {
		if _, err := registration(img, c.Leader, c.BrokerEpoch); err != nil {
			return nil, err
		}
	}
	switch {
	case c.Leader != p.Leader:
		return nil, fmt.Errorf("%w: %s is led by %d, not %d", ErrNotLeader, tp, p.Leader, c.Leader)
	case c.LeaderEpoch != p.LeaderEpoch:
		return nil, fmt.Errorf("%w: %s is at leader epoch %d, not %d", ErrFencedLeaderEpoch, tp, p.LeaderEpoch, c.LeaderEpoch)
	case c.PartitionEpoch != p.PartitionEpoch:
		return nil, fmt.Errorf("%w: %s is at partition epoch %d, not %d", ErrInvalidUpdateVersion, tp, p.PartitionEpoch, c.PartitionEpoch)
	}
	isr := isrInReplicaOrder(c.ISR, p.Replicas)
	proposed := p
	proposed.ISR = isr
	if err := validatePartitionState(proposed); err != nil {
		return nil, fmt.Errorf("%s: %w", tp, err)
	}
	for _, r := range isr {
		if !slices.Contains(p.ISR, r) && !img.Eligible(r) {
			return nil, fmt.Errorf("%w: broker %d cannot join the ISR of %s", ErrIneligibleReplica, r, tp)
		}
	}
	// The ISR change that leaves every adding replica in sync completes
	// the reassignment in flight, in the same partition change (Kafka's
	// AlterPartition handling).
	changed, ok := partitionAfterISRChange(p, isr, img.Eligible)
	if !ok {
		return img.with(index), nil
	}
	parts := slices.Clone(t.Partitions)
	parts[c.Partition] = changed
	grown := *t
	grown.Partitions = parts
	return img.withTopic(&grown, index), nil
}
