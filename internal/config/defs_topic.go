package config

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// longMax is Java's Long.MAX_VALUE as Kafka prints it: "never" for counts and
// times.
var longMax = strconv.FormatInt(math.MaxInt64, 10)

// minSegmentBytes is Strata's floor for segment.bytes and log.segment.bytes.
// Kafka 3.x allows 14 bytes and Kafka 4 requires 1 MiB; 1 KiB keeps segments
// real while letting tests roll many small ones.
const minSegmentBytes = 1024

// minSegmentIndexBytes is Strata's floor for segment.index.bytes and
// log.index.size.max.bytes: room for one time index entry (12 bytes).
// Kafka allows 4, an index that holds nothing, which rolls a segment per
// batch.
const minSegmentIndexBytes = 12

// def is a Def with a default value.
func def(name string, t Type, dflt, synonym string, validate func(string) error, doc string) Def {
	return Def{Name: name, Type: t, Default: dflt, HasDefault: true, BrokerSynonym: synonym, Validate: validate, Doc: doc}
}

// nullDef is a Def whose default is null.
func nullDef(name string, t Type, synonym string, validate func(string) error, doc string) Def {
	return Def{Name: name, Type: t, BrokerSynonym: synonym, Validate: validate, Doc: doc}
}

// topicDefs are the topic configs, with Kafka 3.9's names, types, defaults and
// validation (except segment.bytes, see minSegmentBytes).
var topicDefs = slices.Concat([]Def{
	def("cleanup.policy", List, "delete", "log.cleanup.policy", listOf("delete", "compact"),
		"How old segments are cleaned: delete (by retention), compact (keep the last value of each key), or both."),
	def("compression.type", String, "producer", "compression.type", oneOf(compressionNames...),
		"Compression of stored batches; producer keeps what the producer sent."),
	def("compression.gzip.level", Int, "-1", "compression.gzip.level", gzipLevel,
		"Level of the broker's gzip compression when compression.type is gzip (KIP-390): -1 (the default level) or 1 (fastest) to 9 (smallest)."),
	def("compression.lz4.level", Int, "9", "compression.lz4.level", between(1, 17),
		"Level of the broker's lz4 compression when compression.type is lz4 (KIP-390), 1 to 17: 9 (the default) compresses fast, as in Kafka; the others use LZ4 HC, 1 to 8 at those levels and 10 to 17 at the strongest Go's lz4 has (9)."),
	def("compression.zstd.level", Int, "3", "compression.zstd.level", between(-131072, 22),
		"Level of the broker's zstd compression when compression.type is zstd (KIP-390), -131072 to 22; Go's zstd has four speeds: below 3 fastest, 3 to 5 default, 6 to 9 better, 10 and up best."),
	def("delete.retention.ms", Long, "86400000", "log.cleaner.delete.retention.ms", atLeast(0),
		"How long tombstones are kept in a compacted topic."),
	def("file.delete.delay.ms", Long, "60000", "log.segment.delete.delay.ms", atLeast(0),
		"Wait before deleting a segment file from disk. Accepted for compatibility: Strata deletes at once, since a fetch still sending a segment holds its own descriptor, which is what Kafka's delay protects."),
	def("flush.messages", Long, longMax, "log.flush.interval.messages", atLeast(1),
		"Force an fsync after this many messages."),
	def("flush.ms", Long, longMax, "log.flush.interval.ms", atLeast(0),
		"Force an fsync after this long."),
	def("index.interval.bytes", Int, "4096", "log.index.interval.bytes", atLeast(0),
		"Bytes between offset index entries."),
	def("max.compaction.lag.ms", Long, longMax, "log.cleaner.max.compaction.lag.ms", atLeast(1),
		"Longest a message stays ineligible for compaction."),
	def("max.message.bytes", Int, "1048588", "message.max.bytes", atLeast(0),
		"Largest record batch the topic accepts."),
	def("message.format.version", String, "3.0-IV1", "log.message.format.version", validKafkaVersion,
		"Kafka 3's record format version of a topic (removed in Kafka 4). Accepted for compatibility: Kafka 3 ignores it once inter.broker.protocol.version is 3.0 or later, which a KRaft cluster always is, and Strata stores record batch v2 (0.11+) whatever it says."),
	def("message.downconversion.enable", Boolean, "true", "log.message.downconversion.enable", nil,
		"Whether old fetch versions may get down-converted batches. Accepted for compatibility: Strata serves Fetch v4 and later only, which never need down-conversion."),
	def("message.timestamp.after.max.ms", Long, longMax, "log.message.timestamp.after.max.ms", atLeast(0),
		"Largest allowed amount a CreateTime timestamp may be ahead of the broker's clock."),
	def("message.timestamp.before.max.ms", Long, longMax, "log.message.timestamp.before.max.ms", atLeast(0),
		"Largest allowed amount a CreateTime timestamp may be behind the broker's clock."),
	def("message.timestamp.difference.max.ms", Long, longMax, "log.message.timestamp.difference.max.ms", atLeast(0),
		"Deprecated: the older form of message.timestamp.before.max.ms."),
	def("message.timestamp.type", String, "CreateTime", "log.message.timestamp.type", oneOf("CreateTime", "LogAppendTime"),
		"Whether stored timestamps are the producer's (CreateTime) or the broker's (LogAppendTime)."),
	def("min.cleanable.dirty.ratio", Double, "0.5", "log.cleaner.min.cleanable.ratio", ratio(0, 1),
		"Smallest dirty fraction of the log at which compaction runs."),
	def("min.compaction.lag.ms", Long, "0", "log.cleaner.min.compaction.lag.ms", atLeast(0),
		"Shortest time a message stays uncompacted."),
	def("min.insync.replicas", Int, "1", "min.insync.replicas", atLeast(1),
		"Fewest in-sync replicas for an acks=all write to succeed; a partition on one broker has one, so above 1 every acks=all write gets NOT_ENOUGH_REPLICAS."),
	def("preallocate", Boolean, "false", "log.preallocate", nil,
		"Preallocate segment files. Accepted for compatibility: Strata always reserves space ahead of the active segment's writes."),
	def("retention.bytes", Long, "-1", "log.retention.bytes", atLeast(-1),
		"Largest size of a partition before old segments are deleted; -1 means unlimited."),
	def("retention.ms", Long, "604800000", "log.retention.ms", atLeast(-1),
		"Longest a segment is kept, by its newest timestamp; -1 means unlimited."),
	def("segment.bytes", Int, "1073741824", "log.segment.bytes", atLeast(minSegmentBytes),
		"Segment size at which the log rolls (Strata's minimum is 1024)."),
	def("segment.index.bytes", Int, "10485760", "log.index.size.max.bytes", atLeast(minSegmentIndexBytes),
		"Size of the offset and time index files (Strata's minimum is 12, one time index entry)."),
	def("segment.jitter.ms", Long, "0", "log.roll.jitter.ms", atLeast(0),
		"Random jitter subtracted from segment.ms."),
	def("segment.ms", Long, "604800000", "log.roll.ms", atLeast(1),
		"Age at which the active segment rolls."),
	def("unclean.leader.election.enable", Boolean, "false", "unclean.leader.election.enable", nil,
		"Whether a replica outside the ISR may become leader when no in-sync replica can lead, losing the records only the ISR held. With true the controller elects one as soon as the partition has no leader and such a replica is live (as Kafka does on a fence and every unclean.leader.election.interval.ms); with false only an operator's ElectLeaders UNCLEAN does (kafka-leader-election --election-type UNCLEAN). Never on a tiered topic (remote.storage.enable=true)."),
	def("remote.storage.enable", Boolean, "false", "", nil,
		"Tier this topic's rolled segments to the remote store."),
	def("local.retention.ms", Long, "-2", "log.local.retention.ms", atLeast(-2),
		"Longest a tiered segment is kept on local disk; -2 means retention.ms, -1 unlimited."),
	def("local.retention.bytes", Long, "-2", "log.local.retention.bytes", atLeast(-2),
		"Largest local size before tiered segments are removed locally; -2 means retention.bytes, -1 unlimited."),
	def("remote.log.copy.disable", Boolean, "false", "", nil,
		"Stop copying segments to the remote tier; remote data stays readable and expires by retention."),
	def("remote.log.delete.on.disable", Boolean, "false", "", nil,
		"When remote.storage.enable is turned off, delete the topic's remote data."),
	def("remote.copy.lag.ms", Long, "0", "log.remote.copy.lag.ms", atLeast(0),
		"Age of its newest record before a rolled segment is uploaded (KIP-1241); 0 means no time delay."),
	def("remote.copy.lag.bytes", Long, "0", "log.remote.copy.lag.bytes", atLeast(0),
		"Bytes of newer log before a rolled segment is uploaded (KIP-1241); 0 means no size delay."),
}, replicationThrottleTopicDefs)

var topicByName = index(topicDefs)

// TopicDefs returns the topic config definitions, sorted by name.
func TopicDefs() []Def { return sorted(topicDefs) }

// LookupTopic returns the definition of the topic config name.
func LookupTopic(name string) (Def, bool) {
	d, ok := topicByName[name]
	return d, ok
}

func index(defs []Def) map[string]Def {
	m := make(map[string]Def, len(defs))
	for _, d := range defs {
		if _, dup := m[d.Name]; dup {
			panic("config: duplicate definition of " + d.Name)
		}
		m[d.Name] = d
	}
	return m
}

func sorted(defs []Def) []Def {
	out := append([]Def(nil), defs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
