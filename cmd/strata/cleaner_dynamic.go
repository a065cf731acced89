package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// watchCleaner applies the log cleaner's dynamic configs
// (log.cleaner.threads, log.cleaner.dedupe.buffer.size,
// log.cleaner.backoff.ms, log.cleaner.io.max.bytes.per.second, set with
// kafka-configs --entity-type brokers) to the running cleaner as the
// metadata image changes them, as Kafka's LogCleaner.reconfigure does. It
// returns nil when the broker runs no cleaner (they then wait for a
// restart).
func watchCleaner(cfg *config.Broker, meta *metadata.Store, b *broker.Broker, logger *slog.Logger) *imageWatcher {
	applied, ok := b.CleanerOptions()
	if !ok {
		return nil
	}
	failed := ""
	return watchImages(meta, func(_ context.Context, img *metadata.Image) {
		cluster, own := img.DynamicConfigsOf(cfg.NodeID)
		s := cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own}).Cleaner()
		next := cleanerOptionsOf(s)
		if next == applied {
			return
		}
		err := errCleanerStopped
		if s.Threads > 0 {
			err = b.SetCleanerOptions(next)
		}
		if err != nil {
			if err.Error() != failed {
				failed = err.Error()
				logger.Error("dynamic log cleaner settings not applied; the previous ones stay", "err", err)
			}
			return
		}
		applied, failed = next, ""
		logger.Info("changed log cleaner settings", "log.cleaner.threads", s.Threads, "log.cleaner.dedupe.buffer.size", s.DedupeBytes,
			"log.cleaner.backoff.ms", s.Backoff.Milliseconds(), "log.cleaner.io.max.bytes.per.second", s.IOBytesPerSecond)
	})
}

var errCleanerStopped = errors.New("log.cleaner.threads=0 does not stop a running cleaner; set it in server.properties and restart")
