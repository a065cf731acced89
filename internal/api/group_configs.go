package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// setGroupConfigs changes the dynamic configs of consumer group name
// (KIP-848's GROUP resource: consumer.session.timeout.ms,
// consumer.heartbeat.interval.ms), checked against this broker's bounds.
// As in Kafka, the group need not exist; it takes them when it does.
func (h *Handler) setGroupConfigs(ctx context.Context, name string, change func(map[string]string) (map[string]string, error), validateOnly bool) (int16, string) {
	if name == "" {
		return kerr.InvalidRequest.Code, "a GROUP config resource needs a group id"
	}
	img := h.opts.Meta.Image()
	next, err := change(img.GroupConfigs[name])
	if err == nil {
		_, err = config.ResolveGroup(next, h.brokerConfig(img))
	}
	if err != nil {
		return errorCode(err)
	}
	if validateOnly {
		return 0, ""
	}
	if err := h.opts.Meta.SetGroupConfigs(ctx, name, next); err != nil {
		return errorCode(err)
	}
	h.logger.Info("changed group configs", "group", name, "configs", next)
	return 0, ""
}

// GroupConsumerSettings is the group coordinator's view of the groups' own
// configs (group.Options.ConsumerGroupSettings): a group's session timeout
// and heartbeat interval from the current metadata image of meta, resolved
// on cfg with its dynamic configs; ok is false for a group without configs
// of its own, or whose configs no longer fit the broker's bounds (the
// broker's values apply then).
func GroupConsumerSettings(meta *metadata.Store, cfg *config.Broker) func(group string) (session, heartbeat time.Duration, ok bool) {
	return groupTimeouts(meta, cfg, func(s config.GroupSettings) (time.Duration, time.Duration) {
		return s.SessionTimeout, s.HeartbeatInterval
	})
}

// GroupShareSettings is GroupConsumerSettings for share groups
// (group.Options.ShareGroupSettings): a group's share.session.timeout.ms
// and share.heartbeat.interval.ms.
func GroupShareSettings(meta *metadata.Store, cfg *config.Broker) func(group string) (session, heartbeat time.Duration, ok bool) {
	return groupTimeouts(meta, cfg, func(s config.GroupSettings) (time.Duration, time.Duration) {
		return s.ShareSessionTimeout, s.ShareHeartbeatInterval
	})
}

// ProducerIDExpiration is producer.id.expiration.ms through the dynamic
// broker configs of the image of the moment
// (group.Options.ProducerIDExpirationNow): the group coordinator forgets
// idle transactional producers by the value in force, as the partitions do.
func ProducerIDExpiration(meta *metadata.Store, cfg *config.Broker) func() time.Duration {
	return func() time.Duration {
		return cfg.WithDynamic(dynamicOf(meta.Image(), cfg.NodeID)).ProducerIDExpirationNow()
	}
}

func groupTimeouts(meta *metadata.Store, cfg *config.Broker, pick func(config.GroupSettings) (time.Duration, time.Duration)) func(string) (time.Duration, time.Duration, bool) {
	return func(group string) (time.Duration, time.Duration, bool) {
		img := meta.Image()
		overrides, ok := img.GroupConfigs[group]
		if !ok {
			return 0, 0, false
		}
		s, err := config.ResolveGroup(overrides, cfg.WithDynamic(dynamicOf(img, cfg.NodeID)))
		if err != nil {
			return 0, 0, false
		}
		session, heartbeat := pick(s)
		return session, heartbeat, true
	}
}
