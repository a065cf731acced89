package broker

import (
	"sync"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/tier"
)

// viewCache keeps, for the newest metadata image it was asked about, the
// PartitionView of each partition asked for. Every remote read asks for
// its partition's view, and building one sorts and validates all of the
// partition's remote segments; a view only changes with the image, so it
// is built once per image version and partition. Views are immutable and
// shared. An invalid view is cached too (as an unloaded view, which plans
// nothing), so its error is logged once per image, not once per read.
type viewCache struct {
	mu      sync.Mutex
	version uint64
	views   map[viewKey]tier.PartitionView
}

type viewKey struct {
	topicID   base.TopicID
	partition int32
}

// view returns the PartitionView of partition of topicID in img, and the
// error that made it unloaded, if it is new to the cache (nil when it was
// built before).
func (c *viewCache) view(img *metadata.Image, topicID base.TopicID, partition int32) (tier.PartitionView, error) {
	k := viewKey{topicID: topicID, partition: partition}
	c.mu.Lock()
	if img.Version != c.version || c.views == nil {
		c.version, c.views = img.Version, make(map[viewKey]tier.PartitionView)
	}
	v, ok := c.views[k]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := tier.NewPartitionView(img.RemoteSegments(topicID, partition))
	if err != nil {
		v = tier.PartitionView{}
	}
	c.mu.Lock()
	if img.Version == c.version {
		c.views[k] = v
	}
	c.mu.Unlock()
	return v, err
}
