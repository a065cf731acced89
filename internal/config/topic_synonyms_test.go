package config

import (
	"maps"
	"testing"
)

// brokerSynonymValues holds, for every broker synonym of a topic config, a
// valid value other than its default.
var brokerSynonymValues = map[string]string{
	"log.cleanup.policy":                      "compact",
	"compression.type":                        "gzip",
	"compression.gzip.level":                  "5",
	"compression.lz4.level":                   "10",
	"compression.zstd.level":                  "4",
	"log.cleaner.delete.retention.ms":         "1000",
	"log.segment.delete.delay.ms":             "1000",
	"log.flush.interval.messages":             "1000",
	"log.flush.interval.ms":                   "1000",
	"log.index.interval.bytes":                "1000",
	"log.cleaner.max.compaction.lag.ms":       "1000",
	"message.max.bytes":                       "1000",
	"log.message.format.version":              "2.8",
	"log.message.downconversion.enable":       "false",
	"log.message.timestamp.after.max.ms":      "1000",
	"log.message.timestamp.before.max.ms":     "1000",
	"log.message.timestamp.difference.max.ms": "1000",
	"log.message.timestamp.type":              "LogAppendTime",
	"log.cleaner.min.cleanable.ratio":         "0.25",
	"log.cleaner.min.compaction.lag.ms":       "1000",
	"min.insync.replicas":                     "2",
	"log.preallocate":                         "true",
	"unclean.leader.election.enable":          "true",
	"log.retention.bytes":                     "1000",
	"log.retention.ms":                        "1000",
	"log.segment.bytes":                       "2048",
	"log.index.size.max.bytes":                "4096",
	"log.roll.jitter.ms":                      "1000",
	"log.roll.ms":                             "1000",
	"log.local.retention.ms":                  "500",
	"log.local.retention.bytes":               "500",
	"log.remote.copy.lag.ms":                  "1000",
	"log.remote.copy.lag.bytes":               "1000",
}

// Every topic config without an override takes its broker synonym's
// value, as Kafka's LogConfig does: a broker default that did not reach
// topics would be ignored silently.
func TestEveryBrokerSynonymReachesTopics(t *testing.T) {
	unused := maps.Clone(brokerSynonymValues)
	for _, d := range topicDefs {
		if d.BrokerSynonym == "" {
			continue
		}
		delete(unused, d.BrokerSynonym)
		v, ok := brokerSynonymValues[d.BrokerSynonym]
		if !ok {
			t.Errorf("%s: no test value for its broker synonym %s", d.Name, d.BrokerSynonym)
			continue
		}
		b := mustLoad(t, "", nil, map[string]string{d.BrokerSynonym: v})
		if e := find(t, DescribeTopic(nil, b), d.Name); e.Value != v || e.Source != StaticBroker {
			t.Errorf("%s with %s=%s: %q from %v, want it from the broker", d.Name, d.BrokerSynonym, v, e.Value, e.Source)
		}
		if _, err := ResolveTopic(nil, b); err != nil {
			t.Errorf("%s with %s=%s: %v", d.Name, d.BrokerSynonym, v, err)
		}
	}
	for k := range unused {
		t.Errorf("%s is no longer the broker synonym of a topic config", k)
	}
}
