package clientmetrics

import (
	"strconv"
	"strings"
)

// DescribedValue is a set config value as DescribeConfigs shows it: Kafka's
// ConfigDef.convertToString of the parsed value, so a list is its trimmed
// elements joined by commas and interval.ms the integer it parses to. A
// value that does not parse (configs are validated before they are
// stored, so only a programmer's error) and an unknown key are shown as
// they are.
func DescribedValue(key, value string) string {
	switch key {
	case ConfigMetrics, ConfigMatch:
		return strings.Join(parseList(value), ",")
	case ConfigIntervalMs:
		if ms, err := parseIntervalMs(value); err == nil {
			return strconv.Itoa(int(ms))
		}
	}
	return value
}
