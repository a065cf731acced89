package api

import (
	"github.com/strata-broker/strata/internal/config"
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

func (h *Handler) describeTopicConfigs(overrides map[string]string) []configEntry {
	return wrapEntries(config.DescribeTopic(overrides, h.opts.Config))
}

func (h *Handler) describeBrokerConfigs() []configEntry {
	return wrapEntries(config.DescribeBroker(h.opts.Config))
}
