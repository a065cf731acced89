package api

import (
	"strconv"

	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/metadata"
)

// groupMax caps a group API at the version the coordinator implements.
func groupMax(key int16) int16 {
	v, ok := group.MaxVersions[key]
	if !ok {
		panic("api: no coordinator version for key " + strconv.Itoa(int(key)))
	}
	return v
}

// newGroupCoordinators is the consumer-group kind of coordinator, on
// __consumer_offsets created with the offsets.topic.* settings.
func newGroupCoordinators(h *Handler) *coordinators {
	cfg := h.opts.Config
	return &coordinators{
		h:     h,
		topic: offsets.TopicName,
		create: func() metadata.CreateTopic {
			return metadata.CreateTopic{
				Name:              offsets.TopicName,
				Partitions:        cfg.OffsetsTopicNumPartitions,
				ReplicationFactor: cfg.OffsetsTopicReplicationFactor,
				Configs: map[string]string{
					"cleanup.policy":   "compact",
					"segment.bytes":    strconv.Itoa(int(cfg.OffsetsTopicSegmentBytes)),
					"compression.type": "producer",
				},
			}
		},
		rt:            h.opts.Groups,
		errorResponse: group.ErrorResponse,
	}
}
