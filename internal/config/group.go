package config

import (
	"fmt"
	"strings"
	"time"
)

// groupDefs are the configs of one group (Kafka's GroupConfig, the GROUP
// config resource of KIP-848): a consumer-protocol group's own session
// timeout and heartbeat interval, in place of the broker's
// group.consumer.* values, and a share group's (KIP-932) own session
// timeout, heartbeat interval and record lock duration, in place of the
// broker's group.share.* values, with where it starts reading and which
// transactional records it is given. Kafka's streams.* group configs are
// not here: Strata has no streams groups.
var groupDefs = []Def{
	def("consumer.session.timeout.ms", Int, "45000", "group.consumer.session.timeout.ms", atLeast(1),
		"How long a member of this consumer-protocol group may go without a heartbeat before it is removed; within group.consumer.min/max.session.timeout.ms."),
	def("consumer.heartbeat.interval.ms", Int, "5000", "group.consumer.heartbeat.interval.ms", atLeast(1),
		"How often members of this consumer-protocol group are told to heartbeat; within group.consumer.min/max.heartbeat.interval.ms, less than consumer.session.timeout.ms."),
	def("share.session.timeout.ms", Int, "45000", "group.share.session.timeout.ms", atLeast(1),
		"How long a member of this share group may go without a heartbeat before it is removed; within group.share.min/max.session.timeout.ms."),
	def("share.heartbeat.interval.ms", Int, "5000", "group.share.heartbeat.interval.ms", atLeast(1),
		"How often members of this share group are told to heartbeat; within group.share.min/max.heartbeat.interval.ms, less than share.session.timeout.ms."),
	def("share.record.lock.duration.ms", Int, "30000", "group.share.record.lock.duration.ms", atLeast(1000),
		"How long a member of this share group holds the records it fetched before they are released for delivery to another; within group.share.min/max.record.lock.duration.ms."),
	def("share.auto.offset.reset", String, "latest", "", validShareAutoOffsetReset,
		"Where this share group starts reading a partition it has no state for: latest (the log end), earliest (the log start), or by_duration:<ISO-8601 duration> (the first record with a timestamp at most that long before now), e.g. by_duration:PT1H or by_duration:P1DT2H."),
	def("share.isolation.level", String, "read_uncommitted", "", oneOf("read_uncommitted", "read_committed"),
		"Which records of transactions this share group is given: read_uncommitted, all of them; read_committed, only committed ones, up to the last stable offset."),
}

var groupByName = index(groupDefs)

// groupNames lists the group configs, for the unknown-key error.
var groupNames = func() string {
	var names []string
	for _, d := range sorted(groupDefs) {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}()

// LookupGroup returns the definition of the group config name.
func LookupGroup(name string) (Def, bool) {
	d, ok := groupByName[name]
	return d, ok
}

// GroupSettings are a group's effective settings. A group uses those of
// its type: a consumer-protocol group the first two, a share group the
// Share* ones.
type GroupSettings struct {
	SessionTimeout    time.Duration // consumer.session.timeout.ms
	HeartbeatInterval time.Duration // consumer.heartbeat.interval.ms; less than SessionTimeout

	ShareSessionTimeout     time.Duration        // share.session.timeout.ms
	ShareHeartbeatInterval  time.Duration        // share.heartbeat.interval.ms; less than ShareSessionTimeout
	ShareRecordLockDuration time.Duration        // share.record.lock.duration.ms
	ShareAutoOffsetReset    ShareAutoOffsetReset // share.auto.offset.reset
	ShareReadCommitted      bool                 // share.isolation.level is read_committed
}

// ResolveGroup is a group's effective settings: each key its override,
// else the broker's value (b nil: every default). It checks the overrides
// as Kafka's GroupConfig does: known keys, valid values, each timeout
// within the broker's group.consumer.* or group.share.* min/max bounds,
// each heartbeat below its session timeout. The error is an *Error naming
// the key.
func ResolveGroup(overrides map[string]string, b *Broker) (GroupSettings, error) {
	for _, k := range sortedKeys(overrides) {
		d, ok := groupByName[k]
		if !ok {
			return GroupSettings{}, &Error{Key: k, Value: overrides[k], Msg: "unknown group config; the group configs are " + groupNames}
		}
		if err := d.Check(strings.TrimSpace(overrides[k])); err != nil {
			return GroupSettings{}, err
		}
	}
	l := layersOf(b)
	value := func(name string) string {
		d := groupByName[name]
		v, _, _ := topicValue(overrides, l, &d)
		return v
	}
	bounds := getter(func(k string) (string, bool) { v, _, ok := brokerValue(l, k); return v, ok })
	var s GroupSettings
	for _, c := range []struct {
		key    string
		v      *time.Duration
		lo, hi string
	}{
		{"consumer.session.timeout.ms", &s.SessionTimeout, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
		{"consumer.heartbeat.interval.ms", &s.HeartbeatInterval, "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
		{"share.session.timeout.ms", &s.ShareSessionTimeout, "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
		{"share.heartbeat.interval.ms", &s.ShareHeartbeatInterval, "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
		{"share.record.lock.duration.ms", &s.ShareRecordLockDuration, "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	} {
		text := value(c.key)
		*c.v = msDuration(mustInt(text))
		if err := within(c.key, text, *c.v, bounds, c.lo, c.hi); err != nil {
			return GroupSettings{}, err
		}
	}
	for _, p := range []struct {
		heartbeat, session string
		hv, sv             time.Duration
	}{
		{"consumer.heartbeat.interval.ms", "consumer.session.timeout.ms", s.HeartbeatInterval, s.SessionTimeout},
		{"share.heartbeat.interval.ms", "share.session.timeout.ms", s.ShareHeartbeatInterval, s.ShareSessionTimeout},
	} {
		if p.hv >= p.sv {
			return GroupSettings{}, &Error{Key: p.heartbeat, Value: value(p.heartbeat),
				Msg: fmt.Sprintf("must be less than %s (%s)", p.session, value(p.session))}
		}
	}
	s.ShareAutoOffsetReset = mustShareAutoOffsetReset(value("share.auto.offset.reset"))
	s.ShareReadCommitted = value("share.isolation.level") == "read_committed"
	return s, nil
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
// anything else the broker's value, with its synonyms (the defaults of
// share.auto.offset.reset and share.isolation.level, which have no
// broker key, are DEFAULT_CONFIG). The overrides should have passed
// ResolveGroup.
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
	return checkGroupBounds(g, []boundedKey{
		{"group.consumer.session.timeout.ms", b.GroupConsumerSessionTimeout, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
		{"group.consumer.heartbeat.interval.ms", b.GroupConsumerHeartbeatInterval, "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	}, "group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms", "consumer-protocol members")
}

// boundedKey is a broker key whose value v must lie within the values of
// the broker keys lo and hi.
type boundedKey struct {
	key    string
	v      time.Duration
	lo, hi string
}

// checkGroupBounds checks, in order, that each key's bounds are not upside
// down and that its value lies within them, then that the heartbeat key's
// value is below the session key's, or members (who, in the message) are
// removed between two heartbeats.
func checkGroupBounds(g getter, keys []boundedKey, heartbeat, session, members string) error {
	for _, p := range keys {
		if msDuration(mustInt(g.str(p.hi))) < msDuration(mustInt(g.str(p.lo))) {
			return &Error{Key: p.hi, Value: g.str(p.hi), Msg: fmt.Sprintf("must be at least %s (%s)", p.lo, g.str(p.lo))}
		}
		if err := within(p.key, g.str(p.key), p.v, g, p.lo, p.hi); err != nil {
			err.(*Error).Msg += "; change " + p.key + " or the bound"
			return err
		}
	}
	if msDuration(mustInt(g.str(heartbeat))) >= msDuration(mustInt(g.str(session))) {
		return &Error{Key: heartbeat, Value: g.str(heartbeat),
			Msg: fmt.Sprintf("must be less than %s (%s), or %s are removed between two heartbeats; lower it or raise %s",
				session, g.str(session), members, session)}
	}
	return nil
}
