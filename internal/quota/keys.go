package quota

import (
	"errors"
	"fmt"
	"math"
)

// The quota keys Strata enforces, Kafka's names. Both are bytes per second
// per client (per user, per client id, or per user's client id: the
// entity the quota is set on, see Resolve).
const (
	// ProducerByteRate bounds the bytes of produce requests.
	ProducerByteRate = "producer_byte_rate"
	// ConsumerByteRate bounds the bytes of fetch responses to consumers
	// (not to follower replicas).
	ConsumerByteRate = "consumer_byte_rate"
)

// Keys Kafka has that Strata does not enforce; AlterClientQuotas refuses
// them by name rather than store a quota that would do nothing.
var unenforcedKeys = map[string]string{
	"request_percentage":       "Strata does not meter request handler time",
	"controller_mutation_rate": "Strata does not meter topic and partition mutations",
	"connection_creation_rate": "Strata has no ip quotas",
}

// ErrInvalidKey is a quota key Strata does not know or does not enforce.
var ErrInvalidKey = errors.New("invalid quota key")

// ErrInvalidValue is a quota value out of range.
var ErrInvalidValue = errors.New("invalid quota value")

// ValidateKey checks that key is one Strata enforces.
func ValidateKey(key string) error {
	switch key {
	case ProducerByteRate, ConsumerByteRate:
		return nil
	}
	if why, ok := unenforcedKeys[key]; ok {
		return fmt.Errorf("%w: %s is not supported (%s); Strata enforces %s and %s",
			ErrInvalidKey, key, why, ProducerByteRate, ConsumerByteRate)
	}
	return fmt.Errorf("%w: unknown quota key %q; use %s or %s", ErrInvalidKey, key, ProducerByteRate, ConsumerByteRate)
}

// ValidateValue checks a value set for key: a byte rate is a positive
// whole number of bytes per second, as Kafka's LONG quota configs.
func ValidateValue(key string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v != math.Trunc(v) || v > math.MaxInt64/2 {
		return fmt.Errorf("%w: %s = %v; use a whole number of bytes per second, at least 1", ErrInvalidValue, key, v)
	}
	return nil
}
