package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"time"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier"
)

// remoteStoreProbeTimeout bounds the check that the bucket is usable at
// start, so a wrong endpoint fails the start instead of hanging it.
const remoteStoreProbeTimeout = 30 * time.Second

// openRemoteStore opens the remote tier's object store: the S3 bucket when
// strata.remote.s3.bucket is set, else the directory store.
func openRemoteStore(ctx context.Context, cfg *config.Broker) (objstore.Store, error) {
	if cfg.S3.Bucket == "" {
		s, err := objstore.NewDir(cfg.RemoteDir)
		if err != nil {
			return nil, fmt.Errorf("remote tier directory %s is unusable (set strata.remote.dir, or remote.log.storage.system.enable=false): %w", cfg.RemoteDir, err)
		}
		return s, nil
	}
	ctx, cancel := context.WithTimeout(ctx, remoteStoreProbeTimeout)
	defer cancel()
	s, err := objstore.NewS3(ctx, objstore.S3Options{
		Bucket:    cfg.S3.Bucket,
		Prefix:    cfg.S3.Prefix,
		Region:    cfg.S3.Region,
		Endpoint:  cfg.S3.Endpoint,
		PathStyle: cfg.S3.PathStyle,
	})
	if err != nil {
		return nil, fmt.Errorf("remote tier bucket %q is unusable (check strata.remote.s3.*): %w", cfg.S3.Bucket, err)
	}
	return s, nil
}

// remoteReader builds the tier's reader on store: the remote index cache,
// the on-disk chunk cache with its read-ahead (none when
// strata.remote.cache.size.bytes is 0) and the fetch quota (KIP-956).
// The caller closes it, before store.
func remoteReader(cfg *config.Broker, store objstore.Store, logger *slog.Logger) (*tier.Reader, error) {
	rt := cfg.RemoteTier
	r := &tier.Reader{
		Store:           store,
		IndexCacheBytes: cfg.RemoteSettings().IndexCacheBytes,
		FetchQuota:      tier.NewByteRate(cfg.RemoteSettings().FetchBytesPerSec, clock.Real{}),
	}
	if rt.CacheBytes > 0 {
		c, err := tier.NewChunkCache(tier.ChunkCacheOptions{
			Dir:             rt.CacheDir,
			MaxBytes:        rt.CacheBytes,
			ChunkBytes:      int64(rt.ChunkBytes),
			ReadAheadChunks: int(rt.ReadAheadChunks),
			Logger:          logger,
		})
		if err != nil {
			return nil, err
		}
		r.Chunks = c
	}
	return r, nil
}

// tierDeps builds the tier's executors on store, recording state in meta
// and reading with reader.
func tierDeps(cfg *config.Broker, store objstore.Store, meta *metadata.Store, reader *tier.Reader) *broker.TierDeps {
	return &broker.TierDeps{
		Copier: &tier.Copier{Store: store, Meta: meta, Random: rand.Reader, Clock: clock.Real{},
			Quota: tier.NewByteRate(cfg.RemoteSettings().CopyBytesPerSec, clock.Real{})},
		Deleter:            &tier.Deleter{Store: store, Meta: meta},
		Reader:             reader,
		Interval:           cfg.RemoteLogManagerTaskInterval,
		RetryBackoff:       cfg.RemoteTier.RetryBackoff,
		RetryBackoffMax:    cfg.RemoteTier.RetryBackoffMax,
		Jitter:             mathrand.Float64,
		ListOffsetsTimeout: cfg.RemoteSettings().ListOffsetsTimeout,
		Orphans: &tier.Reconciler{Store: store, Clock: clock.Real{},
			Grace: cfg.RemoteTier.OrphanGrace, DryRun: cfg.RemoteTier.OrphanDryRun},
		OrphanScanInterval: cfg.RemoteTier.OrphanScanInterval,
	}
}
