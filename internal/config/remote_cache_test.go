package config

import (
	"errors"
	"strings"
	"testing"
)

// The chunk cache is off or holds two chunks at least; anything between
// is refused with a line naming the key, the bound and the fix.
func TestRemoteCacheHoldsTwoChunks(t *testing.T) {
	for _, tt := range []struct {
		cache, chunk string
		ok           bool
	}{
		{"0", "", true},
		{"", "", true}, // the defaults: 1 GiB of 8 MiB chunks
		{"16777216", "", true},
		{"16777215", "", false},
		{"8388608", "", false},
		{"1", "", false},
		{"131072", "65536", true},
		{"131071", "65536", false},
	} {
		flags := map[string]string{}
		if tt.cache != "" {
			flags["strata.remote.cache.size.bytes"] = tt.cache
		}
		if tt.chunk != "" {
			flags["strata.remote.chunk.bytes"] = tt.chunk
		}
		_, err := LoadBroker("", nil, flags)
		if tt.ok {
			if err != nil {
				t.Errorf("cache %q, chunk %q: %v", tt.cache, tt.chunk, err)
			}
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "strata.remote.cache.size.bytes" || !strings.Contains(ce.Msg, "two chunks") {
			t.Errorf("cache %q, chunk %q: got %v, want an error naming strata.remote.cache.size.bytes", tt.cache, tt.chunk, err)
		}
	}
}
