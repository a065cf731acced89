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
	// ConnectionCreationRate bounds the new connections a client address
	// opens, per second (KIP-612); the only quota of an ip entity, and an
	// ip entity's only quota. Kafka's INT: a whole number, the int maximum
	// meaning no bound. A request may not set 0 (ValidateNewValue); a 0
	// an earlier Strata stored refuses every connection.
	ConnectionCreationRate = "connection_creation_rate"
)

// clientKeys names the keys of user and client-id entities, for the errors.
const clientKeys = ProducerByteRate + ", " + ConsumerByteRate + ", " + ControllerMutationRate + " and " + RequestPercentage

// UnlimitedConnectionCreationRate is Kafka's connection_creation_rate
// that bounds nothing (its default).
const UnlimitedConnectionCreationRate = math.MaxInt32

// ErrInvalidKey is a quota key Strata does not know, or one that does not
// apply to the entity it is set on.
var ErrInvalidKey = errors.New("invalid quota key")

// ErrInvalidValue is a quota value out of range.
var ErrInvalidValue = errors.New("invalid quota value")

// ValidateKey checks that key is a quota of e's kind: connection_creation_rate
// for an ip entity, the others for users and client ids, as Kafka's
// ClientQuotaControlManager allows.
func ValidateKey(e Entity, key string) error {
	switch key {
	case ProducerByteRate, ConsumerByteRate, ControllerMutationRate, RequestPercentage:
		if e.IsIP() {
			return fmt.Errorf("%w: %s does not apply to an ip entity; an ip's quota is %s", ErrInvalidKey, key, ConnectionCreationRate)
		}
		return nil
	case ConnectionCreationRate:
		if !e.IsIP() {
			return fmt.Errorf("%w: %s applies to ip entities only; a user's or client id's quotas are %s", ErrInvalidKey, key, clientKeys)
		}
		return nil
	}
	if e.IsIP() {
		return fmt.Errorf("%w: unknown quota key %q; an ip's quota is %s", ErrInvalidKey, key, ConnectionCreationRate)
	}
	return fmt.Errorf("%w: unknown quota key %q; use %s", ErrInvalidKey, key, clientKeys)
}

// ValidateValue checks a value set for key: a byte rate is a positive
// whole number of bytes per second up to Long's maximum (as a double,
// 2^63: kafka-configs' 9223372036854775807), as Kafka's LONG quota configs; a
// mutation rate any positive number of partitions per second (a DOUBLE);
// a connection creation rate a whole number from 0 to the int maximum.
func ValidateValue(key string, v float64) error {
	if key == ConnectionCreationRate {
		if math.IsNaN(v) || v < 0 || v > UnlimitedConnectionCreationRate || v != math.Trunc(v) {
			return fmt.Errorf("%w: %s = %v; use a whole number of connections per second from 0 to %d", ErrInvalidValue, key, v, UnlimitedConnectionCreationRate)
		}
		return nil
	}
	if key == ControllerMutationRate || key == RequestPercentage {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("%w: %s = %v; use a positive number", ErrInvalidValue, key, v)
		}
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v != math.Trunc(v) || v > math.MaxInt64 {
		return fmt.Errorf("%w: %s = %v; use a whole number of bytes per second, at least 1", ErrInvalidValue, key, v)
	}
	return nil
}

// ValidateNewValue checks a value a request sets for key: ValidateValue,
// and above 0 for every key, as Kafka's ClientQuotaControlManager requires
// ("Quota ... must be greater than 0"). ValidateValue alone judges what the
// metadata log already holds, where Strata before this rule could store a
// connection_creation_rate of 0; on the default ip it locked every client
// out, the one that would have undone it too.
func ValidateNewValue(key string, v float64) error {
	if v == 0 {
		return fmt.Errorf("%w: %s = 0; a quota must be greater than 0 (remove it to lift the bound)", ErrInvalidValue, key)
	}
	return ValidateValue(key, v)
}
