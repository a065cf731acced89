package log

import (
	"testing"
	"time"
)

func TestAppendRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const limit = 1000
	type add struct {
		at time.Duration
		n  int64
	}
	for _, c := range []struct {
		name string
		adds []add
		want bool
	}{
		{"nothing appended", nil, true},
		{"slow and steady", []add{{0, 300}, {400 * time.Millisecond, 300}, {1200 * time.Millisecond, 300}, {1500 * time.Millisecond, 300}}, true},
		{"a burst inside the first window", []add{{0, 600}, {100 * time.Millisecond, 600}}, false},
		{"a fast window just closed", []add{{0, 900}, {900 * time.Millisecond, 900}, {time.Second, 10}}, false},
		{"a pause closes the fast window slowly", []add{{0, 900}, {900 * time.Millisecond, 900}, {10 * time.Second, 10}}, true},
		{"exactly the limit", []add{{0, 1000}, {time.Second, 0}}, true},
	} {
		var r appendRate
		for _, a := range c.adds {
			r.add(a.n, t0.Add(a.at))
		}
		if got := r.atMost(limit); got != c.want {
			t.Errorf("%s: atMost = %v (last %d B/s, window %d B), want %v", c.name, got, r.lastRate, r.windowBytes, c.want)
		}
	}
}
