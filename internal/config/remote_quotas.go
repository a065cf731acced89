package config

// The remote tier's quotas (KIP-956), dynamic as in Kafka.
var remoteQuotaKeys = []string{"remote.log.manager.copy.max.bytes.per.second", "remote.log.manager.fetch.max.bytes.per.second"}

// RemoteQuotas are the byte rates of the remote tier, over every partition
// of the broker; Kafka's default, Long.MAX_VALUE, is unlimited.
type RemoteQuotas struct {
	CopyBytesPerSec  int64 // remote.log.manager.copy.max.bytes.per.second
	FetchBytesPerSec int64 // remote.log.manager.fetch.max.bytes.per.second
}

// RemoteQuotas reads the remote tier's quotas through the dynamic layers.
func (b *Broker) RemoteQuotas() RemoteQuotas {
	return RemoteQuotas{
		CopyBytesPerSec:  mustInt(b.value(remoteQuotaKeys[0])),
		FetchBytesPerSec: mustInt(b.value(remoteQuotaKeys[1])),
	}
}
