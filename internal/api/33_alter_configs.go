package api

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// AlterConfigs: v0-2. Replaces the whole set of overrides of a topic, of
// the dynamic configs of a broker resource (broker_configs.go), or of the
// configs of a client metrics subscription (client_metrics_configs.go; an
// empty set removes it, as Kafka's controller does). A group's configs and a
// broker's log levels are changed only with IncrementalAlterConfigs, as in
// Kafka.
func init() { register(33, 0, 2, (*Handler).handleAlterConfigs) }

func (h *Handler) handleAlterConfigs(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	resources := make([]configResource, len(r.Resources))
	for i, rr := range r.Resources {
		resources[i] = configResource{rr.ResourceType, rr.ResourceName}
	}
	twice := repeated(resources)
	for i, rr := range r.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		code, msg := shapeRefusal(resources[i], twice[i], legacyChanges(rr.Configs))
		if code == 0 {
			code, msg = h.configDenial(req, acl.OpAlterConfigs, rr.ResourceType, rr.ResourceName)
		}
		if code == 0 && (rr.ResourceType == resourceGroup || rr.ResourceType == resourceBrokerLogger) {
			code, msg = kerr.InvalidRequest.Code, fmt.Sprintf("AlterConfigs does not change %s resources; use IncrementalAlterConfigs", kmsg.ConfigResourceType(rr.ResourceType))
		}
		if code == 0 {
			next := make(map[string]string, len(rr.Configs))
			for _, c := range rr.Configs {
				next[c.Name] = *c.Value
			}
			code, msg = h.setConfigs(ctx, rr.ResourceType, rr.ResourceName, func(map[string]string) (map[string]string, error) {
				return next, nil
			}, r.ValidateOnly)
		}
		sr.ErrorCode, sr.ErrorMessage = code, strPtr(msg)
		resp.Resources = append(resp.Resources, sr)
	}
	return done(resp)
}

// setConfigs computes a resource's new overrides from its current ones,
// validates them and, unless validateOnly, stores them.
func (h *Handler) setConfigs(ctx context.Context, resType kmsg.ConfigResourceType, name string, change func(current map[string]string) (map[string]string, error), validateOnly bool) (int16, string) {
	switch resType {
	case resourceTopic:
	case resourceBroker:
		return h.setBrokerConfigs(ctx, name, change, validateOnly)
	case resourceGroup:
		return h.setGroupConfigs(ctx, name, change, validateOnly)
	case resourceClientMetrics:
		return h.setClientMetricsConfigs(ctx, name, change, validateOnly)
	default:
		return kerr.InvalidRequest.Code, unsupportedConfigResource
	}
	img := h.opts.Meta.Image()
	t, ok := img.Topics[name]
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, "topic " + name + " does not exist"
	}
	b := h.brokerConfig(img)
	next, err := change(t.Configs)
	if err == nil {
		err = validateTopicConfigs(next, b)
	}
	if err == nil {
		err = config.CheckTopicChange(t.Configs, next, b, remoteDataLeft(img, t))
	}
	if err != nil {
		return errorCode(err)
	}
	if validateOnly {
		return 0, ""
	}
	if err := h.opts.Meta.SetTopicConfigs(ctx, name, next); err != nil {
		return errorCode(err)
	}
	h.logger.Info("changed topic configs", "topic", name, "configs", next)
	return 0, ""
}

// remoteDataLeft reports whether any partition of t still has remote
// segments that are not DELETE_FINISHED (the image keeps no others).
func remoteDataLeft(img *metadata.Image, t *metadata.Topic) bool {
	for i := range t.Partitions {
		if len(img.RemoteSegments(t.ID, int32(i))) > 0 {
			return true
		}
	}
	return false
}
