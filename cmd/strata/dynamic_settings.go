package main

import (
	"context"
	"log/slog"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/replication"
	"github.com/strata-broker/strata/internal/tier"
)

// watchSetting applies a dynamic broker setting (kafka-configs
// --entity-type brokers) where it is used as the metadata image changes
// it: read takes it from the broker configs as this broker's and the
// cluster-wide dynamic values leave them, apply puts it to work. Each
// change is logged with its values (describe), each failure once; a
// failed change keeps the setting in force and is tried again at the next
// image.
func watchSetting[T comparable](cfg *config.Broker, meta *metadata.Store, logger *slog.Logger, what string, applied T,
	read func(*config.Broker) T, apply func(T) error, describe func(T) []any) *imageWatcher {
	failed := ""
	return watchImages(meta, func(_ context.Context, img *metadata.Image) {
		cluster, own := img.DynamicConfigsOf(cfg.NodeID)
		next := read(cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own}))
		if next == applied {
			return
		}
		if err := apply(next); err != nil {
			if err.Error() != failed {
				failed = err.Error()
				logger.Error("dynamic "+what+" not applied; the previous ones stay", "err", err)
			}
			return
		}
		applied, failed = next, ""
		logger.Info("changed "+what, describe(next)...)
	})
}

// watchCleaner applies the log cleaner's dynamic configs to the running
// cleaner (log.cleaner.threads, log.cleaner.dedupe.buffer.size,
// log.cleaner.backoff.ms, log.cleaner.io.max.bytes.per.second), as Kafka's
// LogCleaner.reconfigure does. It returns nil when the broker runs no
// cleaner (they then wait for a restart).
func watchCleaner(cfg *config.Broker, meta *metadata.Store, b *broker.Broker, logger *slog.Logger) *imageWatcher {
	running, ok := b.CleanerOptions()
	if !ok {
		return nil
	}
	return watchSetting(cfg, meta, logger, "log cleaner settings", running,
		func(c *config.Broker) broker.CleanerOptions { return cleanerOptionsOf(c.Cleaner()) },
		func(o broker.CleanerOptions) error {
			// A cluster-wide change was checked against the broker that
			// took it; each broker checks it against its own threads too.
			running, _ := b.CleanerOptions()
			if err := config.CheckCleanerChange(true, config.CleanerSettings{Threads: int32(running.Threads)},
				config.CleanerSettings{Threads: int32(o.Threads)}); err != nil {
				return err
			}
			return b.SetCleanerOptions(o)
		},
		func(o broker.CleanerOptions) []any {
			return []any{"log.cleaner.threads", o.Threads, "log.cleaner.dedupe.buffer.size", o.DedupeBytes,
				"log.cleaner.backoff.ms", o.Backoff.Milliseconds(), "log.cleaner.io.max.bytes.per.second", o.IOBytesPerSecond}
		})
}

// watchRemoteSettings applies the remote tier's dynamic configs (Kafka's
// DynamicRemoteLogConfig) where they are used: the copy and fetch quotas
// (KIP-956), the remote index cache's bound and ListOffsets' wait for the
// tier; remote.fetch.max.wait.ms is read by each fetch.
func watchRemoteSettings(cfg *config.Broker, meta *metadata.Store, b *broker.Broker, copyQuota *tier.ByteRate, reader *tier.Reader,
	logger *slog.Logger) *imageWatcher {
	return watchSetting(cfg, meta, logger, "remote tier settings", cfg.RemoteSettings(),
		(*config.Broker).RemoteSettings,
		func(s config.RemoteSettings) error {
			copyQuota.SetRate(s.CopyBytesPerSec)
			reader.FetchQuota.SetRate(s.FetchBytesPerSec)
			reader.SetIndexCacheBytes(s.IndexCacheBytes)
			b.SetRemoteListOffsetsTimeout(s.ListOffsetsTimeout)
			return nil
		},
		func(s config.RemoteSettings) []any {
			return []any{"remote.log.manager.copy.max.bytes.per.second", s.CopyBytesPerSec,
				"remote.log.manager.fetch.max.bytes.per.second", s.FetchBytesPerSec,
				"remote.fetch.max.wait.ms", s.FetchMaxWait.Milliseconds(),
				"remote.list.offsets.request.timeout.ms", s.ListOffsetsTimeout.Milliseconds(),
				"remote.log.index.file.cache.total.size.bytes", s.IndexCacheBytes}
		})
}

// watchReplicaFetchers applies num.replica.fetchers to the replica
// fetchers, each broker checking the change against its own count (as
// Kafka's DynamicThreadPool does).
func watchReplicaFetchers(cfg *config.Broker, meta *metadata.Store, fetchers *replication.Fetchers, logger *slog.Logger) *imageWatcher {
	return watchSetting(cfg, meta, logger, "replica fetchers", int32(fetchers.Count()),
		(*config.Broker).ReplicaFetchersNow,
		func(n int32) error {
			if err := config.CheckReplicaFetchersChange(int32(fetchers.Count()), n); err != nil {
				return err
			}
			fetchers.SetFetchers(int(n))
			return nil
		},
		func(n int32) []any { return []any{"num.replica.fetchers", n} })
}
