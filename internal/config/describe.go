package config

import "maps"

// DescribeTopic describes every topic config of a topic with the given
// overrides on broker b (nil: all defaults), sorted by name, with synonyms in
// precedence order: the override (DYNAMIC_TOPIC_CONFIG), then the broker
// synonym chain (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
// STATIC_BROKER_CONFIG, DEFAULT_CONFIG). Values are in the
// topic key's unit: with log.retention.hours=24, retention.ms is 86400000.
// The overrides should have passed ValidateTopicOverrides.
func DescribeTopic(overrides map[string]string, b *Broker) []Entry {
	return describeOverridden(TopicDefs(), overrides, layersOf(b), DynamicTopic)
}

// describeOverridden describes defs (sorted) of a resource with overrides
// on a broker's layers l: an override's source is own, anything else comes
// from the broker synonym chain, or the default.
func describeOverridden(defs []Def, overrides map[string]string, l layers, own Source) []Entry {
	out := make([]Entry, 0, len(defs))
	for i := range defs {
		d := &defs[i]
		v, src, ok := topicValue(overrides, l, d)
		var syns []Synonym
		if src == DynamicTopic {
			src = own
			syns = append(syns, Synonym{Name: d.Name, Value: v, Source: own})
		}
		if d.BrokerSynonym != "" {
			syns = append(syns, brokerSynonyms(l, d.BrokerSynonym)...)
		}
		out = append(out, entry(d, v, src, ok, syns))
	}
	return out
}

// DescribeBroker describes every broker config of b, sorted by name. A key
// with a fallback chain (log.retention.ms ← .minutes ← .hours) takes its value
// from the first synonym that has one, converted to the key's unit. Keys of a
// pattern (listener.name.sasl_ssl.plain.sasl.jaas.config) are described when
// they are set, as Kafka describes the keys it was given; they are sensitive,
// so their values are null.
func DescribeBroker(b *Broker) []Entry {
	l := layersOf(b)
	defs := BrokerDefs()
	for _, k := range patternKeysIn(l) {
		if _, fixed := brokerByName[k]; !fixed {
			d, ok := LookupBroker(k)
			if !ok {
				panic("config: unvalidated broker key " + k)
			}
			defs = append(defs, d)
		}
	}
	defs = sorted(defs)
	out := make([]Entry, 0, len(defs))
	for i := range defs {
		d := &defs[i]
		v, src, ok := brokerValue(l, d.Name)
		if src == Default {
			v = b.impliedDefault(d.Name, v)
		}
		out = append(out, entry(d, v, src, ok, brokerSynonyms(l, d.Name)))
	}
	return out
}

// entry builds an Entry, hiding the values of sensitive configs as Kafka does
// (reported as null).
func entry(d *Def, v string, src Source, ok bool, syns []Synonym) Entry {
	e := Entry{
		Name: d.Name, Value: v, IsNull: !ok, Source: src,
		ReadOnly: d.ReadOnly, Sensitive: d.Sensitive, Type: d.Type, Doc: d.Doc,
		Synonyms: syns,
	}
	if d.Sensitive {
		e.Value, e.IsNull = "", true
		for i := range e.Synonyms {
			e.Synonyms[i].Value, e.Synonyms[i].IsNull = "", true
		}
	}
	return e
}

// patternKeysIn lists the keys set in any layer of l, once each, sorted:
// the pattern keys (listener-prefixed ones) among them are described too.
func patternKeysIn(l layers) []string {
	set := make(map[string]string, len(l.static)+len(l.node)+len(l.dflt))
	for _, m := range []map[string]string{l.static, l.node, l.dflt} {
		maps.Copy(set, m)
	}
	return sortedKeys(set)
}
