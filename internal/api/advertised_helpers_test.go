package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkAdvertised checks that key is registered at exactly min..max and
// that ApiVersions advertises that range.
func checkAdvertised(t *testing.T, key, min, max int16) {
	t.Helper()
	var h *Handler
	if !h.Supported(key, min) || !h.Supported(key, max) || h.Supported(key, max+1) || (min > 0 && h.Supported(key, min-1)) {
		t.Fatalf("%s must be registered at v%d-%d", kmsg.NameForKey(key), min, max)
	}
	rh := newReplicaHarness(t, nil)
	resp := rh.handle(18, 3, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == key {
			if k.MinVersion != min || k.MaxVersion != max {
				t.Fatalf("ApiVersions advertises %s v%d-%d, want v%d-%d", kmsg.NameForKey(key), k.MinVersion, k.MaxVersion, min, max)
			}
			return
		}
	}
	t.Fatalf("ApiVersions does not advertise %s", kmsg.NameForKey(key))
}
