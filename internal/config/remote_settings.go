package config

import "time"

// The remote tier's settings that change at run time, Kafka's
// DynamicRemoteLogConfig: its quotas (KIP-956), how long a fetch waits for
// remote reads, how long ListOffsets waits for the tier, and the memory of
// the remote index cache.
var remoteDynamicKeys = []string{
	"remote.log.manager.copy.max.bytes.per.second", "remote.log.manager.fetch.max.bytes.per.second",
	"remote.fetch.max.wait.ms", "remote.list.offsets.request.timeout.ms", "remote.log.index.file.cache.total.size.bytes",
}

// RemoteSettings are the remote tier's dynamic settings.
type RemoteSettings struct {
	// CopyBytesPerSec and FetchBytesPerSec are byte rates over every
	// partition of the broker; Kafka's default, Long.MAX_VALUE, is
	// unlimited.
	CopyBytesPerSec    int64         // remote.log.manager.copy.max.bytes.per.second
	FetchBytesPerSec   int64         // remote.log.manager.fetch.max.bytes.per.second
	FetchMaxWait       time.Duration // remote.fetch.max.wait.ms
	ListOffsetsTimeout time.Duration // remote.list.offsets.request.timeout.ms
	IndexCacheBytes    int64         // remote.log.index.file.cache.total.size.bytes
}

// RemoteSettings reads the remote tier's dynamic settings through the
// dynamic layers.
func (b *Broker) RemoteSettings() RemoteSettings {
	return RemoteSettings{
		CopyBytesPerSec:    mustInt(b.value(remoteDynamicKeys[0])),
		FetchBytesPerSec:   mustInt(b.value(remoteDynamicKeys[1])),
		FetchMaxWait:       msDuration(mustInt(b.value(remoteDynamicKeys[2]))),
		ListOffsetsTimeout: msDuration(mustInt(b.value(remoteDynamicKeys[3]))),
		IndexCacheBytes:    mustInt(b.value(remoteDynamicKeys[4])),
	}
}
