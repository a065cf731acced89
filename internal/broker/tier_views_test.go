package broker

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// Views are kept per image version: asking again for the same image finds
// them, a new image starts afresh.
func TestViewCacheFollowsImageVersion(t *testing.T) {
	var c viewCache
	var id base.TopicID
	id[0] = 1
	img1 := &metadata.Image{Version: 7}
	for range 2 {
		for p := range int32(3) {
			v, err := c.view(img1, id, p)
			if err != nil || !v.Loaded() {
				t.Fatalf("view of partition %d: loaded %v, err %v", p, v.Loaded(), err)
			}
		}
	}
	if c.version != 7 || len(c.views) != 3 {
		t.Fatalf("cache holds %d views of version %d, want 3 of version 7", len(c.views), c.version)
	}
	if _, err := c.view(&metadata.Image{Version: 8}, id, 0); err != nil {
		t.Fatal(err)
	}
	if c.version != 8 || len(c.views) != 1 {
		t.Fatalf("after a new image the cache holds %d views of version %d, want 1 of version 8", len(c.views), c.version)
	}
}
