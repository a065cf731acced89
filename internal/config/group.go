package config

import (
	"fmt"
	"strings"
	"time"
)

// groupDefs are the configs of one consumer group (Kafka's GroupConfig,
// the GROUP config resource of KIP-848): its own session timeout and
// heartbeat interval, in place of the broker's group.consumer.* values.
// Kafka's share.* and streams.* group configs are not here: Strata has no
// share or streams groups.
var groupDefs = []Def{
	def("consumer.session.timeout.ms", Int, "45000", "group.consumer.session.timeout.ms", atLeast(1),
		"How long a member of this consumer-protocol group may go without a heartbeat before it is removed; within group.consumer.min/max.session.timeout.ms."),
	def("consumer.heartbeat.interval.ms", Int, "5000", "group.consumer.heartbeat.interval.ms", atLeast(1),
		"How often members of this consumer-protocol group are told to heartbeat; within group.consumer.min/max.heartbeat.interval.ms, less than consumer.session.timeout.ms."),
}

var groupByName = index(groupDefs)

// LookupGroup returns the definition of the group config name.
func LookupGroup(name string) (Def, bool) {
	d, ok := groupByName[name]
	return d, ok
}

// GroupSettings are a consumer group's effective settings.
type GroupSettings struct {
	SessionTimeout    time.Duration // consumer.session.timeout.ms
	HeartbeatInterval time.Duration // consumer.heartbeat.interval.ms
}

// ResolveGroup is a consumer group's effective settings: each key its
// override, else the broker's value (b nil: every default). It checks the
// overrides as Kafka's GroupConfig does: known keys, valid values, each
// within the broker's group.consumer.min/max bounds, the heartbeat below
// the session timeout. The error is an *Error naming the key.
func ResolveGroup(overrides map[string]string, b *Broker) (GroupSettings, error) {
	for _, k := range sortedKeys(overrides) {
		d, ok := groupByName[k]
		if !ok {
			return GroupSettings{}, &Error{Key: k, Value: overrides[k], Msg: "unknown group config; a group has consumer.session.timeout.ms and consumer.heartbeat.interval.ms"}
		}
		if err := d.Check(strings.TrimSpace(overrides[k])); err != nil {
			return GroupSettings{}, err
		}
	}
	l := layersOf(b)
	value := func(name string) (string, time.Duration) {
		d := groupByName[name]
		v, _, _ := topicValue(overrides, l, &d)
		return v, msDuration(mustInt(v))
	}
	sessionText, session := value("consumer.session.timeout.ms")
	heartbeatText, heartbeat := value("consumer.heartbeat.interval.ms")
	bounds := getter(func(k string) (string, bool) { v, _, ok := brokerValue(l, k); return v, ok })
	for _, c := range []struct {
		key, text string
		v         time.Duration
		lo, hi    string
	}{
		{"consumer.session.timeout.ms", sessionText, session, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
		{"consumer.heartbeat.interval.ms", heartbeatText, heartbeat, "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	} {
		if err := within(c.key, c.text, c.v, bounds, c.lo, c.hi); err != nil {
			return GroupSettings{}, err
		}
	}
	if heartbeat >= session {
		return GroupSettings{}, &Error{Key: "consumer.heartbeat.interval.ms", Value: heartbeatText,
			Msg: fmt.Sprintf("must be less than consumer.session.timeout.ms (%s)", sessionText)}
	}
	return GroupSettings{SessionTimeout: session, HeartbeatInterval: heartbeat}, nil
}

// within checks that v (key's value, text as given) lies in the bounds
// the broker configs lo and hi set.
func within(key, text string, v time.Duration, g getter, lo, hi string) error {
	switch {
	case v < msDuration(mustInt(g.str(lo))):
		return &Error{Key: key, Value: text, Msg: fmt.Sprintf("must be at least %s (%s)", lo, g.str(lo))}
	case v > msDuration(mustInt(g.str(hi))):
		return &Error{Key: key, Value: text, Msg: fmt.Sprintf("must be at most %s (%s)", hi, g.str(hi))}
	}
	return nil
}

// DescribeGroup describes every group config of a group with the given
// overrides on broker b, sorted by name: an override is GROUP_CONFIG,
// anything else the broker's value, with its synonyms. The overrides
// should have passed ResolveGroup.
func DescribeGroup(overrides map[string]string, b *Broker) []Entry {
	return describeOverridden(sorted(groupDefs), overrides, layersOf(b), Group)
}

// builtinAssignors maps the names group.consumer.assignors may give Kafka's
// two builtin server assignors (its short names and its class names) to
// the short names.
var builtinAssignors = map[string]string{
	"uniform": "uniform",
	"range":   "range",
	"org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
	"org.apache.kafka.coordinator.group.assignor.RangeAssignor":   "range",
}

// consumerAssignors is group.consumer.assignors: builtin assignors, each
// once. Kafka also loads custom assignors by class name; Strata loads no
// Java classes.
func consumerAssignors(v string) error {
	seen := map[string]bool{}
	items := splitList(v)
	if len(items) == 0 {
		return fmt.Errorf("must name at least one assignor: uniform, range")
	}
	for _, it := range items {
		name, ok := builtinAssignors[it]
		switch {
		case !ok:
			return fmt.Errorf("names %s, which is not a server assignor here: the assignors are uniform and range (Strata loads no Java classes)", it)
		case seen[name]:
			return fmt.Errorf("names the %s assignor twice", name)
		}
		seen[name] = true
	}
	return nil
}

// assignorNames is a validated group.consumer.assignors as short names.
func assignorNames(v string) []string {
	var out []string
	for _, it := range splitList(v) {
		out = append(out, builtinAssignors[it])
	}
	return out
}

// migrationPolicy is group.consumer.migration.policy: Kafka's values, in
// any case.
func migrationPolicy(v string) error {
	switch strings.ToLower(v) {
	case "disabled", "upgrade", "downgrade", "bidirectional":
		return nil
	}
	return fmt.Errorf("must be one of disabled, upgrade, downgrade, bidirectional")
}

// checkConsumerGroupBounds is Kafka's GroupCoordinatorConfig rule for the
// consumer protocol: each bound pair in order, the broker's session
// timeout and heartbeat interval within them, the heartbeat below the
// session.
func (b *Broker) checkConsumerGroupBounds(g getter) error {
	for _, p := range []struct {
		key    string
		v      time.Duration
		lo, hi string
	}{
		{"group.consumer.session.timeout.ms", b.GroupConsumerSessionTimeout, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
		{"group.consumer.heartbeat.interval.ms", b.GroupConsumerHeartbeatInterval, "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	} {
		if msDuration(mustInt(g.str(p.hi))) < msDuration(mustInt(g.str(p.lo))) {
			return &Error{Key: p.hi, Value: g.str(p.hi), Msg: fmt.Sprintf("must be at least %s (%s)", p.lo, g.str(p.lo))}
		}
		if err := within(p.key, g.str(p.key), p.v, g, p.lo, p.hi); err != nil {
			err.(*Error).Msg += "; change " + p.key + " or the bound"
			return err
		}
	}
	if b.GroupConsumerHeartbeatInterval >= b.GroupConsumerSessionTimeout {
		return &Error{Key: "group.consumer.heartbeat.interval.ms", Value: g.str("group.consumer.heartbeat.interval.ms"),
			Msg: fmt.Sprintf("must be less than group.consumer.session.timeout.ms (%s), or consumer-protocol members are removed between two heartbeats; lower it or raise group.consumer.session.timeout.ms",
				g.str("group.consumer.session.timeout.ms"))}
	}
	return nil
}
