package quota

import (
	"errors"
	"fmt"
	"math"
)

// The quota keys Strata enforces, Kafka's names. Each is a rate per
// client (per user, per client id, or per user's client id: the entity the
// quota is set on, see Resolve).
const (
	// ProducerByteRate bounds the bytes of produce requests, per second.
	ProducerByteRate = "producer_byte_rate"
	// ConsumerByteRate bounds the bytes of fetch responses to consumers
	// (not to follower replicas), per second.
	ConsumerByteRate = "consumer_byte_rate"
	// ControllerMutationRate bounds the partitions created and deleted by
	// CreateTopics, CreatePartitions and DeleteTopics, per second
	// (KIP-599), through a token bucket (Manager.Mutate).
	ControllerMutationRate = "controller_mutation_rate"
	// RequestPercentage bounds the time spent handling a client's requests,
	// in percent of one core (KIP-124: 100 is one request handler thread
	// kept busy); see Manager.RecordRequestTime.
	RequestPercentage = "request_percentage"
)

// enforced names the keys Strata enforces, for the errors.
const enforced = ProducerByteRate + ", " + ConsumerByteRate + ", " + ControllerMutationRate + " and " + RequestPercentage

// Keys Kafka has that Strata does not enforce; AlterClientQuotas refuses
// them by name rather than store a quota that would do nothing.
var unenforcedKeys = map[string]string{
	"connection_creation_rate": "Strata has no ip quotas",
}

// ErrInvalidKey is a quota key Strata does not know or does not enforce.
var ErrInvalidKey = errors.New("invalid quota key")

// ErrInvalidValue is a quota value out of range.
var ErrInvalidValue = errors.New("invalid quota value")

// ValidateKey checks that key is one Strata enforces.
func ValidateKey(key string) error {
	switch key {
	case ProducerByteRate, ConsumerByteRate, ControllerMutationRate, RequestPercentage:
		return nil
	}
	if why, ok := unenforcedKeys[key]; ok {
		return fmt.Errorf("%w: %s is not supported (%s); Strata enforces %s", ErrInvalidKey, key, why, enforced)
	}
	return fmt.Errorf("%w: unknown quota key %q; use %s", ErrInvalidKey, key, enforced)
}

// ValidateValue checks a value set for key: a byte rate is a positive
// whole number of bytes per second, as Kafka's LONG quota configs; a
// mutation rate any positive number of partitions per second (a DOUBLE).
func ValidateValue(key string, v float64) error {
	if key == ControllerMutationRate || key == RequestPercentage {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("%w: %s = %v; use a positive number", ErrInvalidValue, key, v)
		}
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v != math.Trunc(v) || v > math.MaxInt64/2 {
		return fmt.Errorf("%w: %s = %v; use a whole number of bytes per second, at least 1", ErrInvalidValue, key, v)
	}
	return nil
}
