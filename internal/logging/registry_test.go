package logging

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
)

// newTestRegistry writes every record of its loggers to the returned
// buffer.
func newTestRegistry(root slog.Level) (*Registry, *bytes.Buffer) {
	var buf bytes.Buffer
	out := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug - 4})
	return New(out, root), &buf
}

// logged logs one record at each of Kafka's levels but FATAL and returns
// the messages that came out.
func logged(l *slog.Logger, buf *bytes.Buffer) string {
	buf.Reset()
	for _, k := range kafkaLevels[:5] {
		l.Log(context.Background(), k.level, k.name)
	}
	var msgs []string
	for line := range strings.Lines(buf.String()) {
		_, msg, _ := strings.Cut(line, "msg=")
		msg, _, _ = strings.Cut(msg, " ")
		msgs = append(msgs, strings.TrimSpace(msg))
	}
	return strings.Join(msgs, ",")
}

func TestLoggersFollowTheirLevels(t *testing.T) {
	r, buf := newTestRegistry(slog.LevelInfo)
	root, tier, group := r.Logger(Root), r.Logger("strata.tier"), r.Logger("strata.coordinator.group")
	step := func(what string, want map[*slog.Logger]string) {
		t.Helper()
		for l, w := range want {
			if got := logged(l, buf); got != w {
				t.Errorf("%s: a logger let through %q, want %q", what, got, w)
			}
		}
	}
	step("at first", map[*slog.Logger]string{root: "INFO,WARN,ERROR", tier: "INFO,WARN,ERROR", group: "INFO,WARN,ERROR"})
	if err := r.SetLevel("strata", "DEBUG"); err != nil {
		t.Fatal(err)
	}
	step("strata at DEBUG", map[*slog.Logger]string{root: "INFO,WARN,ERROR", tier: "DEBUG,INFO,WARN,ERROR", group: "DEBUG,INFO,WARN,ERROR"})
	if err := r.SetLevel("strata.coordinator.group", "ERROR"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetLevel(Root, "TRACE"); err != nil {
		t.Fatal(err)
	}
	step("the group at ERROR, root at TRACE", map[*slog.Logger]string{root: "TRACE,DEBUG,INFO,WARN,ERROR", tier: "DEBUG,INFO,WARN,ERROR", group: "ERROR"})
	if err := r.UnsetLevel("strata"); err != nil {
		t.Fatal(err)
	}
	step("strata unset", map[*slog.Logger]string{tier: "TRACE,DEBUG,INFO,WARN,ERROR", group: "ERROR"})
	if err := r.SetLevel("strata.coordinator.group", "FATAL"); err != nil {
		t.Fatal(err)
	}
	step("the group at FATAL", map[*slog.Logger]string{group: ""})
	if err := r.UnsetLevel("strata.coordinator.group"); err != nil {
		t.Fatal(err)
	}
	step("the group unset", map[*slog.Logger]string{group: "TRACE,DEBUG,INFO,WARN,ERROR"})

	// A logger derived with attributes keeps following its level, and a
	// logger created after a change starts at what it inherits.
	withAttrs := tier.With("partition", "t-0").WithGroup("g")
	if err := r.SetLevel("strata.tier", "WARN"); err != nil {
		t.Fatal(err)
	}
	step("tier at WARN", map[*slog.Logger]string{withAttrs: "WARN,ERROR", r.Logger("strata.tier.copier"): "WARN,ERROR"})

	buf.Reset()
	tier.Warn("w")
	if !strings.Contains(buf.String(), "logger=strata.tier") {
		t.Errorf("a named logger's record: %q, want logger=strata.tier", buf.String())
	}
	buf.Reset()
	root.Warn("w")
	if strings.Contains(buf.String(), "logger=") {
		t.Errorf("the root logger's record: %q, want no logger attribute", buf.String())
	}
}

func TestLevelsAndRefusals(t *testing.T) {
	r, _ := newTestRegistry(slog.LevelWarn)
	if got, want := r.Levels(), map[string]string{Root: "WARN"}; !maps.Equal(got, want) {
		t.Fatalf("Levels of a new registry = %v, want %v", got, want)
	}
	r.Logger("strata.coordinator.group")
	r.Logger(Root)
	if err := r.SetLevel("strata.coordinator", "DEBUG"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{Root: "WARN", "strata": "WARN", "strata.coordinator": "DEBUG", "strata.coordinator.group": "DEBUG"}
	if got := r.Levels(); !maps.Equal(got, want) {
		t.Fatalf("Levels = %v, want %v", got, want)
	}
	for _, name := range []string{Root, "strata", "strata.coordinator.group"} {
		if !r.Exists(name) {
			t.Errorf("logger %s does not exist", name)
		}
	}
	for _, name := range []string{"", "strata.tier", "strata.coordinator.gr", "kafka"} {
		if r.Exists(name) {
			t.Errorf("logger %q exists", name)
		}
	}
	for _, tc := range []struct {
		what string
		err  error
		says string
	}{
		{"a level of another name", r.SetLevel("strata", "debug"), `"debug" is not a log level; use one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL`},
		{"a logger never made", r.SetLevel("strata.tier", "DEBUG"), "logger strata.tier does not exist; the loggers are [root strata strata.coordinator strata.coordinator.group]"},
		{"unsetting a logger never made", r.UnsetLevel("kafka"), "logger kafka does not exist"},
		{"unsetting the root", r.UnsetLevel(Root), "root logger's level cannot be removed"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", tc.what, tc.err, tc.says)
		}
	}
	if got := r.Levels(); !maps.Equal(got, want) {
		t.Fatalf("refused changes changed the levels to %v", got)
	}
}

// Loggers log while their levels change (run with -race).
func TestConcurrentLevelChanges(t *testing.T) {
	r, _ := newTestRegistry(slog.LevelInfo)
	r.Logger("strata.tier")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			l := r.Logger("strata.tier")
			for j := range 200 {
				l.Debug("d", "i", i, "j", j)
			}
		})
	}
	wg.Go(func() {
		for j := range 200 {
			level := "DEBUG"
			if j%2 == 0 {
				level = "ERROR"
			}
			if err := r.SetLevel("strata", level); err != nil {
				t.Error(err)
				return
			}
			_ = r.Levels()
		}
	})
	wg.Wait()
}
