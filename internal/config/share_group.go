package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// checkShareGroupBounds is Kafka's rule for share groups (KIP-932,
// GroupCoordinatorConfig and ShareGroupConfig): each bound pair in order,
// the broker's session timeout, heartbeat interval and record lock
// duration within them, the heartbeat below the session.
func (b *Broker) checkShareGroupBounds(g getter) error {
	return checkGroupBounds(g, []boundedKey{
		{"group.share.session.timeout.ms", b.GroupShareSessionTimeout, "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
		{"group.share.heartbeat.interval.ms", b.GroupShareHeartbeatInterval, "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
		{"group.share.record.lock.duration.ms", b.GroupShareRecordLockDuration, "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	}, "group.share.heartbeat.interval.ms", "group.share.session.timeout.ms", "share group members")
}

// ResetStrategy is how a share group starts reading a partition it has no
// state for (share.auto.offset.reset). The zero value is invalid.
type ResetStrategy uint8

const (
	ResetLatest     ResetStrategy = iota + 1 // at the log end
	ResetEarliest                            // at the log start
	ResetByDuration                          // at the first record with a timestamp no earlier than a duration before now
)

func (r ResetStrategy) String() string {
	switch r {
	case ResetLatest:
		return "latest"
	case ResetEarliest:
		return "earliest"
	case ResetByDuration:
		return "by_duration"
	}
	return fmt.Sprintf("ResetStrategy(%d)", uint8(r))
}

// ShareAutoOffsetReset is a parsed share.auto.offset.reset.
type ShareAutoOffsetReset struct {
	Strategy ResetStrategy
	// Duration is, for ResetByDuration, how long before now the group
	// starts: not negative, and at most the largest time.Duration (longer
	// ones, which Kafka takes, are cut to it: no log is that old). Zero
	// for the other strategies.
	Duration time.Duration
}

// Earliest reports whether the group starts at the log start.
func (r ShareAutoOffsetReset) Earliest() bool { return r.Strategy == ResetEarliest }

// ByDuration is, for by_duration, how long before now the group starts;
// ok is false for latest and earliest.
func (r ShareAutoOffsetReset) ByDuration() (d time.Duration, ok bool) {
	return r.Duration, r.Strategy == ResetByDuration
}

func (r ShareAutoOffsetReset) String() string {
	if r.Strategy == ResetByDuration {
		return fmt.Sprintf("by_duration %v", r.Duration)
	}
	return r.Strategy.String()
}

// byDurationPrefix starts share.auto.offset.reset's third form,
// by_duration:<ISO-8601 duration>.
const byDurationPrefix = "by_duration:"

// shareResetForms is what share.auto.offset.reset may be, for its errors.
const shareResetForms = "must be latest, earliest or by_duration:<ISO-8601 duration> (PnDTnHnMn.nS, e.g. by_duration:PT1H or by_duration:P1DT2H), in lower case as in Kafka"

// parseShareAutoOffsetReset parses share.auto.offset.reset as Kafka's
// ShareGroupAutoOffsetResetStrategy does: latest, earliest, or
// by_duration: and a duration java.time.Duration.parse takes that is not
// negative. Names are case-sensitive, as in Kafka.
func parseShareAutoOffsetReset(v string) (ShareAutoOffsetReset, error) {
	switch v {
	case "latest":
		return ShareAutoOffsetReset{Strategy: ResetLatest}, nil
	case "earliest":
		return ShareAutoOffsetReset{Strategy: ResetEarliest}, nil
	}
	iso, ok := strings.CutPrefix(v, byDurationPrefix)
	if !ok {
		return ShareAutoOffsetReset{}, errors.New(shareResetForms)
	}
	d, err := parseISODuration(iso)
	if err != nil {
		return ShareAutoOffsetReset{}, fmt.Errorf("has the duration %q, which %v; %s", iso, err, shareResetForms)
	}
	return ShareAutoOffsetReset{Strategy: ResetByDuration, Duration: d}, nil
}

// validShareAutoOffsetReset is share.auto.offset.reset's validator.
func validShareAutoOffsetReset(v string) error {
	_, err := parseShareAutoOffsetReset(v)
	return err
}

// mustShareAutoOffsetReset parses a validated share.auto.offset.reset.
func mustShareAutoOffsetReset(v string) ShareAutoOffsetReset {
	r, err := parseShareAutoOffsetReset(v)
	if err != nil {
		panic(fmt.Sprintf("config: unvalidated share.auto.offset.reset %q", v))
	}
	return r
}

// isoDuration is the text java.time.Duration.parse takes, in any case: an
// optional sign, P, days, then T and hours, minutes and seconds, each part
// optional and signed, the seconds with up to nine decimals after . or ,.
// Groups: 1 sign, 2 days, 3 the T part, 4 hours, 5 minutes, 6 seconds, 7
// decimals.
var isoDuration = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// parseISODuration parses an ISO-8601 duration as java.time.Duration.parse
// does (PT1H, P1DT2H30M, PT0.5S, -PT1H, PT2H-30M; no years, months or
// weeks), with its limits (each part and their sum in seconds fit a
// 64-bit integer), and refuses a negative one. A duration longer than the
// largest time.Duration (about 292 years) is cut to it.
func parseISODuration(text string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatchIndex(text)
	if m == nil {
		return 0, errors.New("is not an ISO-8601 duration")
	}
	part := func(i int) (string, bool) {
		if m[2*i] < 0 {
			return "", false
		}
		return text[m[2*i]:m[2*i+1]], true
	}
	_, hasDays := part(2)
	_, hasHours := part(4)
	_, hasMinutes := part(5)
	seconds, hasSeconds := part(6)
	_, hasT := part(3)
	switch {
	case hasT && !hasHours && !hasMinutes && !hasSeconds:
		return 0, errors.New("has a T but no hours, minutes or seconds after it")
	case !hasDays && !hasHours && !hasMinutes && !hasSeconds:
		return 0, errors.New("has no days, hours, minutes or seconds")
	}
	var total int64
	for _, u := range []struct {
		group int
		secs  int64
	}{{2, 86400}, {4, 3600}, {5, 60}, {6, 1}} {
		s, ok := part(u.group)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > math.MaxInt64/u.secs || n < math.MinInt64/u.secs {
			return 0, errors.New("is too long")
		}
		if total, ok = addExact(total, n*u.secs); !ok {
			return 0, errors.New("is too long")
		}
	}
	var nanos int64 // in (-1e9, 1e9), with the seconds' sign as written
	if dec, ok := part(7); ok && dec != "" {
		nanos, _ = strconv.ParseInt((dec + "000000000")[:9], 10, 64)
		if strings.HasPrefix(seconds, "-") {
			nanos = -nanos
		}
	}
	if nanos < 0 { // normalize to nanos in [0, 1e9), as Duration.ofSeconds does
		var ok bool
		if total, ok = addExact(total, -1); !ok {
			return 0, errors.New("is too long")
		}
		nanos += int64(time.Second)
	}
	if sign, _ := part(1); sign == "-" {
		// -(total + nanos) = -(total+1) + (1s - nanos), nanos kept in [0, 1s).
		switch {
		case nanos > 0:
			total, nanos = -(total + 1), int64(time.Second)-nanos
		case total == math.MinInt64:
			return 0, errors.New("is too long")
		default:
			total = -total
		}
	}
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	switch {
	case total < 0:
		return 0, errors.New("is negative")
	case total > maxSeconds || total == maxSeconds && nanos > math.MaxInt64%int64(time.Second):
		return math.MaxInt64, nil
	}
	return time.Duration(total)*time.Second + time.Duration(nanos), nil
}

// addExact is a+b, ok false when it overflows an int64 (Java's
// Math.addExact).
func addExact(a, b int64) (int64, bool) {
	c := a + b
	if (a > 0 && b > 0 && c < 0) || (a < 0 && b < 0 && c >= 0) {
		return 0, false
	}
	return c, true
}
