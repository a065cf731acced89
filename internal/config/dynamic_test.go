package config

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateDynamic(t *testing.T) {
	tests := []struct {
		name       string
		in         map[string]string
		want       map[string]string
		notDynamic []string // a *NotDynamicError naming these
		badKey     string   // an *Error naming this key
	}{
		{name: "none", in: map[string]string{}, want: map[string]string{}},
		{name: "topic defaults, trimmed",
			in:   map[string]string{"log.retention.ms": " 60000 ", "log.cleanup.policy": "compact,delete", "message.max.bytes": "2048"},
			want: map[string]string{"log.retention.ms": "60000", "log.cleanup.policy": "compact,delete", "message.max.bytes": "2048"}},
		{name: "longer units of a chain", in: map[string]string{"log.retention.hours": "2", "log.roll.hours": "1"},
			want: map[string]string{"log.retention.hours": "2", "log.roll.hours": "1"}},
		{name: "static keys, all named", in: map[string]string{"num.partitions": "3", "log.dirs": "/x", "log.retention.ms": "1"},
			notDynamic: []string{"log.dirs", "num.partitions"}},
		{name: "the flusher's period is no synonym", in: map[string]string{"log.flush.scheduler.interval.ms": "10"},
			notDynamic: []string{"log.flush.scheduler.interval.ms"}},
		{name: "unknown key", in: map[string]string{"log.retention.weeks": "1"}, badKey: "log.retention.weeks"},
		{name: "bad value", in: map[string]string{"log.retention.ms": "-5"}, badKey: "log.retention.ms"},
		{name: "bad list value", in: map[string]string{"log.cleanup.policy": "forever"}, badKey: "log.cleanup.policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateDynamic(tt.in)
			var nd *NotDynamicError
			var ce *Error
			switch {
			case tt.notDynamic != nil:
				if !errors.As(err, &nd) || !reflect.DeepEqual(nd.Keys, tt.notDynamic) {
					t.Fatalf("err %v, want not dynamic %v", err, tt.notDynamic)
				}
			case tt.badKey != "":
				if !errors.As(err, &ce) || ce.Key != tt.badKey {
					t.Fatalf("err %v, want a config error on %s", err, tt.badKey)
				}
			case err != nil || !maps.Equal(got, tt.want):
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// Every topic config's broker synonym can change at run time.
func TestTopicSynonymsAreDynamic(t *testing.T) {
	for _, d := range topicDefs {
		if d.BrokerSynonym != "" && !IsDynamic(d.BrokerSynonym) {
			t.Errorf("%s: broker synonym %s is not dynamic", d.Name, d.BrokerSynonym)
		}
	}
	for _, k := range []string{"num.partitions", "listeners", "log.dirs", "node.id", "log.cleaner.enable"} {
		if IsDynamic(k) {
			t.Errorf("%s is dynamic", k)
		}
	}
}

// A topic's retention.ms comes from its override, else this broker's
// dynamic value, else the cluster-wide one, else server.properties, else
// Kafka's default; within a layer the fallback chain is followed, and a
// key of the chain set in a lower layer still wins over a longer-unit key
// set higher up, as Kafka merges the dynamic configs over the static ones.
func TestDynamicPrecedence(t *testing.T) {
	static := mustLoad(t, "", nil, map[string]string{"log.retention.ms": "1000"})
	week := 7 * 24 * time.Hour
	tests := []struct {
		name      string
		b         *Broker
		overrides map[string]string
		want      time.Duration
		source    Source
	}{
		{"kafka default", mustLoad(t, "", nil, nil), nil, week, Default},
		{"static", static, nil, time.Second, StaticBroker},
		{"cluster-wide", static.WithDynamic(Dynamic{Default: map[string]string{"log.retention.ms": "2000"}}), nil, 2 * time.Second, DynamicDefaultBroker},
		{"this broker's", static.WithDynamic(Dynamic{Default: map[string]string{"log.retention.ms": "2000"}, Node: map[string]string{"log.retention.ms": "3000"}}),
			nil, 3 * time.Second, DynamicBroker},
		{"topic override", static.WithDynamic(Dynamic{Node: map[string]string{"log.retention.ms": "3000"}}),
			map[string]string{"retention.ms": "4000"}, 4 * time.Second, DynamicTopic},
		{"static ms over dynamic hours", static.WithDynamic(Dynamic{Default: map[string]string{"log.retention.hours": "1"}}),
			nil, time.Second, StaticBroker},
		{"dynamic hours over kafka default", mustLoad(t, "", nil, nil).WithDynamic(Dynamic{Node: map[string]string{"log.retention.hours": "1"}}),
			nil, time.Hour, DynamicBroker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveTopic(tt.overrides, tt.b)
			if err != nil || !got.Retention.Set || got.Retention.Duration != tt.want {
				t.Fatalf("retention %+v, %v; want %v", got.Retention, err, tt.want)
			}
			if e := find(t, DescribeTopic(tt.overrides, tt.b), "retention.ms"); e.Source != tt.source {
				t.Errorf("described from %v, want %v", e.Source, tt.source)
			}
		})
	}
}

// Synonyms list, for each key of the chain, this broker's value, the
// cluster-wide one, the static one and the default, as Kafka orders them.
func TestDynamicSynonymsOrder(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"log.retention.ms": "1000"}).WithDynamic(Dynamic{
		Default: map[string]string{"log.retention.ms": "2000", "log.retention.hours": "5"},
		Node:    map[string]string{"log.retention.ms": "3000"},
	})
	want := []Synonym{
		{Name: "log.retention.ms", Value: "3000", Source: DynamicBroker},
		{Name: "log.retention.ms", Value: "2000", Source: DynamicDefaultBroker},
		{Name: "log.retention.ms", Value: "1000", Source: StaticBroker},
		{Name: "log.retention.hours", Value: "5", Source: DynamicDefaultBroker},
		{Name: "log.retention.hours", Value: "168", Source: Default},
	}
	if got := find(t, DescribeBroker(b), "log.retention.ms").Synonyms; !reflect.DeepEqual(got, want) {
		t.Errorf("broker synonyms\n got %+v\nwant %+v", got, want)
	}
	if got := find(t, DescribeTopic(nil, b), "retention.ms").Synonyms; !reflect.DeepEqual(got, want) {
		t.Errorf("topic synonyms\n got %+v\nwant %+v", got, want)
	}
}

// The cluster-wide resource describes the keys set on it alone, without
// this broker's own values.
func TestDescribeBrokerDefault(t *testing.T) {
	b := mustLoad(t, "", nil, nil).WithDynamic(Dynamic{
		Default: map[string]string{"log.segment.bytes": "4096", "log.retention.hours": "5"},
		Node:    map[string]string{"log.segment.bytes": "8192", "message.max.bytes": "100"},
	})
	got := DescribeBrokerDefault(b)
	if len(got) != 2 || got[0].Name != "log.retention.hours" || got[1].Name != "log.segment.bytes" {
		t.Fatalf("entries %+v, want log.retention.hours and log.segment.bytes", got)
	}
	if e := got[1]; e.Value != "4096" || e.Source != DynamicDefaultBroker || e.ReadOnly {
		t.Errorf("log.segment.bytes = %+v, want 4096 from DYNAMIC_DEFAULT_BROKER_CONFIG, writable", e)
	}
	if len(DescribeBrokerDefault(mustLoad(t, "", nil, nil))) != 0 {
		t.Error("a broker with no dynamic configs describes some on the default resource")
	}
}

// TestDynamicListenerKeystores: a listener's keystore and truststore files
// are dynamic on one broker's resource, not the cluster-wide one; they must
// name a TLS listener of the broker; and TLSFor reads them over the static
// settings.
func TestDynamicListenerKeystores(t *testing.T) {
	ks, ts := "listener.name.ssl.ssl.keystore.location", "listener.name.ssl.ssl.truststore.location"
	for _, k := range []string{ks, ts} {
		if !IsDynamic(k) {
			t.Errorf("%s is not dynamic", k)
		}
	}
	for _, k := range []string{"ssl.keystore.location", "listener.name.ssl.ssl.client.auth", "listener.name.ssl.ssl.enabled.protocols"} {
		if IsDynamic(k) {
			t.Errorf("%s is dynamic", k)
		}
	}
	var scope *PerBrokerOnlyError
	if err := CheckClusterWide(map[string]string{ks: "/a.pem", "log.retention.ms": "1"}); !errors.As(err, &scope) || !slices.Equal(scope.Keys, []string{ks}) {
		t.Errorf("cluster-wide keystore: err %v", err)
	}
	if err := CheckClusterWide(map[string]string{"log.retention.ms": "1"}); err != nil {
		t.Errorf("cluster-wide retention: %v", err)
	}

	b, err := LoadBroker("", nil, map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9093", "ssl.keystore.location": "/static.pem"})
	if err != nil {
		t.Fatal(err)
	}
	dyn := b.WithDynamic(Dynamic{Node: map[string]string{ks: "/renewed.pem"}})
	if err := dyn.CheckDynamicTLS(); err != nil {
		t.Fatal(err)
	}
	if got := dyn.TLSFor("SSL").KeystoreLocation; got != "/renewed.pem" {
		t.Errorf("keystore %q, want the dynamic /renewed.pem", got)
	}
	if got := b.TLSFor("SSL").KeystoreLocation; got != "/static.pem" {
		t.Errorf("static keystore %q", got)
	}
	for key, want := range map[string]string{
		"listener.name.plaintext.ssl.keystore.location": "protocol is PLAINTEXT",
		"listener.name.other.ssl.keystore.location":     "OTHER",
	} {
		err := b.WithDynamic(Dynamic{Node: map[string]string{key: "/x.pem"}}).CheckDynamicTLS()
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != key || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want an *Error naming it and %q", key, err, want)
		}
	}
}
