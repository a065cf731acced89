package clientmetrics

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The configs of a CLIENT_METRICS resource (Kafka's ClientMetricsConfigs).
const (
	// ConfigMetrics is the comma-separated list of metric name prefixes
	// the matching clients are asked to push; AllMetrics alone means all
	// of them, an empty list none.
	ConfigMetrics = "metrics"
	// ConfigIntervalMs is how often the matching clients push.
	ConfigIntervalMs = "interval.ms"
	// ConfigMatch is the comma-separated list of selector=regex patterns
	// a client must all match for the subscription to apply to it.
	ConfigMatch = "match"
)

// AllMetrics in a subscription's metrics list subscribes to every metric.
const AllMetrics = "*"

// Kafka's bounds and default of interval.ms.
const (
	DefaultIntervalMs int32 = 5 * 60 * 1000
	MinIntervalMs     int32 = 100
	MaxIntervalMs     int32 = 60 * 60 * 1000
)

// ConfigDef describes one client metrics config, for DescribeConfigs.
type ConfigDef struct {
	Name    string
	Type    string // Kafka's ConfigDef type: "list" or "int"
	Default string // the default, as DescribeConfigs shows it
	Doc     string
}

// ConfigDefs lists the client metrics configs with their defaults and
// docs, in Kafka's definition order.
func ConfigDefs() []ConfigDef {
	return []ConfigDef{
		{Name: ConfigMetrics, Type: "list", Default: "",
			Doc: "Subscription metrics list: comma-separated metric name prefixes; * subscribes to all metrics, an empty list to none."},
		{Name: ConfigIntervalMs, Type: "int", Default: strconv.Itoa(int(DefaultIntervalMs)),
			Doc: fmt.Sprintf("Push interval in milliseconds, between %d and %d (1 hour).", MinIntervalMs, MaxIntervalMs)},
		{Name: ConfigMatch, Type: "list", Default: "",
			Doc: "Client match pattern list: comma-separated selector=regex pairs, with selector one of " + strings.Join(selectorNames(), ", ") + "; every pattern must match the whole value. An empty list matches all clients."},
	}
}

// Subscription is one parsed and validated client metrics subscription.
// Invariants (established by ParseSubscription): MinIntervalMs <=
// IntervalMs <= MaxIntervalMs; Match holds at most one pattern per
// selector, sorted by selector.
type Subscription struct {
	// Metrics are the requested metric name prefixes as configured;
	// AllMetrics among them means all metrics. Empty means none.
	Metrics []string
	// IntervalMs is the push interval this subscription asks for.
	IntervalMs int32
	// Match are the patterns a client must all match; none matches every
	// client.
	Match []MatchPattern
}

// ConfigError is an invalid client metrics config. Code is the error
// Kafka's controller answers for it: INVALID_REQUEST for an empty
// subscription name, an unknown config or an interval out of range (Kafka
// throws InvalidRequestException there), INVALID_CONFIG for a value that
// does not parse.
type ConfigError struct {
	Key  string // the config name; empty for an empty subscription name
	Code int16
	Msg  string // names the key, the value and what is allowed
}

func (e *ConfigError) Error() string { return "clientmetrics: " + e.Msg }

// ParseSubscription validates and parses the configs of the subscription
// name as Kafka's ClientMetricsConfigs.validate and its ConfigDef parsing
// do. Configs that are absent take their default. A caller that receives
// an empty config map for a name deletes the subscription instead (as
// Kafka's ClientMetricsManager.updateSubscription does), since deleting
// every config of a resource is how IncrementalAlterConfigs removes it.
func ParseSubscription(name string, configs map[string]string) (Subscription, error) {
	if name == "" {
		return Subscription{}, &ConfigError{Code: kerr.InvalidRequest.Code, Msg: "subscription name can't be empty"}
	}
	for _, key := range slices.Sorted(maps.Keys(configs)) {
		if key != ConfigMetrics && key != ConfigIntervalMs && key != ConfigMatch {
			return Subscription{}, &ConfigError{Key: key, Code: kerr.InvalidRequest.Code,
				Msg: fmt.Sprintf("unknown client metrics configuration %q: allowed are %s, %s and %s", key, ConfigMetrics, ConfigIntervalMs, ConfigMatch)}
		}
	}
	sub := Subscription{Metrics: parseList(configs[ConfigMetrics]), IntervalMs: DefaultIntervalMs}
	if v, ok := configs[ConfigIntervalMs]; ok {
		ms, err := parseIntervalMs(v)
		if err != nil {
			return Subscription{}, err
		}
		sub.IntervalMs = ms
	}
	match, err := parseMatchPatterns(parseList(configs[ConfigMatch]))
	if err != nil {
		return Subscription{}, err
	}
	sub.Match = match
	return sub, nil
}

func parseIntervalMs(v string) (int32, error) {
	// Kafka's ConfigDef trims and parses with Integer.parseInt: a sign is
	// allowed, anything outside int32 is not a number of type INT.
	ms, err := strconv.ParseInt(javaTrim(v), 10, 32)
	if err != nil {
		return 0, &ConfigError{Key: ConfigIntervalMs, Code: kerr.InvalidConfig.Code,
			Msg: fmt.Sprintf("invalid value %q for %s: not an integer; allowed are %d to %d (1 hour)", v, ConfigIntervalMs, MinIntervalMs, MaxIntervalMs)}
	}
	if ms < int64(MinIntervalMs) || ms > int64(MaxIntervalMs) {
		return 0, &ConfigError{Key: ConfigIntervalMs, Code: kerr.InvalidRequest.Code,
			Msg: fmt.Sprintf("invalid value %d for %s: interval must be between %d and %d (1 hour)", ms, ConfigIntervalMs, MinIntervalMs, MaxIntervalMs)}
	}
	return int32(ms), nil
}

// parseList is Kafka's ConfigDef LIST parsing of a string: trimmed, empty
// means the empty list, otherwise split on commas with the whitespace
// around them, keeping empty elements ("a,,b" has three).
func parseList(v string) []string {
	v = javaTrim(v)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimFunc(p, isJavaRegexSpace)
	}
	return parts
}

// isJavaRegexSpace is Java's regex \s: [ \t\n\x0B\f\r].
func isJavaRegexSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\x0b' || r == '\f' || r == '\r'
}

// javaTrim is Java's String.trim: it strips every char <= U+0020 at both
// ends, control characters included.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
