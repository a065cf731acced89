package logging

import (
	"log/slog"
	"maps"
	"testing"

	"pgregory.net/rapid"
)

func TestParseLevel(t *testing.T) {
	for name, want := range map[string]slog.Level{
		"TRACE": slog.LevelDebug - 4, "DEBUG": slog.LevelDebug, "INFO": slog.LevelInfo,
		"WARN": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": slog.LevelError + 4,
	} {
		if got, err := ParseLevel(name); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", name, got, err, want)
		}
		if got := LevelName(want); got != name {
			t.Errorf("LevelName(%v) = %q, want %q", want, got, name)
		}
	}
	for _, bad := range []string{"", "debug", "Info", "WARNING", "OFF", "ALL"} {
		if _, err := ParseLevel(bad); err == nil {
			t.Errorf("ParseLevel(%q) took it", bad)
		}
	}
	// Between Kafka's levels, a level is named by the one below it.
	for l, want := range map[slog.Level]string{slog.LevelDebug - 8: "TRACE", slog.LevelDebug - 1: "TRACE", slog.LevelInfo + 2: "INFO", slog.LevelError + 3: "ERROR", slog.LevelError + 9: "FATAL"} {
		if got := LevelName(l); got != want {
			t.Errorf("LevelName(%v) = %q, want %q", l, got, want)
		}
	}
}

func TestParent(t *testing.T) {
	for name, want := range map[string]string{
		"strata.coordinator.group": "strata.coordinator", "strata.tier": "strata", "strata": Root, Root: Root, ".x": Root, "a.": "a",
	} {
		if got := parent(name); got != want {
			t.Errorf("parent(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestEffectiveLevels(t *testing.T) {
	own := map[string]slog.Level{Root: slog.LevelInfo, "strata": slog.LevelWarn, "strata.coordinator.group": slog.LevelDebug, "other.x": slog.LevelError}
	names := []string{"strata", "strata.tier", "strata.coordinator", "strata.coordinator.group", "strata.coordinator.group.x", "other", "other.x.y", "stratagem"}
	want := map[string]slog.Level{
		Root: slog.LevelInfo, "strata": slog.LevelWarn, "strata.tier": slog.LevelWarn, "strata.coordinator": slog.LevelWarn,
		"strata.coordinator.group": slog.LevelDebug, "strata.coordinator.group.x": slog.LevelDebug,
		"other": slog.LevelInfo, "other.x.y": slog.LevelError, "stratagem": slog.LevelInfo,
	}
	if got := effectiveLevels(names, own); !maps.Equal(got, want) {
		t.Fatalf("effectiveLevels = %v, want %v", got, want)
	}
}

// A logger's effective level is its own when it has one, and otherwise
// its parent's.
func TestEffectiveLevelsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "c"}), 1, 4)
		names := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string {
			name := ""
			for i, p := range parts.Draw(t, "parts") {
				if i > 0 {
					name += "."
				}
				name += p
			}
			return name
		}), 0, 8).Draw(t, "names")
		levels := rapid.SampledFrom([]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError})
		own := map[string]slog.Level{Root: levels.Draw(t, "root")}
		for _, n := range names {
			if rapid.Bool().Draw(t, "has own "+n) {
				own[n] = levels.Draw(t, "level "+n)
			}
		}
		got := effectiveLevels(names, own)
		for _, n := range names {
			want, ok := own[n]
			if !ok {
				want = effectiveLevels([]string{parent(n)}, own)[parent(n)]
			}
			if got[n] != want {
				t.Fatalf("%s at %v, want %v (own %v)", n, got[n], want, own)
			}
		}
	})
}
