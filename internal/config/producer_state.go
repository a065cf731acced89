package config

import "time"

// The producer-state settings that Kafka changes at run time (cluster-wide
// dynamic in Kafka: KIP-854's producer.id.expiration.ms, KIP-890's
// transaction.partition.verification.enable).
var producerStateKeys = []string{"producer.id.expiration.ms", "transaction.partition.verification.enable"}

// ProducerIDExpirationNow is producer.id.expiration.ms read through the
// dynamic layers: how long a partition keeps an idle idempotent
// producer's state.
func (b *Broker) ProducerIDExpirationNow() time.Duration {
	return msDuration(mustInt(b.value(producerStateKeys[0])))
}

// TxnPartitionVerificationNow is transaction.partition.verification.enable
// read through the dynamic layers.
func (b *Broker) TxnPartitionVerificationNow() bool {
	return mustBool(b.value(producerStateKeys[1]))
}
