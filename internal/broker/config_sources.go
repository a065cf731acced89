package broker

import (
	"maps"

	"github.com/strata-broker/strata/internal/metadata"
)

// ConfigSources are what a topic's effective config is made of on this
// node: the topic's own overrides, then the image's dynamic broker configs
// (this node's own, then the cluster-wide ones); the static broker config
// is the resolver's. The maps are the image's, never written.
type ConfigSources struct {
	Topic, NodeDynamic, ClusterDynamic map[string]string
}

func (s ConfigSources) equal(o ConfigSources) bool {
	return maps.Equal(s.Topic, o.Topic) && maps.Equal(s.NodeDynamic, o.NodeDynamic) && maps.Equal(s.ClusterDynamic, o.ClusterDynamic)
}

// configSources are the sources of topic t's config on node in img.
func configSources(img *metadata.Image, node int32, t *metadata.Topic) ConfigSources {
	cluster, own := img.DynamicConfigsOf(node)
	return ConfigSources{Topic: t.Configs, NodeDynamic: own, ClusterDynamic: cluster}
}
