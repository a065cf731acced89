package api

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/config"
)

// DescribeConfigs: v0-4, for topics, this broker, consumer groups
// (KIP-848's GROUP resource) and client metrics subscriptions (KIP-714's
// CLIENT_METRICS resource, client_metrics_configs.go), with sources,
// defaults, synonyms (v1+) and documentation (v3+). Needs DESCRIBE_CONFIGS
// on the topic, on the cluster for the broker and for a subscription (as
// Kafka's ConfigHelper.handleDescribeConfigsRequest), on the group for a
// group.
func init() { register(32, 0, 4, (*Handler).handleDescribeConfigs) }

const (
	resourceTopic  = 2
	resourceBroker = 4
	resourceGroup  = 32
)

func (h *Handler) handleDescribeConfigs(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeConfigsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range r.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		entries, code, msg := h.configsOf(rr.ResourceType, rr.ResourceName)
		if denied, why := h.configDenial(req, acl.OpDescribeConfigs, rr.ResourceType, rr.ResourceName); denied != 0 {
			entries, code, msg = nil, denied, why
		}
		sr.ErrorCode, sr.ErrorMessage = code, strPtr(msg)
		if code == 0 {
			sr.Configs = describedConfigs(entries, rr.ConfigNames, r.IncludeSynonyms, r.IncludeDocumentation)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return done(resp)
}

// configsOf returns every config entry of a resource.
func (h *Handler) configsOf(resType kmsg.ConfigResourceType, name string) ([]configEntry, int16, string) {
	img := h.opts.Meta.Image()
	switch resType {
	case resourceTopic:
		t, ok := img.Topics[name]
		if !ok {
			return nil, kerr.UnknownTopicOrPartition.Code, "topic " + name + " does not exist"
		}
		return h.describeTopicConfigs(img, t.Configs), 0, ""
	case resourceBroker:
		if code, msg := h.checkBrokerResource(name); code != 0 {
			return nil, code, msg
		}
		return h.describeBrokerConfigs(img, name == ""), 0, ""
	case resourceGroup:
		if name == "" {
			return nil, kerr.InvalidRequest.Code, "a GROUP config resource needs a group id"
		}
		return wrapEntries(config.DescribeGroup(img.GroupConfigs[name], h.brokerConfig(img))), 0, ""
	case resourceClientMetrics:
		if name == "" {
			return nil, kerr.InvalidRequest.Code, "a CLIENT_METRICS config resource needs a subscription name"
		}
		return describeClientMetrics(img.ClientMetricsConfigs[name]), 0, ""
	case resourceBrokerLogger:
		if code, msg := h.checkBrokerLoggerResource(name); code != 0 {
			return nil, code, msg
		}
		return h.describeBrokerLoggers(), 0, ""
	}
	return nil, kerr.InvalidRequest.Code, unsupportedConfigResource
}

// unsupportedConfigResource answers a config resource type Kafka does not
// define.
const unsupportedConfigResource = "only TOPIC, BROKER, BROKER_LOGGER, GROUP and CLIENT_METRICS config resources are supported"

// configDenial is the code a config resource is refused with when req's
// principal may not perform op (DESCRIBE_CONFIGS, ALTER_CONFIGS) on it: on
// the topic for a topic, on the cluster for a broker or a client metrics
// subscription (Kafka's AuthHelper and ControllerApis.authorizeAlterResource
// check CLUSTER for CLIENT_METRICS), on the group for a group; 0 when
// allowed.
func (h *Handler) configDenial(req *Request, op acl.Operation, resType kmsg.ConfigResourceType, name string) (int16, string) {
	switch resType {
	case resourceTopic:
		if !h.allowedTopic(req, op, name) {
			return topicDenied, "not authorized for the configs of topic " + name
		}
	case resourceBroker:
		if !h.allowedCluster(req, op) {
			return clusterDenied, "not authorized for the broker's configs"
		}
	case resourceBrokerLogger:
		if !h.allowedCluster(req, op) {
			return clusterDenied, "not authorized for the broker's loggers"
		}
	case resourceClientMetrics:
		if !h.allowedCluster(req, op) {
			return clusterDenied, "not authorized for the client metrics subscriptions"
		}
	case resourceGroup:
		if !h.allowedGroup(req, op, name) {
			return groupDenied, "not authorized for the configs of group " + name
		}
	}
	return 0, ""
}

func (h *Handler) checkBrokerResource(name string) (int16, string) {
	if name != "" && name != strconv.Itoa(int(h.opts.Broker.NodeID())) {
		return kerr.InvalidRequest.Code, "broker " + name + " is not this broker (node " + strconv.Itoa(int(h.opts.Broker.NodeID())) + ")"
	}
	return 0, ""
}

func describedConfigs(entries []configEntry, names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, e := range entries {
		if names != nil && !want[e.Name] {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value, c.ReadOnly, c.IsSensitive = e.Name, e.value(), e.ReadOnly, e.Sensitive
		c.Source = kmsg.ConfigSource(e.Source)
		c.IsDefault = e.Source == 5 // DEFAULT_CONFIG, for v0 clients
		c.ConfigType = kmsg.ConfigType(e.Type)
		if docs {
			c.Documentation = strPtr(e.Doc)
		}
		if synonyms {
			for _, s := range e.Synonyms {
				sy := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				v := s.Value
				sy.Name, sy.Value, sy.Source = s.Name, &v, kmsg.ConfigSource(s.Source)
				if s.IsNull { // a sensitive value, as Kafka hides it
					sy.Value = nil
				}
				c.ConfigSynonyms = append(c.ConfigSynonyms, sy)
			}
		}
		out = append(out, c)
	}
	return out
}
