package metadata

import (
	"context"
	"io"
	"log"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// raftLogger hands hashicorp/raft's log lines to the broker's slog logger
// with their own level and key-value pairs (hclog.FromStandardLogger would
// print every line at one level, its hclog level as text in the message).
// Lines below minLevel are dropped: raft's info lines narrate every state
// change.
type raftLogger struct {
	log     *slog.Logger
	name    string
	implied []any
	level   hclog.Level
}

// raftMinLevel is what reaches the broker's log from raft.
const raftMinLevel = hclog.Warn

func newRaftLogger(l *slog.Logger) hclog.Logger {
	return &raftLogger{log: l, name: "raft", level: raftMinLevel}
}

// raftLineLevel is the slog level of one raft line. A node's first
// election after it starts (raft's "heartbeat timeout reached, starting
// election" with no leader seen yet, the last-leader-id argument empty) is
// how every quorum starts, a single voter's always: it is information, not
// a warning. A heartbeat timeout after a leader was seen stays a warning.
func raftLineLevel(level hclog.Level, msg string, args []any) slog.Level {
	switch {
	case level <= hclog.Debug:
		return slog.LevelDebug
	case level == hclog.Info:
		return slog.LevelInfo
	case level == hclog.Warn:
		if msg == "heartbeat timeout reached, starting election" && argValue(args, "last-leader-id") == "" {
			return slog.LevelInfo
		}
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// argValue is the value after key in hclog's alternating key-value args,
// as text; "" if key is absent or its value is not a string.
func argValue(args []any, key string) string {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			v, _ := args[i+1].(string)
			return v
		}
	}
	return ""
}

func (r *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || level < r.level {
		return
	}
	all := append(append([]any(nil), r.implied...), args...)
	r.log.Log(context.Background(), raftLineLevel(level, msg, args), r.name+": "+msg, all...)
}

func (r *raftLogger) Trace(msg string, args ...any) { r.Log(hclog.Trace, msg, args...) }
func (r *raftLogger) Debug(msg string, args ...any) { r.Log(hclog.Debug, msg, args...) }
func (r *raftLogger) Info(msg string, args ...any)  { r.Log(hclog.Info, msg, args...) }
func (r *raftLogger) Warn(msg string, args ...any)  { r.Log(hclog.Warn, msg, args...) }
func (r *raftLogger) Error(msg string, args ...any) { r.Log(hclog.Error, msg, args...) }

func (r *raftLogger) IsTrace() bool { return r.level <= hclog.Trace }
func (r *raftLogger) IsDebug() bool { return r.level <= hclog.Debug }
func (r *raftLogger) IsInfo() bool  { return r.level <= hclog.Info }
func (r *raftLogger) IsWarn() bool  { return r.level <= hclog.Warn }
func (r *raftLogger) IsError() bool { return r.level <= hclog.Error }

func (r *raftLogger) ImpliedArgs() []any { return r.implied }

func (r *raftLogger) With(args ...any) hclog.Logger {
	c := *r
	c.implied = append(append([]any(nil), r.implied...), args...)
	return &c
}

func (r *raftLogger) Name() string { return r.name }

func (r *raftLogger) Named(name string) hclog.Logger {
	c := *r
	c.name = r.name + "." + name
	return &c
}

func (r *raftLogger) ResetNamed(name string) hclog.Logger {
	c := *r
	c.name = name
	return &c
}

func (r *raftLogger) SetLevel(level hclog.Level) { r.level = level }
func (r *raftLogger) GetLevel() hclog.Level      { return r.level }

// StandardLogger and StandardWriter serve code that wants a *log.Logger:
// its lines are warnings.
func (r *raftLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	l := slog.NewLogLogger(r.log.Handler(), slog.LevelWarn)
	l.SetPrefix(r.name + ": ")
	return l
}

func (r *raftLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return r.StandardLogger(opts).Writer()
}
