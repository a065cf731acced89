package api

import (
	"context"
	"testing"
	"time"
)

// TestWaitAny: a closed change channel wakes the wait (true); the
// deadline, the context and the server's stop end it (false), with one
// channel to wait on or several.
func TestWaitAny(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	open := func() <-chan struct{} { return make(chan struct{}) }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	far := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		stop     <-chan struct{}
		chans    []<-chan struct{}
		deadline time.Time
		want     bool
	}{
		{"one changed", context.Background(), nil, []<-chan struct{}{closed}, far, true},
		{"one of several changed", context.Background(), nil, []<-chan struct{}{open(), closed}, far, true},
		{"deadline passed", context.Background(), nil, []<-chan struct{}{open()}, time.Now().Add(-time.Second), false},
		{"deadline reached", context.Background(), nil, []<-chan struct{}{open()}, time.Now().Add(10 * time.Millisecond), false},
		{"context ended, one", cancelled, nil, []<-chan struct{}{open()}, far, false},
		{"context ended, several", cancelled, nil, []<-chan struct{}{open(), open()}, far, false},
		{"server stopping, one", context.Background(), closed, []<-chan struct{}{open()}, far, false},
		{"server stopping, several", context.Background(), closed, []<-chan struct{}{open(), open()}, far, false},
	} {
		if got := waitAny(tc.ctx, tc.stop, tc.chans, tc.deadline); got != tc.want {
			t.Errorf("%s: waitAny = %v, want %v", tc.name, got, tc.want)
		}
	}
}
