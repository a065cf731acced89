package api

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/config"
)

// IncrementalAlterConfigs: v0-1. SET, DELETE, and APPEND/SUBTRACT on list
// configs, applied to a topic's current overrides, a broker resource's
// current dynamic configs, a consumer group's (group_configs.go) or a client
// metrics subscription's (client_metrics_configs.go); SET and DELETE of
// this broker's log levels (BROKER_LOGGER, broker_loggers.go).
func init() { register(44, 0, 1, (*Handler).handleIncrementalAlterConfigs) }

const (
	opSet      = 0
	opDelete   = 1
	opAppend   = 2
	opSubtract = 3
)

func (h *Handler) handleIncrementalAlterConfigs(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	resources := make([]configResource, len(r.Resources))
	for i, rr := range r.Resources {
		resources[i] = configResource{rr.ResourceType, rr.ResourceName}
	}
	twice := repeated(resources)
	for i, rr := range r.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		code, msg := shapeRefusal(resources[i], twice[i], incrementalChanges(rr.Configs))
		if code == 0 {
			code, msg = h.configDenial(req, acl.OpAlterConfigs, rr.ResourceType, rr.ResourceName)
		}
		switch {
		case code != 0:
		case rr.ResourceType == resourceBrokerLogger:
			code, msg = h.alterBrokerLoggers(rr.ResourceName, rr.Configs, r.ValidateOnly)
		default:
			code, msg = h.setConfigs(ctx, rr.ResourceType, rr.ResourceName, func(cur map[string]string) (map[string]string, error) {
				return applyConfigOps(cur, rr.Configs, h.listsOf(rr.ResourceType, rr.ResourceName))
			}, r.ValidateOnly)
		}
		sr.ErrorCode, sr.ErrorMessage = code, strPtr(msg)
		resp.Resources = append(resp.Resources, sr)
	}
	return done(resp)
}

// listConfigs says which configs of a resource are lists, and what a list
// is now when the resource does not set it (its effective value).
type listConfigs struct {
	isList    func(key string) bool
	effective func(cur map[string]string, key string) []string
}

// listsOf is the listConfigs of a resource; for a type no config resource
// has, none is a list (setConfigs refuses the type anyway). A list the
// cluster-wide broker resource does not set is what it is without this
// broker's own dynamic values. The lists of GROUP and CLIENT_METRICS
// resources (metrics, match) are not lists here: Kafka's controller knows
// the ConfigDefs of BROKER and TOPIC alone (KafkaRaftServer's
// KafkaConfigSchema), so it refuses APPEND and SUBTRACT on them with
// INVALID_CONFIG.
func (h *Handler) listsOf(resType kmsg.ConfigResourceType, name string) listConfigs {
	b := h.brokerConfig(h.opts.Meta.Image())
	if resType == resourceBroker && name == "" {
		b = b.ClusterWide()
	}
	switch resType {
	case resourceTopic:
		return listConfigs{
			isList:    func(k string) bool { d, ok := config.LookupTopic(k); return ok && d.Type == config.List },
			effective: func(cur map[string]string, k string) []string { return describedList(config.DescribeTopic(cur, b), k) },
		}
	case resourceBroker:
		return listConfigs{
			isList:    func(k string) bool { d, ok := config.LookupBroker(k); return ok && d.Type == config.List },
			effective: func(_ map[string]string, k string) []string { return describedList(config.DescribeBroker(b), k) },
		}
	}
	return listConfigs{isList: func(string) bool { return false }}
}

// applyConfigOps returns cur with ops applied; cur is not modified. The
// ops are of a sound shape (configChangesRefusal): each names its own
// config, and only a DELETE has no value.
func applyConfigOps(cur map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, lists listConfigs) (map[string]string, error) {
	next := maps.Clone(cur)
	if next == nil {
		next = map[string]string{}
	}
	for _, op := range ops {
		value := ""
		if op.Value != nil {
			value = *op.Value
		}
		switch op.Op {
		case opSet:
			next[op.Name] = value
		case opDelete:
			delete(next, op.Name)
		case opAppend, opSubtract:
			if !lists.isList(op.Name) {
				return nil, &config.Error{Key: op.Name, Value: value, Msg: "APPEND and SUBTRACT apply only to list configs"}
			}
			list, set := next[op.Name]
			current := splitCSV(list)
			if !set {
				current = lists.effective(next, op.Name)
			}
			next[op.Name] = editList(current, splitCSV(value), op.Op == opAppend)
		default:
			return nil, &config.Error{Key: op.Name, Msg: "unknown operation; use SET, DELETE, APPEND or SUBTRACT"}
		}
	}
	return next, nil
}

// describedList is the value of list config key among described entries.
func describedList(entries []config.Entry, key string) []string {
	for _, e := range entries {
		if e.Name == key {
			return splitCSV(e.Value)
		}
	}
	return nil
}

func editList(list, items []string, add bool) string {
	for _, it := range items {
		has := slices.Contains(list, it)
		switch {
		case add && !has:
			list = append(list, it)
		case !add && has:
			list = slices.DeleteFunc(list, func(s string) bool { return s == it })
		}
	}
	return strings.Join(list, ",")
}

func splitCSV(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
