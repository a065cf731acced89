package config

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// defaultShareSettings are ResolveGroup's settings with every default.
var defaultShareSettings = GroupSettings{
	SessionTimeout:          45 * time.Second,
	HeartbeatInterval:       5 * time.Second,
	ShareSessionTimeout:     45 * time.Second,
	ShareHeartbeatInterval:  5 * time.Second,
	ShareRecordLockDuration: 30 * time.Second,
	ShareAutoOffsetReset:    ShareAutoOffsetReset{Strategy: ResetLatest},
}

// The share group broker configs have Kafka's defaults (but the state
// topic's replication factor and min ISR, 1 as for __transaction_state),
// typed on Broker; they are read-only, as the group.consumer.* ones.
func TestShareGroupBrokerDefaults(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"group.share.session.timeout.ms", b.GroupShareSessionTimeout, 45 * time.Second},
		{"group.share.min.session.timeout.ms", b.GroupShareMinSessionTimeout, 45 * time.Second},
		{"group.share.max.session.timeout.ms", b.GroupShareMaxSessionTimeout, 60 * time.Second},
		{"group.share.heartbeat.interval.ms", b.GroupShareHeartbeatInterval, 5 * time.Second},
		{"group.share.min.heartbeat.interval.ms", b.GroupShareMinHeartbeatInterval, 5 * time.Second},
		{"group.share.max.heartbeat.interval.ms", b.GroupShareMaxHeartbeatInterval, 15 * time.Second},
		{"group.share.max.size", b.GroupShareMaxSize, int32(200)},
		{"group.share.record.lock.duration.ms", b.GroupShareRecordLockDuration, 30 * time.Second},
		{"group.share.min.record.lock.duration.ms", b.GroupShareMinRecordLockDuration, 15 * time.Second},
		{"group.share.max.record.lock.duration.ms", b.GroupShareMaxRecordLockDuration, 60 * time.Second},
		{"group.share.delivery.count.limit", b.GroupShareDeliveryCountLimit, int16(5)},
		{"group.share.partition.max.record.locks", b.GroupSharePartitionMaxRecordLocks, int32(2000)},
		{"group.share.max.share.sessions", b.GroupShareMaxShareSessions, int32(2000)},
		{"share.coordinator.state.topic.num.partitions", b.ShareStateTopicNumPartitions, int32(50)},
		{"share.coordinator.state.topic.replication.factor", b.ShareStateTopicReplicationFactor, int16(1)},
		{"share.coordinator.state.topic.segment.bytes", b.ShareStateTopicSegmentBytes, int32(104857600)},
		{"share.coordinator.state.topic.min.isr", b.ShareStateTopicMinISR, int32(1)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.key, c.got, c.want)
		}
		d, ok := LookupBroker(c.key)
		switch {
		case !ok:
			t.Errorf("%s is not a broker config", c.key)
		case !d.ReadOnly || IsDynamic(c.key) || d.NoEffect:
			t.Errorf("%s: read-only %v, dynamic %v, no effect %v; want a read-only config that applies", c.key, d.ReadOnly, IsDynamic(c.key), d.NoEffect)
		}
		if e := find(t, DescribeBroker(b), c.key); e.Source != Default || e.Value != d.Default || e.IsNull {
			t.Errorf("%s described as %+v", c.key, e)
		}
	}
	var nd *NotDynamicError
	if _, err := ValidateDynamic(map[string]string{"group.share.record.lock.duration.ms": "20000"}); !errors.As(err, &nd) {
		t.Errorf("a dynamic group.share.record.lock.duration.ms: %v, want a NotDynamicError", err)
	}
}

// Each share group broker config takes its bounds and refuses what is
// beyond them, naming the key.
func TestShareGroupBrokerValueBounds(t *testing.T) {
	for _, c := range []struct {
		key    string
		lo, hi string // "" when unbounded
	}{
		{"group.share.session.timeout.ms", "1", ""},
		{"group.share.min.session.timeout.ms", "1", ""},
		{"group.share.max.session.timeout.ms", "1", ""},
		{"group.share.heartbeat.interval.ms", "1", ""},
		{"group.share.min.heartbeat.interval.ms", "1", ""},
		{"group.share.max.heartbeat.interval.ms", "1", ""},
		{"group.share.max.size", "1", "1000"},
		{"group.share.record.lock.duration.ms", "1000", "3600000"},
		{"group.share.min.record.lock.duration.ms", "1000", "30000"},
		{"group.share.max.record.lock.duration.ms", "30000", "3600000"},
		{"group.share.delivery.count.limit", "2", "10"},
		{"group.share.partition.max.record.locks", "100", "10000"},
		{"group.share.max.share.sessions", "1", ""},
		{"share.coordinator.state.topic.num.partitions", "1", ""},
		{"share.coordinator.state.topic.replication.factor", "1", ""},
		{"share.coordinator.state.topic.segment.bytes", "1024", ""},
		{"share.coordinator.state.topic.min.isr", "1", ""},
	} {
		d, ok := LookupBroker(c.key)
		if !ok {
			t.Fatalf("%s is not a broker config", c.key)
		}
		check := func(v string, valid bool) {
			t.Helper()
			err := d.Check(v)
			var ce *Error
			switch {
			case valid && err != nil:
				t.Errorf("%s=%s: %v", c.key, v, err)
			case !valid && (!errors.As(err, &ce) || ce.Key != c.key):
				t.Errorf("%s=%s: %v, want an error on %s", c.key, v, err, c.key)
			}
		}
		check(c.lo, true)
		check(step(c.lo, -1), false)
		check("many", false)
		if c.hi != "" {
			check(c.hi, true)
			check(step(c.hi, 1), false)
		}
	}
	// A Short is a Short, as in Kafka.
	d, _ := LookupBroker("share.coordinator.state.topic.replication.factor")
	if err := d.Check("40000"); err == nil {
		t.Error("share.coordinator.state.topic.replication.factor=40000 is accepted")
	}
}

// step is the integer v moved by by.
func step(v string, by int64) string { return strconv.FormatInt(mustInt(v)+by, 10) }

// The broker's share group settings must lie within their bounds, and the
// heartbeat below the session, as Kafka's GroupCoordinatorConfig and
// ShareGroupConfig require; the error names the key and the fix.
func TestShareGroupBounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      map[string]string
		key      string // "" when valid
		messages []string
	}{
		{"defaults", nil, "", nil},
		{"a session under its bound", map[string]string{"group.share.session.timeout.ms": "40000"}, "group.share.session.timeout.ms",
			[]string{"at least group.share.min.session.timeout.ms (45000)", "change group.share.session.timeout.ms or the bound"}},
		{"a session over its bound", map[string]string{"group.share.session.timeout.ms": "70000"}, "group.share.session.timeout.ms",
			[]string{"at most group.share.max.session.timeout.ms (60000)"}},
		{"a session with its bound raised", map[string]string{"group.share.session.timeout.ms": "70000", "group.share.max.session.timeout.ms": "90000"}, "", nil},
		{"session bounds upside down", map[string]string{"group.share.max.session.timeout.ms": "30000"}, "group.share.max.session.timeout.ms",
			[]string{"at least group.share.min.session.timeout.ms (45000)"}},
		{"a heartbeat under its bound", map[string]string{"group.share.heartbeat.interval.ms": "300"}, "group.share.heartbeat.interval.ms",
			[]string{"at least group.share.min.heartbeat.interval.ms (5000)"}},
		{"a heartbeat over its bound", map[string]string{"group.share.heartbeat.interval.ms": "20000"}, "group.share.heartbeat.interval.ms",
			[]string{"at most group.share.max.heartbeat.interval.ms (15000)"}},
		{"a heartbeat with its bound lowered", map[string]string{"group.share.heartbeat.interval.ms": "300", "group.share.min.heartbeat.interval.ms": "100"}, "", nil},
		{"heartbeat bounds upside down", map[string]string{"group.share.min.heartbeat.interval.ms": "20000"}, "group.share.max.heartbeat.interval.ms",
			[]string{"at least group.share.min.heartbeat.interval.ms (20000)"}},
		{"a heartbeat as long as the session", map[string]string{
			"group.share.min.session.timeout.ms": "10000", "group.share.session.timeout.ms": "12000",
			"group.share.max.heartbeat.interval.ms": "20000", "group.share.heartbeat.interval.ms": "12000",
		}, "group.share.heartbeat.interval.ms", []string{"less than group.share.session.timeout.ms (12000)", "share group members", "raise group.share.session.timeout.ms"}},
		{"a lock under its bound", map[string]string{"group.share.record.lock.duration.ms": "10000"}, "group.share.record.lock.duration.ms",
			[]string{"at least group.share.min.record.lock.duration.ms (15000)", "change group.share.record.lock.duration.ms or the bound"}},
		{"a lock over its bound", map[string]string{"group.share.record.lock.duration.ms": "90000"}, "group.share.record.lock.duration.ms",
			[]string{"at most group.share.max.record.lock.duration.ms (60000)"}},
		{"a lock with its bounds moved", map[string]string{"group.share.record.lock.duration.ms": "5000", "group.share.min.record.lock.duration.ms": "1000"}, "", nil},
		{"a long lock with its bound raised", map[string]string{"group.share.record.lock.duration.ms": "600000", "group.share.max.record.lock.duration.ms": "3600000"}, "", nil},
	} {
		_, err := LoadBroker("", nil, tc.set)
		if tc.key == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%s: %v, want an error on %s", tc.name, err, tc.key)
			continue
		}
		for _, m := range tc.messages {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %v, want it to say %q", tc.name, err, m)
			}
		}
	}
}

// A share group's own configs: within the broker's group.share.* bounds,
// the heartbeat below the session; unset keys take the broker's values;
// share.auto.offset.reset and share.isolation.level as Kafka takes them.
func TestResolveShareGroup(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"group.share.session.timeout.ms": "50000", "group.share.min.session.timeout.ms": "10000",
		"group.share.record.lock.duration.ms": "20000",
	})
	brokers := defaultShareSettings
	brokers.ShareSessionTimeout, brokers.ShareRecordLockDuration = 50*time.Second, 20*time.Second
	with := func(change func(*GroupSettings)) GroupSettings {
		s := brokers
		change(&s)
		return s
	}
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		want      GroupSettings
		key       string // "" when valid
	}{
		{"none: the broker's", nil, brokers, ""},
		{"its own session", map[string]string{"share.session.timeout.ms": "55000"},
			with(func(s *GroupSettings) { s.ShareSessionTimeout = 55 * time.Second }), ""},
		{"its own heartbeat", map[string]string{"share.heartbeat.interval.ms": " 6000 "},
			with(func(s *GroupSettings) { s.ShareHeartbeatInterval = 6 * time.Second }), ""},
		{"its own lock", map[string]string{"share.record.lock.duration.ms": "60000"},
			with(func(s *GroupSettings) { s.ShareRecordLockDuration = time.Minute }), ""},
		{"earliest", map[string]string{"share.auto.offset.reset": "earliest"},
			with(func(s *GroupSettings) { s.ShareAutoOffsetReset = ShareAutoOffsetReset{Strategy: ResetEarliest} }), ""},
		{"by duration", map[string]string{"share.auto.offset.reset": "by_duration:P1DT2H"},
			with(func(s *GroupSettings) {
				s.ShareAutoOffsetReset = ShareAutoOffsetReset{Strategy: ResetByDuration, Duration: 26 * time.Hour}
			}), ""},
		{"read_committed", map[string]string{"share.isolation.level": "read_committed"},
			with(func(s *GroupSettings) { s.ShareReadCommitted = true }), ""},
		{"read_uncommitted", map[string]string{"share.isolation.level": "read_uncommitted"}, brokers, ""},
		{"share and consumer keys together", map[string]string{"share.session.timeout.ms": "20000", "consumer.session.timeout.ms": "46000"},
			with(func(s *GroupSettings) { s.ShareSessionTimeout, s.SessionTimeout = 20*time.Second, 46*time.Second }), ""},

		{"a session over the bound", map[string]string{"share.session.timeout.ms": "70000"}, GroupSettings{}, "share.session.timeout.ms"},
		{"a session under the bound", map[string]string{"share.session.timeout.ms": "9000"}, GroupSettings{}, "share.session.timeout.ms"},
		{"a session of 0", map[string]string{"share.session.timeout.ms": "0"}, GroupSettings{}, "share.session.timeout.ms"},
		{"a heartbeat under the bound", map[string]string{"share.heartbeat.interval.ms": "4000"}, GroupSettings{}, "share.heartbeat.interval.ms"},
		{"a heartbeat over the bound", map[string]string{"share.heartbeat.interval.ms": "16000"}, GroupSettings{}, "share.heartbeat.interval.ms"},
		{"a heartbeat as long as the session", map[string]string{"share.session.timeout.ms": "12000", "share.heartbeat.interval.ms": "12000"},
			GroupSettings{}, "share.heartbeat.interval.ms"},
		{"a lock under the bound", map[string]string{"share.record.lock.duration.ms": "14000"}, GroupSettings{}, "share.record.lock.duration.ms"},
		{"a lock under Kafka's least", map[string]string{"share.record.lock.duration.ms": "999"}, GroupSettings{}, "share.record.lock.duration.ms"},
		{"a lock over the bound", map[string]string{"share.record.lock.duration.ms": "61000"}, GroupSettings{}, "share.record.lock.duration.ms"},
		{"a lock that is not a number", map[string]string{"share.record.lock.duration.ms": "1m"}, GroupSettings{}, "share.record.lock.duration.ms"},
		{"an unknown reset", map[string]string{"share.auto.offset.reset": "none"}, GroupSettings{}, "share.auto.offset.reset"},
		{"a reset in upper case", map[string]string{"share.auto.offset.reset": "EARLIEST"}, GroupSettings{}, "share.auto.offset.reset"},
		{"a negative duration", map[string]string{"share.auto.offset.reset": "by_duration:-PT1H"}, GroupSettings{}, "share.auto.offset.reset"},
		{"an isolation level in upper case", map[string]string{"share.isolation.level": "READ_COMMITTED"}, GroupSettings{}, "share.isolation.level"},
		{"an unknown isolation level", map[string]string{"share.isolation.level": "serializable"}, GroupSettings{}, "share.isolation.level"},
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
	if got, err := ResolveGroup(nil, nil); err != nil || got != defaultShareSettings {
		t.Errorf("every default: %+v, %v; want %+v", got, err, defaultShareSettings)
	}
}

// A share group's heartbeat must be below its session even when only one
// of them is its own.
func TestResolveShareGroupHeartbeatBelowBrokerSession(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"group.share.min.session.timeout.ms": "5000", "group.share.session.timeout.ms": "10000"})
	_, err := ResolveGroup(map[string]string{"share.heartbeat.interval.ms": "12000"}, b)
	checkLoadErr(t, err, "share.heartbeat.interval.ms", "less than share.session.timeout.ms (10000)")
	_, err = ResolveGroup(map[string]string{"share.session.timeout.ms": "5000"}, b)
	checkLoadErr(t, err, "share.heartbeat.interval.ms", "less than share.session.timeout.ms (5000)")
}

// share.auto.offset.reset: Kafka's three forms, by_duration with an
// ISO-8601 duration as java.time.Duration.parse reads it, not negative.
func TestShareAutoOffsetReset(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  ShareAutoOffsetReset // zero: refused
	}{
		{"latest", ShareAutoOffsetReset{Strategy: ResetLatest}},
		{"earliest", ShareAutoOffsetReset{Strategy: ResetEarliest}},
		{"by_duration:PT1H", ShareAutoOffsetReset{ResetByDuration, time.Hour}},
		{"by_duration:P1DT2H", ShareAutoOffsetReset{ResetByDuration, 26 * time.Hour}},
		{"by_duration:P2D", ShareAutoOffsetReset{ResetByDuration, 48 * time.Hour}},
		{"by_duration:PT0S", ShareAutoOffsetReset{ResetByDuration, 0}},
		{"by_duration:pt15m", ShareAutoOffsetReset{ResetByDuration, 15 * time.Minute}},
		{"by_duration:PT1.5S", ShareAutoOffsetReset{ResetByDuration, 1500 * time.Millisecond}},
		{"by_duration:PT0,000000001S", ShareAutoOffsetReset{ResetByDuration, time.Nanosecond}},
		{"by_duration:PT1.S", ShareAutoOffsetReset{ResetByDuration, time.Second}},
		{"by_duration:P1DT1H1M1.1S", ShareAutoOffsetReset{ResetByDuration, 25*time.Hour + time.Minute + 1100*time.Millisecond}},
		{"by_duration:+PT1H", ShareAutoOffsetReset{ResetByDuration, time.Hour}},
		{"by_duration:PT2H-30M", ShareAutoOffsetReset{ResetByDuration, 90 * time.Minute}},
		{"by_duration:-PT-1H", ShareAutoOffsetReset{ResetByDuration, time.Hour}},
		{"by_duration:PT1H-0.5S", ShareAutoOffsetReset{ResetByDuration, time.Hour - 500*time.Millisecond}},
		{"by_duration:-PT-0.5S", ShareAutoOffsetReset{ResetByDuration, 500 * time.Millisecond}},
		{"by_duration:P-0DT0S", ShareAutoOffsetReset{ResetByDuration, 0}},
		{"by_duration:-PT0S", ShareAutoOffsetReset{ResetByDuration, 0}},
		{"by_duration:P200000D", ShareAutoOffsetReset{ResetByDuration, math.MaxInt64}},                // beyond time.Duration: cut to it
		{"by_duration:PT9223372036.854775807S", ShareAutoOffsetReset{ResetByDuration, math.MaxInt64}}, // the largest exactly
		{"by_duration:PT9223372036.854775806S", ShareAutoOffsetReset{ResetByDuration, math.MaxInt64 - 1}},
		{"by_duration:PT9223372036.9S", ShareAutoOffsetReset{ResetByDuration, math.MaxInt64}},
		{"by_duration:PT9223372036854775807S", ShareAutoOffsetReset{ResetByDuration, math.MaxInt64}},

		{"", ShareAutoOffsetReset{}},
		{"none", ShareAutoOffsetReset{}},
		{"LATEST", ShareAutoOffsetReset{}},
		{"Earliest", ShareAutoOffsetReset{}},
		{" latest", ShareAutoOffsetReset{}},
		{"by_duration", ShareAutoOffsetReset{}},
		{"by_duration:", ShareAutoOffsetReset{}},
		{"BY_DURATION:PT1H", ShareAutoOffsetReset{}},
		{"by_duration:PT1H ", ShareAutoOffsetReset{}},
		{"by_duration:1h", ShareAutoOffsetReset{}},
		{"by_duration:invalid", ShareAutoOffsetReset{}},
		{"by_duration:-PT1H", ShareAutoOffsetReset{}},
		{"by_duration:PT-1S", ShareAutoOffsetReset{}},
		{"by_duration:-PT0.5S", ShareAutoOffsetReset{}},
		{"by_duration:PT-0.5S", ShareAutoOffsetReset{}},
		{"by_duration:P", ShareAutoOffsetReset{}},
		{"by_duration:PT", ShareAutoOffsetReset{}},
		{"by_duration:P1DT", ShareAutoOffsetReset{}},
		{"by_duration:P1Y", ShareAutoOffsetReset{}},
		{"by_duration:P1M", ShareAutoOffsetReset{}},
		{"by_duration:P1W", ShareAutoOffsetReset{}},
		{"by_duration:PT1H1D", ShareAutoOffsetReset{}},
		{"by_duration:PT.5S", ShareAutoOffsetReset{}},
		{"by_duration:PT1.0000000001S", ShareAutoOffsetReset{}},
		{"by_duration:PT1.5H", ShareAutoOffsetReset{}},
		{"by_duration:P١D", ShareAutoOffsetReset{}},                    // digits are ASCII only
		{"by_duration:P106751991167301D", ShareAutoOffsetReset{}},      // days in seconds overflow a long, as in Java
		{"by_duration:PT9223372036854775808S", ShareAutoOffsetReset{}}, // not a long
		{"by_duration:P106751991167300DT86400S", ShareAutoOffsetReset{}},
	} {
		d, _ := LookupGroup("share.auto.offset.reset")
		err := d.Check(tc.value)
		if tc.want == (ShareAutoOffsetReset{}) {
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "share.auto.offset.reset" || !strings.Contains(err.Error(), "by_duration:<ISO-8601 duration>") {
				t.Errorf("%q: %v, want an error on share.auto.offset.reset naming the forms", tc.value, err)
			}
			continue
		}
		got, perr := parseShareAutoOffsetReset(tc.value)
		if err != nil || perr != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.value, got, err, tc.want)
		}
	}
}

// The errors of share.auto.offset.reset say what is wrong with the
// duration.
func TestShareAutoOffsetResetErrorsSayWhy(t *testing.T) {
	d, _ := LookupGroup("share.auto.offset.reset")
	for value, why := range map[string]string{
		"by_duration:-PT1H":             "is negative",
		"by_duration:P1DT":              "has a T but no hours, minutes or seconds",
		"by_duration:P":                 "has no days, hours, minutes or seconds",
		"by_duration:P1Y":               "is not an ISO-8601 duration",
		"by_duration:P999999999999999D": "is too long",
		"first":                         "must be latest, earliest or by_duration:",
	} {
		if err := d.Check(value); err == nil || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line saying %q", value, err, why)
		}
	}
}

func TestShareAutoOffsetResetAccessors(t *testing.T) {
	for _, tc := range []struct {
		r        ShareAutoOffsetReset
		earliest bool
		by       time.Duration
		byOK     bool
		text     string
	}{
		{ShareAutoOffsetReset{Strategy: ResetLatest}, false, 0, false, "latest"},
		{ShareAutoOffsetReset{Strategy: ResetEarliest}, true, 0, false, "earliest"},
		{ShareAutoOffsetReset{ResetByDuration, time.Hour}, false, time.Hour, true, "by_duration 1h0m0s"},
	} {
		by, ok := tc.r.ByDuration()
		if tc.r.Earliest() != tc.earliest || by != tc.by || ok != tc.byOK || tc.r.String() != tc.text {
			t.Errorf("%+v: earliest %v, by %v %v, %q", tc.r, tc.r.Earliest(), by, ok, tc.r.String())
		}
	}
	if s := ResetStrategy(0).String(); s != "ResetStrategy(0)" {
		t.Errorf("the zero strategy prints %q", s)
	}
}

// DescribeGroup describes the share group configs: an override is
// GROUP_CONFIG, then the broker key it stands in for; without one, the
// broker key's value (or the default, for the keys without a broker key).
func TestDescribeShareGroupConfigs(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{"group.share.heartbeat.interval.ms": "6000"})
	entries := DescribeGroup(map[string]string{
		"share.session.timeout.ms": "50000", "share.auto.offset.reset": "by_duration:PT1H",
	}, b)
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name >= entries[i].Name {
			t.Fatalf("entries not sorted: %s before %s", entries[i-1].Name, entries[i].Name)
		}
	}
	for _, tc := range []struct {
		key      string
		value    string
		source   Source
		synonyms []Synonym
	}{
		{"share.session.timeout.ms", "50000", Group, []Synonym{
			{Name: "share.session.timeout.ms", Value: "50000", Source: Group},
			{Name: "group.share.session.timeout.ms", Value: "45000", Source: Default},
		}},
		{"share.heartbeat.interval.ms", "6000", StaticBroker, []Synonym{
			{Name: "group.share.heartbeat.interval.ms", Value: "6000", Source: StaticBroker},
			{Name: "group.share.heartbeat.interval.ms", Value: "5000", Source: Default},
		}},
		{"share.record.lock.duration.ms", "30000", Default, []Synonym{
			{Name: "group.share.record.lock.duration.ms", Value: "30000", Source: Default},
		}},
		{"share.auto.offset.reset", "by_duration:PT1H", Group, []Synonym{
			{Name: "share.auto.offset.reset", Value: "by_duration:PT1H", Source: Group},
		}},
		{"share.isolation.level", "read_uncommitted", Default, nil},
	} {
		e := find(t, entries, tc.key)
		d, _ := LookupGroup(tc.key)
		if e.Value != tc.value || e.IsNull || e.Source != tc.source || !reflect.DeepEqual(e.Synonyms, tc.synonyms) ||
			e.Type != d.Type || e.Doc == "" || e.Sensitive {
			t.Errorf("%s: %+v, want %s from %v with synonyms %+v", tc.key, e, tc.value, tc.source, tc.synonyms)
		}
	}
}
