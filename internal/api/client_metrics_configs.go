package api

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/clientmetrics"
	"github.com/strata-broker/strata/internal/config"
)

// resourceClientMetrics is the CLIENT_METRICS config resource (KIP-714): a
// client metrics subscription, named by the operator.
const resourceClientMetrics = 16

// describeClientMetrics describes the configs of a subscription as Kafka's
// ConfigHelper.createClientMetricsConfigEntry: every config, sorted by
// name; a set one with source CLIENT_METRICS_CONFIG and itself as its one
// synonym, an unset one at its default with source DEFAULT_CONFIG and no
// synonyms. A name without a subscription describes as the defaults.
func describeClientMetrics(configs map[string]string) []configEntry {
	defs := clientmetrics.ConfigDefs()
	slices.SortFunc(defs, func(a, b clientmetrics.ConfigDef) int { return strings.Compare(a.Name, b.Name) })
	out := make([]configEntry, 0, len(defs))
	for _, d := range defs {
		e := config.Entry{Name: d.Name, Value: d.Default, Source: config.Default, Type: clientMetricsType(d.Type), Doc: d.Doc}
		if v, ok := configs[d.Name]; ok {
			e.Value, e.Source = clientmetrics.DescribedValue(d.Name, v), config.ClientMetrics
			e.Synonyms = []config.Synonym{{Name: d.Name, Value: e.Value, Source: config.ClientMetrics}}
		}
		out = append(out, configEntry{Entry: e, Source: int8(e.Source)})
	}
	return out
}

// clientMetricsType is the ConfigType of a clientmetrics.ConfigDef type.
func clientMetricsType(t string) config.Type {
	switch t {
	case "list":
		return config.List
	case "int":
		return config.Int
	}
	panic("api: client metrics config of unknown type " + t)
}

// setClientMetricsConfigs changes the configs of client metrics
// subscription name. The whole resulting set is validated as Kafka's
// controller does (ControllerConfigurationValidator →
// ClientMetricsConfigs.validate), answering the clientmetrics.ConfigError's
// code; a set left empty removes the subscription, as deleting every config
// is how kafka-client-metrics.sh --delete removes one.
func (h *Handler) setClientMetricsConfigs(ctx context.Context, name string, change func(map[string]string) (map[string]string, error), validateOnly bool) (int16, string) {
	if name == "" {
		return kerr.InvalidRequest.Code, "a CLIENT_METRICS config resource needs a subscription name"
	}
	next, err := change(h.opts.Meta.Image().ClientMetricsConfigs[name])
	if err == nil {
		_, err = clientmetrics.ParseSubscription(name, next)
	}
	if err != nil {
		return errorCode(err)
	}
	if validateOnly {
		return 0, ""
	}
	if err := h.opts.Meta.SetClientMetricsConfigs(ctx, name, next); err != nil {
		return errorCode(err)
	}
	h.logger.Info("changed client metrics subscription", "subscription", name, "configs", next)
	return 0, ""
}
