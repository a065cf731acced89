package config

import (
	"fmt"
	"strconv"
	"strings"
)

// brokerSynonyms lists where broker key could take its value from, highest
// precedence first, the way Kafka's DescribeConfigs orders synonyms: for each
// key of the key's fallback chain in turn, the value set in l.node (this
// broker's dynamic config), in l.dflt (the cluster-wide dynamic config), in
// l.static (server.properties, environment, flags), then that key's default.
// Values are as written, in each key's own unit.
func brokerSynonyms(l layers, key string) []Synonym {
	chain := append([]fallback{{key, 0}}, fallbacks[key]...)
	var out []Synonym
	for _, f := range chain {
		d, ok := LookupBroker(f.key)
		if !ok {
			panic("config: unknown broker key " + f.key)
		}
		for _, set := range []struct {
			m   map[string]string
			src Source
		}{{l.node, DynamicBroker}, {l.dflt, DynamicDefaultBroker}, {l.static, StaticBroker}} {
			if v, ok := set.m[f.key]; ok {
				out = append(out, Synonym{Name: f.key, Value: v, Source: set.src})
			}
		}
		if d.HasDefault {
			out = append(out, Synonym{Name: f.key, Value: d.Default, Source: Default})
		}
	}
	return out
}

// brokerValue is the effective value of broker key in its own unit, and where
// it came from; ok is false when the value is null.
func brokerValue(l layers, key string) (v string, src Source, ok bool) {
	syns := brokerSynonyms(l, key)
	if len(syns) == 0 {
		return "", Default, false
	}
	s := syns[0]
	return scaled(s.Value, scaleOf(key, s.Name)), s.Source, true
}

// scaleOf is the factor from synonym's unit to key's unit; 0 means none.
func scaleOf(key, synonym string) int64 {
	for _, f := range fallbacks[key] {
		if f.key == synonym {
			return f.scale
		}
	}
	return 0
}

// scaled converts a validated integer v by scale; a negative result is -1,
// "unlimited", as Kafka computes log.retention.ms from .hours.
func scaled(v string, scale int64) string {
	if scale <= 1 {
		return v
	}
	n := mustInt(v)
	if n < 0 {
		return "-1"
	}
	return strconv.FormatInt(n*scale, 10) // hours < 2^31, so n*3.6e6 < 2^63
}

// topicValue is the effective value of topic key: the override, else the
// broker synonym's effective value, else the topic default.
func topicValue(overrides map[string]string, l layers, d *Def) (v string, src Source, ok bool) {
	if v, ok := overrides[d.Name]; ok {
		return strings.TrimSpace(v), DynamicTopic, true
	}
	if d.BrokerSynonym != "" {
		if v, src, ok := brokerValue(l, d.BrokerSynonym); ok {
			return v, src, true
		}
	}
	return d.Default, Default, d.HasDefault
}

// The must* helpers parse values that were validated at the gateway; failure
// is a programmer error.

func mustInt(v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("config: unvalidated integer %q", v))
	}
	return n
}

func mustBool(v string) bool {
	b, err := parseBool(v)
	if err != nil {
		panic(fmt.Sprintf("config: unvalidated boolean %q", v))
	}
	return b
}

func mustDouble(v string) float64 {
	f, err := parseDouble(v)
	if err != nil {
		panic(fmt.Sprintf("config: unvalidated number %q", v))
	}
	return f
}

// getter reads validated values by key; ok is false for null.
type getter func(key string) (v string, ok bool)

func (g getter) str(key string) string {
	v, _ := g(key)
	return v
}

func (g getter) i64(key string) int64 { return mustInt(g.str(key)) }
func (g getter) i32(key string) int32 { return int32(g.i64(key)) } // range checked by Int's type check
func (g getter) i16(key string) int16 { return int16(g.i64(key)) } // range checked by validator
func (g getter) flag(key string) bool { return mustBool(g.str(key)) }
func (g getter) ms(key string) TimeLimit {
	return msLimit(g.i64(key))
}
