package config

import (
	"math"
	"testing"
	"time"
)

// Times past the largest time.Duration (maxMs ms, about 292 years) saturate
// rather than overflow into negative durations.
func TestDurationsSaturate(t *testing.T) {
	maxDur := time.Duration(math.MaxInt64)
	tests := []struct {
		name      string
		got, want time.Duration
	}{
		{"ms at the limit", msDuration(maxMs), time.Duration(maxMs) * time.Millisecond},
		{"ms just past the limit", msDuration(maxMs + 1), maxDur},
		{"ms Long.MaxValue", msDuration(math.MaxInt64), maxDur},
		{"seconds at the limit", secondsDuration(maxMs / 1000), time.Duration(maxMs/1000) * time.Second},
		{"seconds just past the limit", secondsDuration(maxMs/1000 + 1), maxDur},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestCleanupPolicyString(t *testing.T) {
	for p, want := range map[CleanupPolicy]string{
		PolicyDelete:                 "delete",
		PolicyCompact:                "compact",
		PolicyDelete | PolicyCompact: "compact,delete",
	} {
		if got := p.String(); got != want {
			t.Errorf("CleanupPolicy(%d).String() = %q, want %q", p, got, want)
		}
	}
}
