package partition

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/retention"
)

// Config is what one partition needs of its topic's configuration, already
// resolved (topic override, else broker default, else Kafka's default).
type Config struct {
	SegmentBytes       int64
	SegmentMaxAge      time.Duration // 0 = never roll by age
	IndexIntervalBytes int
	SegmentIndexBytes  int
	MaxMessageBytes    int
	LogAppendTime      bool
	// Recompress is the codec batches are rewritten to; RecompressSet=false
	// keeps the producer's codec (compression.type=producer).
	Recompress    record.Codec
	RecompressSet bool
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
	case o.Config.MaxMessageBytes <= 0:
		return errors.New("partition: Config.MaxMessageBytes must be positive")
	}
	return nil
}
