package txn

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// Options wire a coordinator to the broker. The durations follow Kafka's
// broker configs of the same meaning.
type Options struct {
	// CoordinatorEpoch is written in every marker: the leader epoch of this
	// __transaction_state partition, so that partitions refuse markers of a
	// coordinator that has been replaced.
	CoordinatorEpoch int32
	// NextProducerID allocates a producer id. An error makes the request
	// fail with COORDINATOR_NOT_AVAILABLE, which the client retries.
	NextProducerID func() (int64, error)
	// GroupPartition is the __consumer_offsets partition of a group: the
	// partition AddOffsetsToTxn adds to the transaction.
	GroupPartition func(groupID string) base.TopicPartition
	// MaxTimeout bounds the transaction timeout a producer may ask for
	// (transaction.max.timeout.ms).
	MaxTimeout time.Duration
	// IDExpiration is how long a transactional id may stay idle in Empty,
	// CompleteCommit or CompleteAbort before it is removed
	// (transactional.id.expiration.ms).
	IDExpiration time.Duration
	// AbortCheckInterval is how often Tick looks for timed-out transactions
	// (transaction.abort.timed.out.transaction.cleanup.interval.ms).
	AbortCheckInterval time.Duration
	// ExpiryCheckInterval is how often Tick looks for expired transactional
	// ids (transaction.remove.expired.transaction.cleanup.interval.ms).
	ExpiryCheckInterval time.Duration
}

// DefaultOptions returns Kafka's defaults for the durations; the caller sets
// CoordinatorEpoch, NextProducerID and GroupPartition.
func DefaultOptions() Options {
	return Options{
		MaxTimeout:          15 * time.Minute,
		IDExpiration:        7 * 24 * time.Hour,
		AbortCheckInterval:  10 * time.Second,
		ExpiryCheckInterval: time.Hour,
	}
}

// maxTimeoutLimit is the largest timeout the wire can carry (int32 ms).
const maxTimeoutLimit = math.MaxInt32 * time.Millisecond

// Validate reports the first option that is missing or out of range.
func (o Options) Validate() error {
	switch {
	case o.CoordinatorEpoch < 0:
		return fmt.Errorf("txn: coordinator epoch %d is negative", o.CoordinatorEpoch)
	case o.NextProducerID == nil:
		return errors.New("txn: Options.NextProducerID is nil")
	case o.GroupPartition == nil:
		return errors.New("txn: Options.GroupPartition is nil")
	case o.MaxTimeout < time.Millisecond || o.MaxTimeout > maxTimeoutLimit:
		return fmt.Errorf("txn: max transaction timeout %v is not in [1ms, %v]", o.MaxTimeout, maxTimeoutLimit)
	case o.IDExpiration < time.Millisecond:
		return fmt.Errorf("txn: transactional id expiration %v is below 1ms", o.IDExpiration)
	case o.AbortCheckInterval <= 0:
		return fmt.Errorf("txn: abort check interval %v is not positive", o.AbortCheckInterval)
	case o.ExpiryCheckInterval <= 0:
		return fmt.Errorf("txn: expiry check interval %v is not positive", o.ExpiryCheckInterval)
	}
	return nil
}
