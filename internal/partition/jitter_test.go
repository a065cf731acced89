package partition

import (
	"testing"
	"time"
)

func TestWithSegmentJitter(t *testing.T) {
	const h = time.Hour
	tests := []struct {
		name        string
		age, jitter time.Duration
		fraction    float64
		want        time.Duration
	}{
		{"no jitter", h, 0, 0.7, h},
		{"no roll by age", 0, h, 0.7, 0},
		{"no draw", h, 10 * time.Minute, 0, h},
		{"a share of the jitter", h, 10 * time.Minute, 0.5, 55 * time.Minute},
		{"jitter above segment.ms is cut to it", 10 * time.Minute, h, 0.5, 5 * time.Minute},
		{"never down to zero", 10 * time.Minute, h, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{SegmentMaxAge: tt.age, SegmentJitter: tt.jitter}.WithSegmentJitter(tt.fraction)
			if c.SegmentMaxAge != tt.want {
				t.Fatalf("SegmentMaxAge %v, want %v", c.SegmentMaxAge, tt.want)
			}
		})
	}
}

// A jittered partition rolls by age earlier than segment.ms, one without
// jitter does not.
func TestSegmentJitterRollsEarlier(t *testing.T) {
	for _, tt := range []struct {
		fraction   float64
		wantRolled bool
	}{{0, false}, {0.5, true}} {
		e := newEnv(t, func(o *Options) {
			o.Config.SegmentMaxAge, o.Config.SegmentJitter = 10*time.Second, 4*time.Second
			o.Config = o.Config.WithSegmentJitter(tt.fraction)
		})
		p := e.open(t)
		mustAppend(t, p, batch(t, spec{}), AcksLeader)
		e.clock.Advance(9 * time.Second) // past 10s - 0.5*4s, short of 10s
		mustAppend(t, p, batch(t, spec{}), AcksLeader)
		if rolled := len(segmentBases(p)) == 2; rolled != tt.wantRolled {
			t.Fatalf("fraction %v: segments %v, want a roll: %v", tt.fraction, segmentBases(p), tt.wantRolled)
		}
	}
}
