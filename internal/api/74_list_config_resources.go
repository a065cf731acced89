package api

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// ListConfigResources: v0-1, as Kafka's KafkaApis.handleListConfigResources.
// v0 (KIP-714's ListClientMetricsResources) lists the client metrics
// subscriptions; v1 (KIP-1142) the resources of the requested types, every
// type Kafka lists when none is asked (TOPIC, BROKER, BROKER_LOGGER,
// CLIENT_METRICS, GROUP). A type outside that set fails the whole request
// with UNSUPPORTED_VERSION, as in Kafka. Needs DESCRIBE_CONFIGS on the
// cluster.
//
// The rows come in Kafka's type order (GROUP, CLIENT_METRICS,
// BROKER_LOGGER, BROKER, TOPIC), sorted by name within a type (broker ids
// numerically). GROUP lists the groups with configs of their own, as Kafka's
// GroupConfigManager.groupIds; BROKER and BROKER_LOGGER the brokers.
func init() { register(74, 0, 1, (*Handler).handleListConfigResources) }

// listableTypes are the types a ListConfigResources version lists
// (Kafka's ListConfigResourcesRequest.supportedResourceTypes).
func listableTypes(version int16) []int8 {
	if version == 0 {
		return []int8{resourceClientMetrics}
	}
	return []int8{resourceTopic, resourceBroker, resourceBrokerLogger, resourceClientMetrics, resourceGroup}
}

const resourceBrokerLogger = 8

func (h *Handler) handleListConfigResources(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ListConfigResourcesRequest)
	resp := r.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !h.allowedCluster(req, acl.OpDescribeConfigs) {
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	listable := listableTypes(r.Version)
	wanted := r.ResourceTypes
	if len(wanted) == 0 {
		wanted = listable
	}
	for _, t := range wanted {
		if !slices.Contains(listable, t) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			return done(resp)
		}
	}
	img := h.opts.Meta.Image()
	add := func(resType int8, names []string) {
		if !slices.Contains(wanted, resType) {
			return
		}
		for _, name := range names {
			cr := kmsg.NewListConfigResourcesResponseConfigResource()
			cr.Name, cr.Type = name, resType
			resp.ConfigResources = append(resp.ConfigResources, cr)
		}
	}
	add(resourceGroup, slices.Sorted(maps.Keys(img.GroupConfigs)))
	add(resourceClientMetrics, slices.Sorted(maps.Keys(img.ClientMetricsConfigs)))
	if slices.Contains(wanted, resourceBroker) || slices.Contains(wanted, resourceBrokerLogger) {
		brokers, _ := h.registeredBrokers(img, req.Listener)
		ids := make([]string, len(brokers))
		for i, b := range brokers {
			ids[i] = strconv.Itoa(int(b.ID))
		}
		add(resourceBrokerLogger, ids)
		add(resourceBroker, ids)
	}
	add(resourceTopic, slices.Sorted(maps.Keys(img.Topics)))
	return done(resp)
}
