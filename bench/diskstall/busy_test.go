package main

import (
	"testing"
	"time"
)

func TestParseSteal(t *testing.T) {
	tests := []struct {
		line  string
		ticks int64
		ok    bool
	}{
		{"cpu  3711741 0 965868 3079942 233735 0 87981 83845 0 0\n", 83845, true},
		{"cpu 1 2 3 4 5 6 7 8", 8, true}, // kernels before 2.6.33 stop at steal
		{"cpu 1 2 3 4 5 6 7", 0, false},  // before 2.6.11: no steal column
		{"cpu0 1 2 3 4 5 6 7 8 9 10", 0, false},
		{"cpu 1 2 3 4 5 6 7 x 9 10", 0, false},
		{"cpu 1 2 3 4 5 6 7 -8 9 10", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		ticks, ok := parseSteal(tt.line)
		if ticks != tt.ticks || ok != tt.ok {
			t.Errorf("parseSteal(%q) = %d, %v; want %d, %v", tt.line, ticks, ok, tt.ticks, tt.ok)
		}
	}
}

func TestSpinStops(t *testing.T) {
	stop := spin(2)
	done := make(chan struct{})
	go func() {
		stop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the spinning goroutines did not stop")
	}
}
