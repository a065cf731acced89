package config

import (
	"reflect"
	"testing"
)

func find(t *testing.T, entries []Entry, name string) Entry {
	t.Helper()
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no entry %s", name)
	return Entry{}
}

func TestDescribeTopicSources(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"log.retention.hours": "24", "log.segment.bytes": "2048"})
	overrides := map[string]string{"cleanup.policy": "compact", "segment.bytes": "4096"}
	entries := DescribeTopic(overrides, b)
	if len(entries) != len(topicDefs) {
		t.Fatalf("%d entries, want %d", len(entries), len(topicDefs))
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name >= entries[i].Name {
			t.Fatalf("entries not sorted: %s before %s", entries[i-1].Name, entries[i].Name)
		}
	}
	tests := []struct {
		name   string
		value  string
		source Source
		syns   []Synonym
	}{
		{"cleanup.policy", "compact", DynamicTopic, []Synonym{
			{Name: "cleanup.policy", Value: "compact", Source: DynamicTopic},
			{Name: "log.cleanup.policy", Value: "delete", Source: Default},
		}},
		{"segment.bytes", "4096", DynamicTopic, []Synonym{
			{Name: "segment.bytes", Value: "4096", Source: DynamicTopic},
			{Name: "log.segment.bytes", Value: "2048", Source: StaticBroker},
			{Name: "log.segment.bytes", Value: "1073741824", Source: Default},
		}},
		// Converted to ms; synonyms keep each key's own unit.
		{"retention.ms", "86400000", StaticBroker, []Synonym{
			{Name: "log.retention.hours", Value: "24", Source: StaticBroker},
			{Name: "log.retention.hours", Value: "168", Source: Default},
		}},
		{"segment.ms", "604800000", Default, []Synonym{
			{Name: "log.roll.hours", Value: "168", Source: Default},
		}},
		{"flush.ms", "9223372036854775807", Default, []Synonym{
			{Name: "log.flush.scheduler.interval.ms", Value: "9223372036854775807", Source: Default},
		}},
		{"remote.storage.enable", "false", Default, nil},
	}
	for _, tt := range tests {
		e := find(t, entries, tt.name)
		if e.Value != tt.value || e.IsNull || e.Source != tt.source || !reflect.DeepEqual(e.Synonyms, tt.syns) {
			t.Errorf("%s = %q (null %v) from %v, synonyms %+v; want %q from %v, synonyms %+v",
				tt.name, e.Value, e.IsNull, e.Source, e.Synonyms, tt.value, tt.source, tt.syns)
		}
		if e.ReadOnly || e.Sensitive || e.Doc == "" || e.Type == 0 {
			t.Errorf("%s: bad metadata %+v", tt.name, e)
		}
	}
	if e := find(t, entries, "cleanup.policy"); e.Type != List {
		t.Errorf("cleanup.policy type %v", e.Type)
	}
}

func TestDescribeBroker(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"log.retention.minutes": "30", "node.id": "3"})
	entries := DescribeBroker(b)
	if len(entries) != len(brokerDefs) {
		t.Fatalf("%d entries, want %d", len(entries), len(brokerDefs))
	}
	tests := []struct {
		name   string
		value  string
		null   bool
		source Source
	}{
		{"log.retention.ms", "1800000", false, StaticBroker},
		{"log.retention.minutes", "30", false, StaticBroker},
		{"log.retention.hours", "168", false, Default},
		{"node.id", "3", false, StaticBroker},
		{"broker.id", "3", false, StaticBroker},
		{"num.partitions", "1", false, Default},
		{"advertised.listeners", "", true, Default},
		{"strata.remote.s3.bucket", "", true, Default},
		{"strata.metrics.listener", "", false, Default},
	}
	for _, tt := range tests {
		e := find(t, entries, tt.name)
		if e.Value != tt.value || e.IsNull != tt.null || e.Source != tt.source || e.ReadOnly == IsDynamic(tt.name) {
			t.Errorf("%s = %q null=%v from %v read-only=%v; want %q null=%v from %v, read-only unless dynamic",
				tt.name, e.Value, e.IsNull, e.Source, e.ReadOnly, tt.value, tt.null, tt.source)
		}
	}
	e := find(t, entries, "log.retention.ms")
	want := []Synonym{
		{Name: "log.retention.minutes", Value: "30", Source: StaticBroker},
		{Name: "log.retention.hours", Value: "168", Source: Default},
	}
	if !reflect.DeepEqual(e.Synonyms, want) {
		t.Errorf("log.retention.ms synonyms %+v, want %+v", e.Synonyms, want)
	}
}

func TestDescribeHidesSensitive(t *testing.T) {
	d := Def{Name: "secret", Type: Password, Sensitive: true}
	e := entry(&d, "hunter2", StaticBroker, true, []Synonym{{Name: "secret", Value: "hunter2", Source: StaticBroker}})
	if e.Value != "" || !e.IsNull || e.Synonyms[0].Value != "" || !e.Synonyms[0].IsNull {
		t.Fatalf("sensitive value leaked: %+v", e)
	}
}

// A negative retention in minutes or hours is described in ms as -1
// (unlimited), as Kafka computes log.retention.ms, not scaled to -60000.
func TestDescribeNegativeRetentionIsMinusOne(t *testing.T) {
	for _, key := range []string{"log.retention.minutes", "log.retention.hours"} {
		b := mustLoad(t, "", nil, map[string]string{key: "-1"})
		if e := find(t, DescribeTopic(nil, b), "retention.ms"); e.Value != "-1" {
			t.Errorf("%s=-1: retention.ms described as %q, want -1", key, e.Value)
		}
	}
}
