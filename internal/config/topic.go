package config

import (
	"fmt"
	"strings"
	"time"
)

// Topic is one topic's effective configuration, parsed. Build it with
// ResolveTopic.
type Topic struct {
	CleanupPolicy            CleanupPolicy
	Compression              Compression
	GzipLevel                int32         // compression.gzip.level
	LZ4Level                 int32         // compression.lz4.level
	ZstdLevel                int32         // compression.zstd.level
	DeleteRetention          time.Duration // delete.retention.ms: how long tombstones stay
	FileDeleteDelay          time.Duration
	FlushMessages            int64     // Long.MaxValue: never by count
	FlushInterval            TimeLimit // flush.ms
	IndexIntervalBytes       int32
	MaxCompactionLag         TimeLimit
	MaxMessageBytes          int32
	MessageDownconversion    bool
	TimestampAfterMax        TimeLimit // message.timestamp.after.max.ms
	TimestampBeforeMax       TimeLimit // message.timestamp.before.max.ms
	TimestampDifferenceMax   TimeLimit // message.timestamp.difference.max.ms (deprecated)
	TimestampType            TimestampType
	MinCleanableDirtyRatio   float64
	MinCompactionLag         time.Duration
	MinInsyncReplicas        int32
	Preallocate              bool
	RetentionBytes           BytesLimit
	Retention                TimeLimit // retention.ms
	SegmentBytes             int64
	SegmentIndexBytes        int32
	SegmentJitterMax         time.Duration // segment.jitter.ms
	SegmentMaxAge            time.Duration // segment.ms
	UncleanLeaderElection    bool
	RemoteStorageEnable      bool
	LocalRetention           TimeLimit  // local.retention.ms; -2 resolved to Retention
	LocalRetentionBytes      BytesLimit // local.retention.bytes; -2 resolved to RetentionBytes
	RemoteLogCopyDisable     bool
	RemoteLogDeleteOnDisable bool
	RemoteCopyLag            time.Duration // remote.copy.lag.ms; 0 = no time delay
	RemoteCopyLagBytes       int64         // remote.copy.lag.bytes; 0 = no size delay
}

// ValidateTopicOverrides checks a topic's config overrides one by one: every
// key must be a topic config and every value valid for it. The error, for the
// first bad key in name order, is an *Error. Rules that span keys or depend on
// the broker are checked by ResolveTopic, so CreateTopics and AlterConfigs
// should call that.
func ValidateTopicOverrides(m map[string]string) error {
	for _, k := range sortedKeys(m) {
		d, ok := topicByName[k]
		if !ok {
			return &Error{Key: k, Value: m[k], Msg: "unknown topic config"}
		}
		if err := d.Check(strings.TrimSpace(m[k])); err != nil {
			return err
		}
	}
	return nil
}

// ResolveTopic is a topic's effective configuration: for each key, the
// override if there is one, else the value of its broker synonym in b, else
// the topic default. A nil b means a broker with every default.
func ResolveTopic(overrides map[string]string, b *Broker) (Topic, error) {
	if err := ValidateTopicOverrides(overrides); err != nil {
		return Topic{}, err
	}
	l := layersOf(b)
	g := getter(func(k string) (string, bool) {
		d := topicByName[k]
		v, _, ok := topicValue(overrides, l, &d)
		return v, ok
	})
	t := Topic{
		CleanupPolicy:            parseCleanupPolicy(g.str("cleanup.policy")),
		Compression:              parseCompression(g.str("compression.type")),
		GzipLevel:                g.i32("compression.gzip.level"),
		LZ4Level:                 g.i32("compression.lz4.level"),
		ZstdLevel:                g.i32("compression.zstd.level"),
		DeleteRetention:          msDuration(g.i64("delete.retention.ms")),
		FileDeleteDelay:          msDuration(g.i64("file.delete.delay.ms")),
		FlushMessages:            g.i64("flush.messages"),
		FlushInterval:            g.ms("flush.ms"),
		IndexIntervalBytes:       g.i32("index.interval.bytes"),
		MaxCompactionLag:         g.ms("max.compaction.lag.ms"),
		MaxMessageBytes:          g.i32("max.message.bytes"),
		MessageDownconversion:    g.flag("message.downconversion.enable"),
		TimestampAfterMax:        g.ms("message.timestamp.after.max.ms"),
		TimestampBeforeMax:       g.ms("message.timestamp.before.max.ms"),
		TimestampDifferenceMax:   g.ms("message.timestamp.difference.max.ms"),
		TimestampType:            parseTimestampType(g.str("message.timestamp.type")),
		MinCleanableDirtyRatio:   mustDouble(g.str("min.cleanable.dirty.ratio")),
		MinCompactionLag:         msDuration(g.i64("min.compaction.lag.ms")),
		MinInsyncReplicas:        g.i32("min.insync.replicas"),
		Preallocate:              g.flag("preallocate"),
		RetentionBytes:           bytesLimit(g.i64("retention.bytes")),
		Retention:                g.ms("retention.ms"),
		SegmentBytes:             g.i64("segment.bytes"),
		SegmentIndexBytes:        g.i32("segment.index.bytes"),
		SegmentJitterMax:         msDuration(g.i64("segment.jitter.ms")),
		SegmentMaxAge:            msDuration(g.i64("segment.ms")),
		UncleanLeaderElection:    g.flag("unclean.leader.election.enable"),
		RemoteStorageEnable:      g.flag("remote.storage.enable"),
		RemoteLogCopyDisable:     g.flag("remote.log.copy.disable"),
		RemoteLogDeleteOnDisable: g.flag("remote.log.delete.on.disable"),
		RemoteCopyLag:            msDuration(g.i64("remote.copy.lag.ms")),
		RemoteCopyLagBytes:       g.i64("remote.copy.lag.bytes"),
	}
	t.LocalRetention = localMs(g.i64("local.retention.ms"), t.Retention)
	t.LocalRetentionBytes = localBytes(g.i64("local.retention.bytes"), t.RetentionBytes)
	if t.RemoteStorageEnable {
		if err := checkTiered(g, b); err != nil {
			return Topic{}, err
		}
	}
	return t, nil
}

// checkTiered applies Kafka's rules for a topic with remote.storage.enable:
// the broker must have tiering on, the topic must not be compacted, and the
// local retention must fit inside the total retention.
func checkTiered(g getter, b *Broker) error {
	switch {
	case b != nil && b.TierNeedsSharedStore():
		return &Error{Key: "remote.storage.enable", Value: "true",
			Msg: "the broker is a cluster member without a shared remote store, so its tier is off; " + sharedStoreFix}
	case b != nil && !b.RemoteStorageSystemEnable:
		return &Error{Key: "remote.storage.enable", Value: "true",
			Msg: "the broker has remote.log.storage.system.enable=false; enable it on the broker first"}
	}
	if p := g.str("cleanup.policy"); parseCleanupPolicy(p).Compacts() {
		return &Error{Key: "cleanup.policy", Value: p,
			Msg: "must be delete when remote.storage.enable=true; tiered storage does not support compaction"}
	}
	for _, pair := range [][2]string{{"local.retention.ms", "retention.ms"}, {"local.retention.bytes", "retention.bytes"}} {
		local, total := g.i64(pair[0]), g.i64(pair[1])
		if local == -2 || total < 0 {
			continue
		}
		if local == -1 {
			return &Error{Key: pair[0], Value: "-1",
				Msg: fmt.Sprintf("must not be -1 (unlimited) while %s is %d; use -2 to follow it", pair[1], total)}
		}
		if local > total {
			return &Error{Key: pair[0], Value: fmt.Sprint(local),
				Msg: fmt.Sprintf("must be at most %s (%d), or -2 to follow it", pair[1], total)}
		}
	}
	return nil
}
