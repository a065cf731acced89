package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
)

func dirStore(t *testing.T, dir string) objstore.Store {
	t.Helper()
	s, err := objstore.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Nodes sharing a store pass, whichever claims it first, and only the
// claimed token's object is left; a node with a store of its own is
// refused, with a message naming its store and the fix.
func TestClaimSharedStore(t *testing.T) {
	meta := openTestQuorum(t)
	sharedDir := t.TempDir()
	// Three nodes of one shared store claim at once: one token wins.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			errs[i] = claimSharedStore(t.Context(), meta, dirStore(t, sharedDir), int32(i+1), "directory "+sharedDir)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d on the shared store: %v", i+1, err)
		}
	}
	token := meta.Image().TierStore
	if token == "" {
		t.Fatal("no token claimed")
	}
	var keys []string
	err := dirStore(t, sharedDir).List(t.Context(), "", func(oi objstore.ObjectInfo) error {
		keys = append(keys, oi.Key)
		return nil
	})
	if err != nil || len(keys) != 1 || keys[0] != tierStoreKey(token) {
		t.Errorf("objects in the shared store: %v (%v), want only %s", keys, err, tierStoreKey(token))
	}

	// A later node on the same store passes; one on another store does not.
	if err := claimSharedStore(t.Context(), meta, dirStore(t, sharedDir), 4, "shared"); err != nil {
		t.Errorf("a later node on the shared store: %v", err)
	}
	ownDir := t.TempDir()
	err = claimSharedStore(t.Context(), meta, dirStore(t, ownDir), 5, "directory "+ownDir)
	if err == nil || !strings.Contains(err.Error(), ownDir) || !strings.Contains(err.Error(), "strata.remote.s3.bucket") {
		t.Fatalf("a node on a store of its own: %v; want a refusal naming its store and the fix", err)
	}
	if got := meta.Image().TierStore; got != token {
		t.Fatalf("the refused node changed the cluster's token: %q, was %q", got, token)
	}
}

// A cluster member whose tier is off starts while the cluster has no
// tiered topic, and is refused once it has one.
func TestCheckClusterTierOff(t *testing.T) {
	meta := openTestQuorum(t)
	cfg, err := config.LoadBroker("", nil, map[string]string{
		"node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093",
		"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TierOn() {
		t.Fatal("a cluster member with the default store tiers")
	}
	logger := slog.New(slog.DiscardHandler)
	if err := checkClusterTier(t.Context(), cfg, meta, nil, logger); err != nil {
		t.Fatalf("no tiered topic: %v", err)
	}
	_, err = meta.CreateTopic(context.Background(), metadata.CreateTopic{Name: "tiered", Partitions: 1, ReplicationFactor: 1,
		Configs: map[string]string{"remote.storage.enable": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	err = checkClusterTier(t.Context(), cfg, meta, nil, logger)
	if err == nil || !strings.Contains(err.Error(), `"tiered"`) || !strings.Contains(err.Error(), "strata.remote.dir is set") {
		t.Fatalf("with a tiered topic: %v; want a refusal naming the topic and why the tier is off", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
