package api

import (
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// configEntry is a config.Entry in the shape the config APIs answer with.
type configEntry struct {
	config.Entry
	Source int8
}

func (e configEntry) value() *string {
	if e.IsNull || (e.Sensitive && e.Entry.Value != "") {
		return nil
	}
	v := e.Entry.Value
	return &v
}

func wrapEntries(es []config.Entry) []configEntry {
	out := make([]configEntry, len(es))
	for i, e := range es {
		out[i] = configEntry{Entry: e, Source: int8(e.Source)}
	}
	return out
}

func (h *Handler) describeTopicConfigs(img *metadata.Image, overrides map[string]string) []configEntry {
	return wrapEntries(config.DescribeTopic(overrides, h.brokerConfig(img)))
}

// describeBrokerConfigs describes this broker's configs, or with
// clusterDefault the dynamic ones of the cluster-wide resource alone.
func (h *Handler) describeBrokerConfigs(img *metadata.Image, clusterDefault bool) []configEntry {
	if clusterDefault {
		return wrapEntries(config.DescribeBrokerDefault(h.brokerConfig(img)))
	}
	return wrapEntries(config.DescribeBroker(h.brokerConfig(img)))
}

// brokerConfig is this broker's configuration with the dynamic broker
// configs of img.
func (h *Handler) brokerConfig(img *metadata.Image) *config.Broker {
	return h.opts.Config.WithDynamic(dynamicOf(img, h.opts.Broker.NodeID()))
}

// dynamicOf is what node runs with of img's dynamic broker configs.
func dynamicOf(img *metadata.Image, node int32) config.Dynamic {
	cluster, own := img.DynamicConfigsOf(node)
	return config.Dynamic{Default: cluster, Node: own}
}

// txnPartitionVerification is transaction.partition.verification.enable
// as this broker runs with it now (dynamic, as in Kafka).
func (h *Handler) txnPartitionVerification() bool {
	return h.opts.Config.WithDynamic(dynamicOf(h.opts.Meta.Image(), h.opts.Broker.NodeID())).TxnPartitionVerificationNow()
}
