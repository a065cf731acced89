package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier"
)

// remoteIndexCacheBytes bounds the remote offset and time indexes kept in
// memory (Kafka's remote.log.index.file.cache.total.size.bytes default).
const remoteIndexCacheBytes = 1 << 30

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

// tierDeps builds the tier's executors on store, recording state in meta.
func tierDeps(cfg *config.Broker, store objstore.Store, meta *metadata.Store) *broker.TierDeps {
	return &broker.TierDeps{
		Copier:   &tier.Copier{Store: store, Meta: meta, Random: rand.Reader, Clock: clock.Real{}},
		Deleter:  &tier.Deleter{Store: store, Meta: meta},
		Reader:   &tier.Reader{Store: store, IndexCacheBytes: remoteIndexCacheBytes},
		Interval: cfg.RemoteLogManagerTaskInterval,
	}
}
