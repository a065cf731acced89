package main

import (
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/retention"
)

// topicResolver turns a topic's overrides, on broker b running with the
// image's dynamic broker configs, into a partition.Config.
func topicResolver(b *config.Broker) broker.ConfigResolver {
	return func(cs broker.ConfigSources) (partition.Config, error) {
		dyn := b.WithDynamic(config.Dynamic{Default: cs.ClusterDynamic, Node: cs.NodeDynamic})
		t, err := config.ResolveTopic(cs.Topic, dyn)
		if err != nil {
			return partition.Config{}, err
		}
		c := partitionConfig(t)
		c.ProducerIDExpiration = dyn.ProducerIDExpirationNow()
		return c, nil
	}
}

func partitionConfig(t config.Topic) partition.Config {
	c := partition.Config{
		SegmentBytes:       t.SegmentBytes,
		SegmentMaxAge:      t.SegmentMaxAge,
		SegmentJitter:      t.SegmentJitterMax,
		MinInsyncReplicas:  int(t.MinInsyncReplicas),
		IndexIntervalBytes: int(t.IndexIntervalBytes),
		SegmentIndexBytes:  int(t.SegmentIndexBytes),
		MaxMessageBytes:    int(t.MaxMessageBytes),
		LogAppendTime:      t.TimestampType == config.LogAppendTime,
		Retention:          retentionPolicy(t),
		Tiered:             t.RemoteStorageEnable,
		RemoteCopyDisabled: t.RemoteLogCopyDisable,
		RemoteCopyLag:      t.RemoteCopyLag,
		RemoteCopyLagBytes: t.RemoteCopyLagBytes,
		Compact:            t.CleanupPolicy.Compacts(),
		KeepRecords:        !t.CleanupPolicy.Deletes(),
		Compaction: partition.Compaction{
			MinCleanableRatio: t.MinCleanableDirtyRatio,
			MinLag:            t.MinCompactionLag,
			DeleteRetention:   t.DeleteRetention,
		},
	}
	c.TimestampBefore = maxSkew(t.TimestampBeforeMax, t.TimestampDifferenceMax)
	c.TimestampAfter = maxSkew(t.TimestampAfterMax, t.TimestampDifferenceMax)
	if t.MaxCompactionLag.Set {
		c.Compaction.MaxLag = t.MaxCompactionLag.Duration
	}
	if t.FlushMessages < 1<<62 {
		c.FlushMessages = t.FlushMessages
	}
	if t.FlushInterval.Set {
		c.FlushInterval = t.FlushInterval.Duration
	}
	if codec, ok := recompressCodec(t.Compression); ok {
		c.Recompress, c.RecompressSet, c.RecompressLevel = codec, true, compressionLevel(t, codec)
	}
	return c
}

// compressionLevel is t's level for codec (KIP-390); the codec's default
// for one without levels.
func compressionLevel(t config.Topic, codec record.Codec) int {
	switch codec {
	case record.CodecGzip:
		return int(t.GzipLevel)
	case record.CodecLZ4:
		return int(t.LZ4Level)
	case record.CodecZstd:
		return int(t.ZstdLevel)
	}
	return record.DefaultLevel(codec)
}

func recompressCodec(c config.Compression) (record.Codec, bool) {
	switch c {
	case config.CompressionUncompressed:
		return record.CodecNone, true
	case config.CompressionGzip:
		return record.CodecGzip, true
	case config.CompressionSnappy:
		return record.CodecSnappy, true
	case config.CompressionLZ4:
		return record.CodecLZ4, true
	case config.CompressionZstd:
		return record.CodecZstd, true
	}
	return 0, false
}

func retentionPolicy(t config.Topic) retention.Policy {
	var p retention.Policy
	if t.CleanupPolicy.Deletes() {
		p.RetentionBytes = retention.Limit{Value: t.RetentionBytes.Bytes, Set: t.RetentionBytes.Set}
		p.RetentionMs = retention.Limit{Value: t.Retention.Duration.Milliseconds(), Set: t.Retention.Set}
		p.LocalRetentionBytes = retention.Limit{Value: t.LocalRetentionBytes.Bytes, Set: t.LocalRetentionBytes.Set}
		p.LocalRetentionMs = retention.Limit{Value: t.LocalRetention.Duration.Milliseconds(), Set: t.LocalRetention.Set}
	}
	return p
}

// cleanerOptions runs the log cleaner unless log.cleaner.enable=false or
// log.cleaner.threads=0 (no cleaner thread, as in Kafka).
func cleanerOptions(b *config.Broker) *broker.CleanerOptions {
	s := b.Cleaner()
	if !b.CleanerEnable || s.Threads == 0 {
		return nil
	}
	o := cleanerOptionsOf(s)
	return &o
}

// cleanerOptionsOf is the broker's form of the cleaner settings.
func cleanerOptionsOf(s config.CleanerSettings) broker.CleanerOptions {
	return broker.CleanerOptions{Backoff: s.Backoff, DedupeBytes: s.DedupeBytes, Threads: int(s.Threads), IOBytesPerSecond: s.IOBytesPerSecond}
}

// maxSkew is message.timestamp.before.max.ms (or after.max.ms), or, when
// that is unlimited, the deprecated message.timestamp.difference.max.ms that
// it replaced (KIP-937).
func maxSkew(limit, deprecated config.TimeLimit) partition.MaxSkew {
	if !limit.Set {
		limit = deprecated
	}
	return partition.MaxSkew{D: limit.Duration, Set: limit.Set}
}
