package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier"
)

// A cluster tiers to one store shared by every node (config/tier_cluster.go
// says why). The quorum records the token of the store the first node
// claimed; that node first wrote the object tierStoreKey(token) into its
// store. Every other node must find that object in its own store, or its
// store is not the cluster's and it does not start.

// sharedStoreCheckTimeout bounds the check's object writes and reads and
// its claim in the quorum.
const sharedStoreCheckTimeout = 30 * time.Second

// tierStoreKey is the object that names the store of token; the tier's
// orphan reconciler counts it as Strata's own.
func tierStoreKey(token string) string { return tier.TierStoreKey(token) }

// tierStoreClaims is the part of the metadata quorum the check uses.
type tierStoreClaims interface {
	Image() *metadata.Image
	ClaimTierStore(ctx context.Context, token string) (string, error)
}

// checkClusterTier runs on a cluster member once it is in the quorum and
// before its broker opens. A member whose tier runs must tier to the
// cluster's store (claimSharedStore). A member whose tier is off must not
// join a cluster that has tiered topics: as a follower it could not
// rebuild what its leader tiered, as a leader it could not serve it.
func checkClusterTier(ctx context.Context, cfg *config.Broker, meta tierStoreClaims, store objstore.Store, logger *slog.Logger) error {
	if cfg.TierOn() {
		ctx, cancel := context.WithTimeout(ctx, sharedStoreCheckTimeout)
		defer cancel()
		return claimSharedStore(ctx, meta, store, cfg.NodeID, storeName(cfg))
	}
	if topics := tieredTopics(meta.Image()); len(topics) > 0 {
		why := "remote.log.storage.system.enable=false"
		if cfg.TierNeedsSharedStore() {
			why = "neither strata.remote.s3.bucket nor strata.remote.dir is set"
		}
		return fmt.Errorf("the cluster has tiered topics (%s), but this node's remote tier is off (%s); give it the remote store of the other nodes (strata.remote.s3.*, or their shared strata.remote.dir) and remote.log.storage.system.enable=true",
			quoteList(topics, 3), why)
	}
	if cfg.TierNeedsSharedStore() {
		logger.Info("remote tier off: a cluster tiers to one store every node shares; to tier topics, " +
			"set strata.remote.s3.bucket (or a strata.remote.dir that every node shares) on every node")
	}
	return nil
}

// claimSharedStore makes sure store is the cluster's: when the quorum has
// no store yet, this node writes an object for a fresh token and claims it
// (a node that claimed concurrently may win: its token is kept, and the
// object of ours is deleted). Then the object of the cluster's token must
// be in store.
func claimSharedStore(ctx context.Context, meta tierStoreClaims, store objstore.Store, nodeID int32, name string) error {
	token := meta.Image().TierStore
	if token == "" {
		mine, err := newTierStoreToken()
		if err != nil {
			return err
		}
		body := fmt.Appendf(nil, "remote store of Strata cluster %s, claimed by node %d\n", meta.Image().ClusterID, nodeID)
		if err := store.Put(ctx, tierStoreKey(mine), bytes.NewReader(body), int64(len(body))); err != nil {
			return fmt.Errorf("remote tier store %s: writing %s: %w", name, tierStoreKey(mine), err)
		}
		if token, err = meta.ClaimTierStore(ctx, mine); err != nil {
			return fmt.Errorf("claiming remote tier store %s for the cluster: %w", name, err)
		}
		if token != mine {
			// Best effort: a leftover is a few bytes no one reads.
			_ = store.Delete(ctx, tierStoreKey(mine))
		}
	}
	_, err := store.Head(ctx, tierStoreKey(token))
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return fmt.Errorf("remote tier store %s is not the cluster's: it lacks %s, which the node that set up the cluster's tier wrote to its store; every node of a cluster needs the same strata.remote.s3.bucket and prefix, or one shared strata.remote.dir",
			name, tierStoreKey(token))
	case err != nil:
		return fmt.Errorf("remote tier store %s: reading %s: %w", name, tierStoreKey(token), err)
	}
	return nil
}

func newTierStoreToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("tier store token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// storeName names the configured remote store in messages.
func storeName(cfg *config.Broker) string {
	if cfg.S3.Bucket != "" {
		return fmt.Sprintf("bucket %q (prefix %q)", cfg.S3.Bucket, cfg.S3.Prefix)
	}
	return "directory " + cfg.RemoteDir
}

// tieredTopics are the names of img's topics with remote.storage.enable,
// sorted.
func tieredTopics(img *metadata.Image) []string {
	var out []string
	for name, t := range img.Topics {
		if strings.EqualFold(t.Configs["remote.storage.enable"], "true") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// quoteList joins the first max names, and says how many more there are.
func quoteList(names []string, max int) string {
	if len(names) <= max {
		return fmt.Sprintf("%q", names)
	}
	return fmt.Sprintf("%q and %d more", names[:max], len(names)-max)
}
