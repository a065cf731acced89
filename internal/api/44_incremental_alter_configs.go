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
// configs, applied to a topic's current overrides.
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
	for _, rr := range r.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		code, msg := h.configDenial(req, acl.OpAlterConfigs, rr.ResourceType, rr.ResourceName)
		if code == 0 {
			code, msg = h.setConfigs(ctx, rr.ResourceType, rr.ResourceName, func(cur map[string]string) (map[string]string, error) {
				return applyConfigOps(cur, rr.Configs, h.opts.Config)
			}, r.ValidateOnly)
		}
		sr.ErrorCode, sr.ErrorMessage = code, strPtr(msg)
		resp.Resources = append(resp.Resources, sr)
	}
	return done(resp)
}

// applyConfigOps returns cur with ops applied; cur is not modified.
func applyConfigOps(cur map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, b *config.Broker) (map[string]string, error) {
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
			if op.Value == nil {
				return nil, &config.Error{Key: op.Name, Msg: "SET needs a value"}
			}
			next[op.Name] = value
		case opDelete:
			delete(next, op.Name)
		case opAppend, opSubtract:
			if d, ok := config.LookupTopic(op.Name); !ok || d.Type != config.List {
				return nil, &config.Error{Key: op.Name, Value: value, Msg: "APPEND and SUBTRACT apply only to list configs"}
			}
			next[op.Name] = editList(currentList(next, op.Name, b), splitCSV(value), op.Op == opAppend)
		default:
			return nil, &config.Error{Key: op.Name, Msg: "unknown operation; use SET, DELETE, APPEND or SUBTRACT"}
		}
	}
	return next, nil
}

// currentList is a list config's effective value: the override, else what
// the broker default or Kafka's default makes it.
func currentList(m map[string]string, key string, b *config.Broker) []string {
	if v, ok := m[key]; ok {
		return splitCSV(v)
	}
	for _, e := range config.DescribeTopic(m, b) {
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
