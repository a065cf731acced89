package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/share"
	"github.com/strata-broker/strata/internal/share/leader"
)

// shareTarget is a partition of a share session, resolved: its topic and
// the partition led here.
type shareTarget struct {
	key   sharePartitionKey
	topic *metadata.Topic
	part  *partition.Partition
}

// sharePartition resolves a partition a share group member reads or
// acknowledges, as Kafka's ShareFetch does: UNKNOWN_TOPIC_ID for a topic id
// the image does not know, TOPIC_AUTHORIZATION_FAILED without READ on the
// topic, UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER as a fetch.
func (h *Handler) sharePartition(req *Request, pk sharePartitionKey) (shareTarget, int16) {
	t := h.opts.Meta.Image().TopicsByID[pk.topicID]
	if t == nil {
		return shareTarget{}, kerr.UnknownTopicID.Code
	}
	if !h.allowedTopic(req, acl.OpRead, t.Name) {
		return shareTarget{}, topicDenied
	}
	p, code := h.fetchPartition(t, pk.partition, true)
	if code != 0 {
		return shareTarget{}, code
	}
	return shareTarget{key: pk, topic: t, part: p}, 0
}

// boundsOf is a partition's offsets and leadership as a share-partition
// uses them.
func boundsOf(p *partition.Partition) leader.Bounds {
	off := p.Offsets()
	return leader.Bounds{LogStart: off.LogStart, HighWatermark: off.HighWatermark, LeaderEpoch: int32(off.LeaderEpoch)}
}

// shareSettings are a share group's settings: the broker's group.share.*
// with the group's own share.* configs. leader.Reset is per partition
// (forPartition).
type shareSettings struct {
	leader        leader.Settings
	reset         config.ShareAutoOffsetReset
	readCommitted bool
	maxSessions   int
}

// shareReset is where a share-partition of t without state starts, by
// share.auto.offset.reset: the high watermark (latest), the log start
// (earliest), or the first record at or after now minus the duration
// (by_duration; the high watermark when every record is older), looked up
// in the remote tier too.
func (h *Handler) shareReset(ctx context.Context, t shareTarget, reset config.ShareAutoOffsetReset) func(leader.Bounds) (base.Offset, error) {
	return func(b leader.Bounds) (base.Offset, error) {
		if reset.Earliest() {
			return b.LogStart, nil
		}
		d, ok := reset.ByDuration()
		if !ok {
			return b.HighWatermark, nil
		}
		ts := time.Now().Add(-d).UnixMilli()
		o, _, found, err := h.opts.Broker.RemoteOffsetForTimestamp(ctx, t.part, ts)
		if err != nil {
			return 0, err
		}
		if !found {
			o, _, found = t.part.OffsetForTimestamp(ts)
		}
		if !found {
			return b.HighWatermark, nil
		}
		return o, nil
	}
}

// shareSettingsOf resolves group's settings on the current image; group
// configs that no longer fit the broker's bounds are ignored (the broker's
// values apply), as for consumer groups.
func (h *Handler) shareSettingsOf(img *metadata.Image, group string) shareSettings {
	b := h.brokerConfig(img)
	g, err := config.ResolveGroup(img.GroupConfigs[group], b)
	if err != nil {
		g, _ = config.ResolveGroup(nil, b)
	}
	return shareSettings{
		leader: leader.Settings{
			Limits: share.Limits{
				DeliveryLimit: b.GroupShareDeliveryCountLimit,
				LockDuration:  g.ShareRecordLockDuration,
				MaxInFlight:   int64(b.GroupSharePartitionMaxRecordLocks),
			},
		},
		reset:         g.ShareAutoOffsetReset,
		readCommitted: g.ShareReadCommitted,
		maxSessions:   int(b.GroupShareMaxShareSessions),
	}
}

// shareReadEnd is where a share group reads up to: the high watermark, or
// the last stable offset under read_committed.
func shareReadEnd(off partition.Offsets, readCommitted bool) base.Offset {
	if readCommitted {
		return off.LastStable
	}
	return off.HighWatermark
}

// forPartition is s with the reset of t's share-partitions.
func (s shareSettings) forPartition(ctx context.Context, h *Handler, t shareTarget) leader.Settings {
	l := s.leader
	l.Reset = h.shareReset(ctx, t, s.reset)
	return l
}
