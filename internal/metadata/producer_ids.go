package metadata

import (
	"context"
	"fmt"
)

// ProducerIDBlockSize is how many producer ids one AllocateProducerIDs
// hands out (Kafka's ProducerIdsBlock size).
const ProducerIDBlockSize = 1000

// maxProducerIDBlockStart keeps every block's ids below 2^63.
const maxProducerIDBlockStart = 1<<63 - 1 - ProducerIDBlockSize

// allocateProducerIDsCmd hands broker BrokerID (of registration
// BrokerEpoch) the next block of producer ids (Kafka's
// ProducerIdsRecord): ids are unique across the cluster, never reused.
type allocateProducerIDsCmd struct {
	BrokerID    int32 `json:"broker_id"`
	BrokerEpoch int64 `json:"broker_epoch"`
}

func (*allocateProducerIDsCmd) isCommand() {}

func applyAllocateProducerIDs(img *Image, c *allocateProducerIDsCmd, index uint64) (*Image, error) {
	if _, err := registration(img, c.BrokerID, c.BrokerEpoch); err != nil {
		return nil, err
	}
	if img.NextProducerIDBlock > maxProducerIDBlockStart {
		return nil, fmt.Errorf("%w: producer ids exhausted", ErrInvalidCommand)
	}
	b := *img.Brokers[c.BrokerID]
	b.ProducerIDsEnd = img.NextProducerIDBlock + ProducerIDBlockSize
	next := img.withBroker(&b, index)
	next.NextProducerIDBlock = b.ProducerIDsEnd
	return next, nil
}

// AllocateProducerIDs returns the first id of a block of
// ProducerIDBlockSize producer ids that no other broker has or will get
// (Kafka's AllocateProducerIds), for broker brokerID's registration of
// brokerEpoch (ErrUnknownBroker, ErrStaleBrokerEpoch otherwise).
func (s *Store) AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (int64, error) {
	img, err := s.propose(ctx, &allocateProducerIDsCmd{BrokerID: brokerID, BrokerEpoch: brokerEpoch})
	if err != nil {
		return 0, err
	}
	// img may be later than the command (a follower's own image), but a
	// broker allocates one block at a time, so its latest block is this one.
	b, ok := img.Brokers[brokerID]
	if !ok || b.Epoch != brokerEpoch {
		return 0, fmt.Errorf("%w: broker %d was registered again meanwhile", ErrStaleBrokerEpoch, brokerID)
	}
	return b.ProducerIDsEnd - ProducerIDBlockSize, nil
}

// restoreProducerIDs checks a snapshot's next producer id block against
// the brokers' blocks, which must all lie below it.
func restoreProducerIDs(img *Image, next int64) error {
	if next < 0 || next%ProducerIDBlockSize != 0 || next > maxProducerIDBlockStart+ProducerIDBlockSize {
		return fmt.Errorf("%w: snapshot: next producer id block %d", ErrInvalidCommand, next)
	}
	for _, b := range img.Brokers {
		if b.ProducerIDsEnd < 0 || b.ProducerIDsEnd > next || b.ProducerIDsEnd%ProducerIDBlockSize != 0 {
			return fmt.Errorf("%w: snapshot: broker %d's producer ids end at %d, next block %d", ErrInvalidCommand, b.ID, b.ProducerIDsEnd, next)
		}
	}
	img.NextProducerIDBlock = next
	return nil
}
