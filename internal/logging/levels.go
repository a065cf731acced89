package logging

import (
	"fmt"
	"log/slog"
	"strings"
)

// Root is the name of the root logger.
const Root = "root"

// The slog levels of Kafka's TRACE and FATAL, past slog's own.
const (
	levelTrace = slog.LevelDebug - 4
	levelFatal = slog.LevelError + 4
)

// MostVerbose is the level of the most verbose records a logger may be set
// to let through (TRACE): the level a Registry's output handler should
// let through.
const MostVerbose = levelTrace

// kafkaLevels are Kafka's log level names (LogLevelConfig.VALID_LOG_LEVELS),
// from the most verbose.
var kafkaLevels = []struct {
	name  string
	level slog.Level
}{
	{"TRACE", levelTrace},
	{"DEBUG", slog.LevelDebug},
	{"INFO", slog.LevelInfo},
	{"WARN", slog.LevelWarn},
	{"ERROR", slog.LevelError},
	{"FATAL", levelFatal},
}

// ParseLevel reads one of Kafka's level names, in capitals as Kafka takes
// them.
func ParseLevel(name string) (slog.Level, error) {
	for _, l := range kafkaLevels {
		if l.name == name {
			return l.level, nil
		}
	}
	return 0, fmt.Errorf("%q is not a log level; use one of %s", name, strings.Join(LevelNames(), ", "))
}

// LevelName is Kafka's name of a level: the name of the most verbose of
// Kafka's levels that l reaches.
func LevelName(l slog.Level) string {
	name := kafkaLevels[0].name
	for _, k := range kafkaLevels {
		if l >= k.level {
			name = k.name
		}
	}
	return name
}

// LevelNames are Kafka's level names, from the most verbose.
func LevelNames() []string {
	names := make([]string, len(kafkaLevels))
	for i, l := range kafkaLevels {
		names[i] = l.name
	}
	return names
}

// parent is the name of the logger a logger without a level of its own
// takes its level from: the name without its last dotted part, or the
// root.
func parent(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return Root
}

// effectiveLevels resolves the level of each of names from the levels set
// (own, which has the root's): its own, else its nearest ancestor's that
// has one, else the root's. Ancestors need not be among names.
func effectiveLevels(names []string, own map[string]slog.Level) map[string]slog.Level {
	out := make(map[string]slog.Level, len(names)+1)
	out[Root] = own[Root]
	for _, n := range names {
		at := n
		for at != Root {
			if _, ok := own[at]; ok {
				break
			}
			at = parent(at)
		}
		out[n] = own[at]
	}
	return out
}
