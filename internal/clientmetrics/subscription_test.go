package clientmetrics

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// mustParse parses a subscription a test needs to be valid.
func mustParse(t testing.TB, configs map[string]string) Subscription {
	t.Helper()
	s, err := ParseSubscription("sub", configs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSubscription(t *testing.T) {
	type want struct {
		metrics    []string
		intervalMs int32
		match      []string // selector=regex
	}
	for _, tc := range []struct {
		name    string
		configs map[string]string
		want    want
	}{
		{"defaults", map[string]string{}, want{nil, DefaultIntervalMs, nil}},
		{"Kafka's test subscription", map[string]string{
			"metrics":     "org.apache.kafka.client.producer.partition.queue.,org.apache.kafka.client.producer.partition.latency",
			"interval.ms": "30000",
			"match":       "client_software_name=apache-kafka-java,client_software_version=3.5.*",
		}, want{
			[]string{"org.apache.kafka.client.producer.partition.queue.", "org.apache.kafka.client.producer.partition.latency"}, 30000,
			[]string{"client_software_name=apache-kafka-java", "client_software_version=3.5.*"},
		}},
		{"all metrics", map[string]string{"metrics": "*"}, want{[]string{"*"}, DefaultIntervalMs, nil}},
		{"list whitespace trimmed around commas, empty elements kept", map[string]string{"metrics": "  a ,\tb c ,, d  "},
			want{[]string{"a", "b c", "", "d"}, DefaultIntervalMs, nil}},
		{"a blank list is empty", map[string]string{"metrics": " \t", "match": ""}, want{nil, DefaultIntervalMs, nil}},
		{"interval lower bound", map[string]string{"interval.ms": "100"}, want{nil, 100, nil}},
		{"interval upper bound", map[string]string{"interval.ms": "3600000"}, want{nil, 3600000, nil}},
		{"interval trimmed and signed", map[string]string{"interval.ms": " +250 "}, want{nil, 250, nil}},
		{"spaces around selector and regex", map[string]string{"match": " client_id = producer-.* "}, want{nil, DefaultIntervalMs, []string{"client_id=producer-.*"}}},
		{"trailing '=' dropped as Java's split does", map[string]string{"match": "client_id=abc=="}, want{nil, DefaultIntervalMs, []string{"client_id=abc"}}},
		{"later pattern of a selector wins, sorted by selector", map[string]string{"match": "client_source_port=1,client_id=a,client_id=b"},
			want{nil, DefaultIntervalMs, []string{"client_id=b", "client_source_port=1"}}},
		{"every selector", map[string]string{"match": "client_instance_id=x,client_id=x,client_software_name=x,client_software_version=x,client_source_address=x,client_source_port=x"},
			want{nil, DefaultIntervalMs, []string{"client_instance_id=x", "client_id=x", "client_software_name=x", "client_software_version=x", "client_source_address=x", "client_source_port=x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSubscription("sub", tc.configs)
			if err != nil {
				t.Fatal(err)
			}
			var match []string
			for _, p := range s.Match {
				match = append(match, p.Selector.String()+"="+p.Regex)
			}
			got := want{s.Metrics, s.IntervalMs, match}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseSubscriptionErrors(t *testing.T) {
	invalidRequest, invalidConfig := kerr.InvalidRequest.Code, kerr.InvalidConfig.Code
	for _, tc := range []struct {
		name    string
		subName string
		configs map[string]string
		key     string
		code    int16
		msg     []string // in the message
	}{
		{"empty name", "", nil, "", invalidRequest, []string{"name"}},
		{"unknown config", "s", map[string]string{"random": "x"}, "random", invalidRequest, []string{`"random"`, "metrics, interval.ms and match"}},
		{"interval below range", "s", map[string]string{"interval.ms": "99"}, ConfigIntervalMs, invalidRequest, []string{"interval.ms", "99", "100 and 3600000"}},
		{"interval above range", "s", map[string]string{"interval.ms": "3600001"}, ConfigIntervalMs, invalidRequest, []string{"3600001", "100 and 3600000"}},
		{"interval not a number", "s", map[string]string{"interval.ms": "5m"}, ConfigIntervalMs, invalidConfig, []string{`"5m"`, "interval.ms", "100 to 3600000"}},
		{"interval empty", "s", map[string]string{"interval.ms": ""}, ConfigIntervalMs, invalidConfig, []string{"not an integer"}},
		{"interval beyond int32", "s", map[string]string{"interval.ms": "4294967396"}, ConfigIntervalMs, invalidConfig, []string{"not an integer"}},
		{"pattern without '='", "s", map[string]string{"match": "client_id"}, ConfigMatch, invalidConfig, []string{`"client_id"`, "client_source_port"}},
		{"pattern with an empty regex", "s", map[string]string{"match": "client_id="}, ConfigMatch, invalidConfig, []string{"one '='"}},
		{"pattern with two '='", "s", map[string]string{"match": "client_id=a=b"}, ConfigMatch, invalidConfig, []string{"one '='"}},
		{"empty pattern in the list", "s", map[string]string{"match": "client_id=a,"}, ConfigMatch, invalidConfig, []string{`""`}},
		{"unknown selector", "s", map[string]string{"match": "client_name=a"}, ConfigMatch, invalidConfig, []string{"client_instance_id, client_id"}},
		{"selector '*'", "s", map[string]string{"match": "*=.*"}, ConfigMatch, invalidConfig, []string{"selector"}},
		{"regex does not compile", "s", map[string]string{"match": "client_id=(a"}, ConfigMatch, invalidConfig, []string{"RE2"}},
		{"Java-only backreference", "s", map[string]string{"match": `client_id=(a)\1`}, ConfigMatch, invalidConfig, []string{"RE2"}},
		{"regex escaping the anchors", "s", map[string]string{"match": "client_id=a)|(b"}, ConfigMatch, invalidConfig, []string{"RE2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSubscription(tc.subName, tc.configs)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *ConfigError", err)
			}
			if ce.Key != tc.key || ce.Code != tc.code {
				t.Errorf("key %q code %d, want key %q code %d", ce.Key, ce.Code, tc.key, tc.code)
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q lacks %q", err.Error(), m)
				}
			}
		})
	}
}

func TestConfigDefs(t *testing.T) {
	defs := ConfigDefs()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if d.Doc == "" || d.Type == "" {
			t.Errorf("%s: no doc or type", d.Name)
		}
	}
	if want := []string{"metrics", "interval.ms", "match"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	if defs[1].Default != "300000" {
		t.Errorf("interval.ms default %q", defs[1].Default)
	}
	// Every default parses to the defaults of an empty config.
	configs := map[string]string{}
	for _, d := range defs {
		configs[d.Name] = d.Default
	}
	if got, want := mustParse(t, configs), mustParse(t, nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults parse to %+v, want %+v", got, want)
	}
}
