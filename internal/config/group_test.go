package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// The broker's consumer-protocol settings must lie within their bounds,
// as Kafka's GroupCoordinatorConfig requires.
func TestConsumerGroupBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     map[string]string
		key     string // "" when valid
		message string
	}{
		{"defaults", nil, "", ""},
		{"a heartbeat over its bound", map[string]string{"group.consumer.heartbeat.interval.ms": "45000"}, "group.consumer.heartbeat.interval.ms", "at most group.consumer.max.heartbeat.interval.ms (15000)"},
		{"a heartbeat under its bound", map[string]string{"group.consumer.heartbeat.interval.ms": "300"}, "group.consumer.heartbeat.interval.ms", "at least group.consumer.min.heartbeat.interval.ms (5000)"},
		{"a heartbeat with its bound lowered", map[string]string{"group.consumer.heartbeat.interval.ms": "300", "group.consumer.min.heartbeat.interval.ms": "100"}, "", ""},
		{"a session under its bound", map[string]string{"group.consumer.session.timeout.ms": "40000"}, "group.consumer.session.timeout.ms", "at least group.consumer.min.session.timeout.ms (45000)"},
		{"bounds upside down", map[string]string{"group.consumer.max.session.timeout.ms": "30000"}, "group.consumer.max.session.timeout.ms", "at least group.consumer.min.session.timeout.ms (45000)"},
		{"bounds equal", map[string]string{"group.consumer.max.session.timeout.ms": "45000"}, "", ""},
		{"a heartbeat as long as the session", map[string]string{
			"group.consumer.min.session.timeout.ms": "10000", "group.consumer.session.timeout.ms": "12000", "group.consumer.heartbeat.interval.ms": "12000",
		}, "group.consumer.heartbeat.interval.ms", "less than group.consumer.session.timeout.ms (12000)"},
	} {
		_, err := LoadBroker("", nil, tc.set)
		var ce *Error
		switch {
		case tc.key == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.key != "" && (!errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.message)):
			t.Errorf("%s: %v, want an error on %s saying %q", tc.name, err, tc.key, tc.message)
		}
	}
}

// A group's own configs: known keys, valid values within the broker's
// bounds, the heartbeat below the session; unset keys take the broker's.
func TestResolveGroup(t *testing.T) {
	b, err := LoadBroker("", nil, map[string]string{"group.consumer.session.timeout.ms": "50000", "group.consumer.min.session.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	consumer := func(session, heartbeat time.Duration) GroupSettings {
		s := defaultShareSettings
		s.SessionTimeout, s.HeartbeatInterval = session, heartbeat
		return s
	}
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		want      GroupSettings
		key       string // "" when valid
	}{
		{"none: the broker's", nil, consumer(50*time.Second, 5*time.Second), ""},
		{"its own session", map[string]string{"consumer.session.timeout.ms": "55000"}, consumer(55*time.Second, 5*time.Second), ""},
		{"its own heartbeat", map[string]string{"consumer.heartbeat.interval.ms": " 6000 "}, consumer(50*time.Second, 6*time.Second), ""},
		{"an unknown key", map[string]string{"streams.session.timeout.ms": "1"}, GroupSettings{}, "streams.session.timeout.ms"},
		{"not a number", map[string]string{"consumer.session.timeout.ms": "soon"}, GroupSettings{}, "consumer.session.timeout.ms"},
		{"a session over the bound", map[string]string{"consumer.session.timeout.ms": "70000"}, GroupSettings{}, "consumer.session.timeout.ms"},
		{"a heartbeat under the bound", map[string]string{"consumer.heartbeat.interval.ms": "4000"}, GroupSettings{}, "consumer.heartbeat.interval.ms"},
		{"a heartbeat as long as the session", map[string]string{"consumer.session.timeout.ms": "12000", "consumer.heartbeat.interval.ms": "12000"}, GroupSettings{}, "consumer.heartbeat.interval.ms"},
	} {
		got, err := ResolveGroup(tc.overrides, b)
		var ce *Error
		switch {
		case tc.key == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		case tc.key != "" && (!errors.As(err, &ce) || ce.Key != tc.key):
			t.Errorf("%s: %v, want an error on %s", tc.name, err, tc.key)
		}
	}
}

// An unknown group config is refused with every group config's name.
func TestResolveGroupUnknownKeyNamesTheConfigs(t *testing.T) {
	_, err := ResolveGroup(map[string]string{"share.delivery.count": "3"}, nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "share.delivery.count" {
		t.Fatalf("%v, want an error on share.delivery.count", err)
	}
	for _, d := range groupDefs {
		if !strings.Contains(err.Error(), d.Name) {
			t.Errorf("%v does not name %s", err, d.Name)
		}
	}
}

// DescribeGroup: an override is GROUP_CONFIG, the rest the broker's value.
func TestDescribeGroup(t *testing.T) {
	b, err := LoadBroker("", nil, map[string]string{"group.consumer.heartbeat.interval.ms": "6000"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range DescribeGroup(map[string]string{"consumer.session.timeout.ms": "50000"}, b) {
		got[e.Name] = e
	}
	if e := got["consumer.session.timeout.ms"]; e.Value != "50000" || e.Source != Group || len(e.Synonyms) < 2 {
		t.Errorf("session: %+v", e)
	}
	if e := got["consumer.heartbeat.interval.ms"]; e.Value != "6000" || e.Source != StaticBroker || e.Synonyms[0].Name != "group.consumer.heartbeat.interval.ms" {
		t.Errorf("heartbeat: %+v", e)
	}
	if len(got) != len(groupDefs) {
		t.Errorf("described %d group configs, want %d", len(got), len(groupDefs))
	}
}

// group.consumer.assignors: the builtin assignors, by short or class name,
// each once; the first is the default.
func TestConsumerAssignors(t *testing.T) {
	for value, want := range map[string][]string{
		"":              {"uniform", "range"},
		"range":         {"range"},
		"range,uniform": {"range", "uniform"},
		"org.apache.kafka.coordinator.group.assignor.UniformAssignor": {"uniform"},
	} {
		set := map[string]string{}
		if value != "" {
			set["group.consumer.assignors"] = value
		}
		b, err := LoadBroker("", nil, set)
		if err != nil || !slices.Equal(b.GroupConsumerAssignors, want) {
			t.Errorf("%q: %v, %v; want %v", value, b, err, want)
		}
	}
	for _, value := range []string{"sticky", "uniform,uniform", "uniform,org.apache.kafka.coordinator.group.assignor.UniformAssignor", "com.example.MyAssignor", " , ", "  "} {
		var ce *Error
		if _, err := LoadBroker("", nil, map[string]string{"group.consumer.assignors": value}); !errors.As(err, &ce) || ce.Key != "group.consumer.assignors" {
			t.Errorf("%q: %v, want an error on group.consumer.assignors", value, err)
		}
	}
}

// group.consumer.migration.policy: Kafka's four values, in any case,
// bidirectional by default; anything else is refused with the values.
func TestMigrationPolicy(t *testing.T) {
	for value, want := range map[string]string{"": "bidirectional", "disabled": "disabled", "DISABLED": "disabled",
		"Upgrade": "upgrade", "downgrade": "downgrade", "bidirectional": "bidirectional", "sideways": ""} {
		set := map[string]string{"group.consumer.migration.policy": value}
		if value == "" {
			set = nil
		}
		b, err := LoadBroker("", nil, set)
		var ce *Error
		switch {
		case want != "" && (err != nil || b.GroupConsumerMigrationPolicy != want):
			t.Errorf("%q: %v, policy %q, want %q", value, err, b.GroupConsumerMigrationPolicy, want)
		case want == "" && (!errors.As(err, &ce) || ce.Key != "group.consumer.migration.policy" || !strings.Contains(err.Error(), "bidirectional")):
			t.Errorf("%q: %v, want an error naming the values", value, err)
		}
	}
}

// The group configs' own ranges, as Kafka's GroupConfig defines them.
func TestGroupConfigDefs(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"share.record.lock.duration.ms", "1000", true},
		{"share.record.lock.duration.ms", "999", false},
		{"consumer.session.timeout.ms", "1", true},
		{"consumer.session.timeout.ms", "0", false},
		{"share.isolation.level", "read_committed", true},
		{"share.isolation.level", "READ_COMMITTED", false},
	} {
		d, ok := LookupGroup(tc.key)
		if !ok {
			t.Fatalf("no group config %s", tc.key)
		}
		if err := d.Check(tc.value); (err == nil) != tc.ok {
			t.Errorf("%s=%s: %v, want ok %v", tc.key, tc.value, err, tc.ok)
		}
	}
}
