package config

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The log cleaner's settings that change at run time, as Kafka's
// LogCleaner reconfigures them: its threads, their key map memory, their
// backoff and their I/O rate.
const cleanerIORateKey = "log.cleaner.io.max.bytes.per.second"

var cleanerDynamicKeys = []string{"log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.backoff.ms", cleanerIORateKey}

// doubleMax is Kafka's default of log.cleaner.io.max.bytes.per.second,
// Double.MaxValue: no throttling.
var doubleMax = strconv.FormatFloat(1.7976931348623157e308, 'E', -1, 64)

// CleanerSettings are the log cleaner's dynamic settings (Broker.Cleaner).
type CleanerSettings struct {
	Threads     int32         // log.cleaner.threads; 0: no cleaning
	DedupeBytes int64         // log.cleaner.dedupe.buffer.size, shared out among the threads
	Backoff     time.Duration // log.cleaner.backoff.ms
	// IOBytesPerSecond is log.cleaner.io.max.bytes.per.second, over every
	// thread; the default (Double.MaxValue) does not throttle.
	IOBytesPerSecond float64
}

// Cleaner is the log cleaner's settings, read through the dynamic layers
// (this broker's, the cluster-wide, then the static configs).
func (b *Broker) Cleaner() CleanerSettings {
	return CleanerSettings{
		Threads:          int32(mustInt(b.value("log.cleaner.threads"))),
		DedupeBytes:      mustInt(b.value("log.cleaner.dedupe.buffer.size")),
		Backoff:          msDuration(mustInt(b.value("log.cleaner.backoff.ms"))),
		IOBytesPerSecond: mustDouble(b.value(cleanerIORateKey)),
	}
}

// CheckCleanerChange refuses what Kafka's LogCleaner.validateReconfiguration
// refuses of a dynamic change of the threads of a running cleaner
// (checkThreadsChange). A broker without a cleaner
// (log.cleaner.enable=false) checks nothing: the value waits for a restart.
func CheckCleanerChange(enabled bool, running, next CleanerSettings) error {
	if !enabled {
		return nil
	}
	return checkThreadsChange("log.cleaner.threads", running.Threads, next.Threads)
}

// checkThreadsChange is the rule Kafka applies to a dynamic change of a
// thread count (LogCleaner's and DynamicThreadPool's validateReconfiguration):
// at least 1, at least half the count running and at most double it.
func checkThreadsChange(key string, running, next int32) error {
	if next == running {
		return nil
	}
	v := strconv.Itoa(int(next))
	switch {
	case next < 1:
		return &Error{Key: key, Value: v, Msg: "must be at least 1 at run time (0 is for server.properties and a restart)"}
	case next < running/2:
		return &Error{Key: key, Value: v,
			Msg: fmt.Sprintf("cannot be reduced to less than half the current value %d at once; step down", running)}
	case next > running*2:
		return &Error{Key: key, Value: v,
			Msg: fmt.Sprintf("cannot be increased to more than double the current value %d at once; step up", running)}
	}
	return nil
}

// positiveNumber allows numbers above 0.
func positiveNumber(v string) error {
	f, err := parseDouble(v)
	if err != nil || !(f > 0) {
		return errors.New("must be a positive number")
	}
	return nil
}
