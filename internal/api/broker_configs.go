package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// setBrokerConfigs changes the dynamic configs of a broker resource (Kafka's
// KIP-226): the cluster-wide default (name "") or this broker's own (its
// node id; another broker's are set through that broker, as Kafka's admin
// client sends them). The whole new set is validated (config.
// ValidateDynamic), then checked against every topic: a default that would
// make a topic's config invalid (log.cleanup.policy=compact under a tiered
// topic) is refused, so no partition is left unable to take its config;
// and the connection limits must hold together (max.connections.per.ip=0
// needs overrides).
func (h *Handler) setBrokerConfigs(ctx context.Context, name string, change func(current map[string]string) (map[string]string, error), validateOnly bool) (int16, string) {
	if code, msg := h.checkBrokerResource(name); code != 0 {
		return code, msg
	}
	node := h.opts.Broker.NodeID()
	clusterWide := name == ""
	img := h.opts.Meta.Image()
	dyn := dynamicOf(img, node)
	current := dyn.Node
	if clusterWide {
		current = dyn.Default
	}
	next, err := change(current)
	if err == nil {
		next, err = config.ValidateDynamic(next)
	}
	if err == nil {
		if clusterWide {
			dyn.Default = next
		} else {
			dyn.Node = next
		}
		b := h.opts.Config.WithDynamic(dyn)
		if err = topicsResolveUnder(img, b); err == nil {
			_, err = b.ConnectionLimits()
		}
		if err == nil {
			running := h.opts.Config.WithDynamic(dynamicOf(img, node))
			err = config.CheckCleanerChange(h.opts.Config.CleanerEnable, running.Cleaner(), b.Cleaner())
			if err == nil {
				err = config.CheckReplicaFetchersChange(running.ReplicaFetchersNow(), b.ReplicaFetchersNow())
			}
		}
		if err == nil {
			err = checkListenerTLS(b, clusterWide, next, h.opts.CheckListenerTLS)
		}
	}
	if err != nil {
		return errorCode(err)
	}
	if validateOnly {
		return 0, ""
	}
	if clusterWide {
		err = h.opts.Meta.SetBrokerConfigs(ctx, next)
	} else {
		err = h.opts.Meta.SetNodeConfigs(ctx, node, next)
	}
	if err != nil {
		return errorCode(err)
	}
	resource := "broker " + strconv.Itoa(int(node))
	if clusterWide {
		resource = "the cluster-wide default"
	}
	h.logger.Info("changed dynamic broker configs of "+resource, "configs", config.Redacted(next))
	return 0, ""
}

// topicsResolveUnder checks that a topic with no overrides, and every topic
// of img, has a valid config on broker b: a *config.Error naming the topic
// that does not.
func topicsResolveUnder(img *metadata.Image, b *config.Broker) error {
	if _, err := config.ResolveTopic(nil, b); err != nil {
		return explainForTopic("a new topic", err)
	}
	for name, t := range img.Topics {
		if _, err := config.ResolveTopic(t.Configs, b); err != nil {
			return explainForTopic("topic "+name, err)
		}
	}
	return nil
}

func explainForTopic(what string, err error) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err
	}
	return &config.Error{Key: ce.Key, Value: ce.Value, Msg: fmt.Sprintf("%s, for %s with these broker defaults", ce.Msg, what)}
}

// checkListenerTLS checks the listener keystores and truststores (and
// PLAIN users) that a change leaves b with: none on the cluster-wide
// resource (config.CheckClusterWide); on this broker's, settings that hold
// together, then files that load (check, when set).
func checkListenerTLS(b *config.Broker, clusterWide bool, next map[string]string, check func(*config.Broker) error) error {
	if clusterWide {
		return config.CheckClusterWide(next)
	}
	if err := b.CheckDynamicTLS(); err != nil {
		return err
	}
	if err := b.CheckDynamicSASL(); err != nil {
		return err
	}
	if check == nil {
		return nil
	}
	return check(b)
}
