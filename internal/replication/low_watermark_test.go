package replication

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestLowWatermark(t *testing.T) {
	fetched := func(id int32, start base.Offset) Follower {
		return Follower{ID: id, Fetched: true, LogStart: start}
	}
	liveExcept := func(down ...int32) func(int32) bool {
		return func(id int32) bool {
			for _, d := range down {
				if id == d {
					return false
				}
			}
			return true
		}
	}
	for _, tt := range []struct {
		name      string
		leader    base.Offset
		followers []Follower
		live      func(int32) bool
		want      base.Offset
	}{
		{"no followers: the leader's log start", 50, nil, liveExcept(), 50},
		{"the least log start", 50, []Follower{fetched(2, 40), fetched(3, 45)}, liveExcept(), 40},
		{"followers ahead do not raise it", 50, []Follower{fetched(2, 60)}, liveExcept(), 50},
		{"a dead follower does not count", 50, []Follower{fetched(2, 10), fetched(3, 50)}, liveExcept(2), 50},
		{"a live follower not heard from: unknown", 50, []Follower{fetched(2, 50), {ID: 3}}, liveExcept(), -1},
		{"a dead follower not heard from does not count", 50, []Follower{fetched(2, 50), {ID: 3}}, liveExcept(3), 50},
	} {
		if got := LowWatermark(tt.leader, tt.followers, tt.live); got != tt.want {
			t.Errorf("%s: LowWatermark = %d, want %d", tt.name, got, tt.want)
		}
	}
}
