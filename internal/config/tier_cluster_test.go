package config

import (
	"errors"
	"strings"
	"testing"
)

// A cluster member tiers only to a store named on purpose; a single node
// keeps its default directory store.
func TestTierNeedsSharedStore(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cluster   bool
		extra     map[string]string
		needs, on bool
	}{
		{"single node, default dir", false, nil, false, true},
		{"cluster, default dir", true, nil, true, false},
		{"cluster, shared dir", true, map[string]string{"strata.remote.dir": "/mnt/shared"}, false, true},
		{"cluster, bucket", true, map[string]string{"strata.remote.s3.bucket": "tier"}, false, true},
		{"cluster, tier off", true, map[string]string{"remote.log.storage.system.enable": "false"}, false, false},
		{"single node, tier off", false, map[string]string{"remote.log.storage.system.enable": "false"}, false, false},
	} {
		flags := tt.extra
		if tt.cluster {
			flags = clusterFlags("1", tt.extra)
		}
		b := mustLoad(t, "", nil, flags)
		if got := b.TierNeedsSharedStore(); got != tt.needs {
			t.Errorf("%s: TierNeedsSharedStore() = %v, want %v", tt.name, got, tt.needs)
		}
		if got := b.TierOn(); got != tt.on {
			t.Errorf("%s: TierOn() = %v, want %v", tt.name, got, tt.on)
		}
	}
}

// A tiered topic on a cluster member without a shared store is refused
// with a message that names the fix.
func TestTieredTopicNeedsSharedStore(t *testing.T) {
	b := mustLoad(t, "", nil, clusterFlags("1", nil))
	_, err := ResolveTopic(map[string]string{"remote.storage.enable": "true"}, b)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "remote.storage.enable" || !strings.Contains(ce.Msg, "strata.remote.s3.bucket") {
		t.Fatalf("got %v, want an error on remote.storage.enable naming strata.remote.s3.bucket", err)
	}
	shared := mustLoad(t, "", nil, clusterFlags("1", map[string]string{"strata.remote.dir": "/mnt/shared"}))
	if _, err := ResolveTopic(map[string]string{"remote.storage.enable": "true"}, shared); err != nil {
		t.Fatalf("with a shared dir: %v", err)
	}
}
