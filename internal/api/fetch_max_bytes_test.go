package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetch.max.bytes bounds a consumer fetch's max_bytes (Kafka's
// min(request, fetch.max.bytes)), and min_bytes follows it down.
func TestCapFetchBytes(t *testing.T) {
	cases := []struct {
		name                 string
		maxBytes, minBytes   int32
		limit                int32
		wantMax, wantMinimum int32
	}{
		{"under the limit", 1000, 1, 4096, 1000, 1},
		{"over the limit", 1 << 20, 1, 4096, 4096, 1},
		{"min_bytes over the capped max", 1 << 20, 10000, 4096, 4096, 4096},
		{"no bound asked", 0, 1, 4096, 4096, 1},
		{"negative bound asked", -1, 1, 4096, 4096, 1},
		{"no limit configured", 1 << 20, 1, 0, 1 << 20, 1},
		{"neither bounded", 0, 1, 0, 0, 1},
	}
	for _, c := range cases {
		r := kmsg.NewPtrFetchRequest()
		r.MaxBytes, r.MinBytes = c.maxBytes, c.minBytes
		capFetchBytes(r, c.limit)
		if r.MaxBytes != c.wantMax || r.MinBytes != c.wantMinimum {
			t.Errorf("%s: max %d, min %d; want %d, %d", c.name, r.MaxBytes, r.MinBytes, c.wantMax, c.wantMinimum)
		}
	}
}
