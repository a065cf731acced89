package config

// replicaFetchersKey is num.replica.fetchers, dynamic as in Kafka's
// DynamicThreadPool.
const replicaFetchersKey = "num.replica.fetchers"

// ReplicaFetchersNow is num.replica.fetchers read through the dynamic
// layers: the fetchers a follower runs per leader broker.
func (b *Broker) ReplicaFetchersNow() int32 { return int32(mustInt(b.value(replicaFetchersKey))) }

// CheckReplicaFetchersChange refuses a change of num.replica.fetchers that
// Kafka's DynamicThreadPool refuses (checkThreadsChange).
func CheckReplicaFetchersChange(running, next int32) error {
	return checkThreadsChange(replicaFetchersKey, running, next)
}
