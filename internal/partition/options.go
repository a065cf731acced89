package partition

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/retention"
)

// Config is what one partition needs of its topic's configuration, already
// resolved (topic override, else broker default, else Kafka's default).
type Config struct {
	SegmentBytes  int64
	SegmentMaxAge time.Duration // 0 = never roll by age
	// SegmentJitter is segment.jitter.ms, which WithSegmentJitter turns
	// into a cut of SegmentMaxAge; the partition itself ignores it.
	SegmentJitter      time.Duration
	IndexIntervalBytes int
	SegmentIndexBytes  int
	MaxMessageBytes    int
	LogAppendTime      bool
	// MinInsyncReplicas is min.insync.replicas: an acks=all append needs
	// that many in-sync replicas, and this broker's partitions have one.
	MinInsyncReplicas int
	// TimestampBefore and TimestampAfter bound a CreateTime record's
	// timestamp against the broker's clock at append
	// (message.timestamp.before.max.ms and after.max.ms): one further
	// from it is INVALID_TIMESTAMP. Unset is unlimited.
	TimestampBefore, TimestampAfter MaxSkew
	// Recompress is the codec batches are rewritten to; RecompressSet=false
	// keeps the producer's codec (compression.type=producer).
	Recompress    record.Codec
	RecompressSet bool
	// RecompressLevel is the level Recompress compresses at (the topic's
	// compression.gzip.level, .lz4.level or .zstd.level); a batch the
	// producer compressed with the same codec is kept, at whatever level.
	RecompressLevel int
	// FlushMessages forces a sync once this many messages are unflushed
	// (log.flush.interval.messages); 0 = never by count.
	FlushMessages int64
	// FlushInterval forces a sync of data older than this
	// (log.flush.interval.ms); 0 = never by time.
	FlushInterval time.Duration
	Retention     retention.Policy
	// ProducerIDExpiration drops the state of an idempotent producer idle
	// this long (producer.id.expiration.ms); 0 keeps it forever.
	ProducerIDExpiration time.Duration
	// Tiered is remote.storage.enable: the log's prefix
	// [logStart, localLogStart) lives in the remote tier, and the broker's
	// tier loop, not ApplyRetention, plans retention.
	Tiered bool
	// RemoteCopyDisabled is remote.log.copy.disable (KIP-950).
	RemoteCopyDisabled bool
	// RemoteCopyLag and RemoteCopyLagBytes are remote.copy.lag.ms/bytes
	// (KIP-1241): how long a rolled segment waits before upload; 0 turns
	// a check off.
	RemoteCopyLag      time.Duration
	RemoteCopyLagBytes int64
	// KeepRecords is a cleanup.policy without delete (compact alone):
	// DeleteRecords is refused (ErrRecordsKept), as Kafka refuses it with
	// POLICY_VIOLATION, so that no client empties a compacted topic (the
	// __consumer_offsets of its groups, say) by mistake.
	KeepRecords bool
	// Compact is cleanup.policy=compact (alone or with delete): the
	// broker's log cleaner keeps the last record of each key, by the
	// rules in Compaction.
	Compact    bool
	Compaction Compaction
}

// Options builds a Partition.
type Options struct {
	Dir         string
	TP          base.TopicPartition
	TopicID     base.TopicID
	LeaderEpoch base.Epoch
	Config      Config
	Clock       clock.Clock
	Logger      *slog.Logger
	// OnLogFailure, when set, hears the I/O error that made the
	// partition's log fail-stop (it is logged as an ERROR first), once.
	// It runs under the log's lock: it must not call the partition.
	OnLogFailure func(error)
	// OnLogSync, when set, hears how long each fdatasync round of the
	// partition's log took (log.Options.OnSync).
	OnLogSync func(time.Duration)
	// CheckpointedHighWatermark, when Set, is the high watermark the
	// broker last checkpointed for the partition (Kafka's
	// replication-offset-checkpoint): Open starts the high watermark there
	// (within the log) instead of at the log end, so that a replica that
	// restarts and leads again does not show consumers records its
	// followers never had. A leader whose ISR is itself alone moves it to
	// the log end (SetInSyncReplicas); one with followers, as they fetch.
	CheckpointedHighWatermark CheckpointedOffset
}

// CheckpointedOffset is an optional offset read from a checkpoint.
type CheckpointedOffset struct {
	Offset base.Offset
	Set    bool
}

// Validate reports the first unusable option.
func (o Options) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("partition: Dir is required")
	case o.TP.Topic == "" || o.TP.Partition < 0:
		return fmt.Errorf("partition: bad topic-partition %v", o.TP)
	case o.Clock == nil:
		return errors.New("partition: Clock is required")
	case o.Config.SegmentBytes <= 0:
		return errors.New("partition: Config.SegmentBytes must be positive")
	case o.Config.MaxMessageBytes < 0:
		// 0 is valid, as in Kafka: every batch is too large.
		return errors.New("partition: Config.MaxMessageBytes must not be negative")
	}
	return nil
}

// WithSegmentJitter applies segment.jitter.ms as Kafka does: a segment
// rolls by age at segment.ms minus a random jitter below min(segment.jitter.ms,
// segment.ms), so that partitions created together do not all roll at once.
// fraction, in [0, 1), is the random draw; the broker draws it once per
// partition (Kafka draws per segment), so a config change keeps the cut.
func (c Config) WithSegmentJitter(fraction float64) Config {
	if c.SegmentJitter <= 0 || c.SegmentMaxAge <= 0 {
		return c
	}
	limit := min(c.SegmentJitter, c.SegmentMaxAge)
	c.SegmentMaxAge -= min(time.Duration(fraction*float64(limit)), limit-1)
	return c
}

// MaxSkew is an optional bound on how far a timestamp may be from the
// broker's clock; the zero value is unlimited.
type MaxSkew struct {
	D   time.Duration
	Set bool
}

// timestampRange is the CreateTime timestamps an append accepts, with now
// read only when a limit needs it (most topics set none: the produce path
// then reads no clock for it). A LogAppendTime topic checks none: the
// broker's clock replaces them.
func (c Config) timestampRange(clk clock.Clock) record.TimestampRange {
	if !(c.TimestampBefore.Set || c.TimestampAfter.Set) || c.LogAppendTime {
		return record.TimestampRange{}
	}
	nowMs := clk.Now().UnixMilli()
	r := record.TimestampRange{Check: true, StartMs: math.MinInt64, EndMs: math.MaxInt64}
	if c.TimestampBefore.Set {
		r.StartMs = subSaturating(nowMs, c.TimestampBefore.D.Milliseconds())
	}
	if c.TimestampAfter.Set {
		r.EndMs = addSaturating(nowMs, c.TimestampAfter.D.Milliseconds()+1) // EndMs is exclusive
	}
	return r
}

func addSaturating(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func subSaturating(a, b int64) int64 {
	if b > 0 && a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}
