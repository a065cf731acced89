package metadata

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestRaftLineLevel(t *testing.T) {
	const election = "heartbeat timeout reached, starting election"
	tests := []struct {
		name  string
		level hclog.Level
		msg   string
		args  []any
		want  slog.Level
	}{
		{"first election after start", hclog.Warn, election, []any{"last-leader-addr", "", "last-leader-id", ""}, slog.LevelInfo},
		{"election after losing a leader", hclog.Warn, election, []any{"last-leader-addr", "127.0.0.1:9093", "last-leader-id", "2"}, slog.LevelWarn},
		{"election line without the argument", hclog.Warn, election, nil, slog.LevelInfo},
		{"other warning", hclog.Warn, "failed to contact", []any{"server-id", "2"}, slog.LevelWarn},
		{"error", hclog.Error, "failed to appendEntries", nil, slog.LevelError},
		{"info", hclog.Info, "entering leader state", nil, slog.LevelInfo},
		{"debug", hclog.Debug, "x", nil, slog.LevelDebug},
		{"trace", hclog.Trace, "x", nil, slog.LevelDebug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := raftLineLevel(tt.level, tt.msg, tt.args); got != tt.want {
				t.Errorf("raftLineLevel(%v, %q, %v) = %v, want %v", tt.level, tt.msg, tt.args, got, tt.want)
			}
		})
	}
}

func TestRaftLoggerWritesStructuredLines(t *testing.T) {
	var buf bytes.Buffer
	l := newRaftLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))

	l.Info("entering follower state", "term", 3) // below raft's minimum level: dropped
	l.Named("snapshot").With("path", "/d").Warn("failed to reap", "error", errors.New("disk full"))
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "", "last-leader-id", "")
	l.StandardLogger(nil).Print("transport closed")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=WARN msg="raft.snapshot: failed to reap" path=/d error="disk full"`,
		`level=INFO msg="raft: heartbeat timeout reached, starting election" last-leader-addr="" last-leader-id=""`,
		`level=WARN msg="raft: transport closed"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i], w) {
			t.Errorf("line %d = %s\nwant it to end with %s", i, lines[i], w)
		}
	}
	if l.IsInfo() || !l.IsWarn() {
		t.Errorf("IsInfo = %v, IsWarn = %v: want raft's info lines off and its warnings on", l.IsInfo(), l.IsWarn())
	}
}
