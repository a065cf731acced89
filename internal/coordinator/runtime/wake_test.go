package runtime

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A tick that sees a timer ahead (Result.WakeAt) ticks again at that
// moment, without waiting for the periodic ticker (which never fires here).
func TestTickWakesAtTheSoonestTimer(t *testing.T) {
	type wakeUp struct {
		in time.Duration
		c  chan time.Time
	}
	wakes := make(chan wakeUp, 4)
	f := newFixtureWith(t, &memLog{}, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) {
			return &kvShard{kv: map[string]string{}, wakeIn: 250 * time.Millisecond}, nil
		}
		o.After = func(d time.Duration) <-chan time.Time {
			c := make(chan time.Time, 1)
			wakes <- wakeUp{d, c}
			return c
		}
	})
	f.rt.Start(0)
	f.read("x") // loaded: the load's tick asked for a wake-up
	var w wakeUp
	select {
	case w = <-wakes:
	case <-time.After(5 * time.Second):
		t.Fatal("the load's tick armed no wake-up")
	}
	if w.in != 250*time.Millisecond {
		t.Fatalf("wake-up in %v, want 250ms (the shard's WakeAt)", w.in)
	}
	join := f.submit(kmsg.NewPtrJoinGroupRequest()) // answered by the next Tick
	// The join is queued before the wake-up fires only once the runtime has
	// taken it; a read behind it on the same goroutine says it has.
	f.read("x")
	w.c <- time.Now()
	if id := recv(t, join).(*kmsg.JoinGroupResponse).MemberID; id != "joined" {
		t.Fatalf("join answered %q, want the tick's answer", id)
	}
	select {
	case w = <-wakes:
		if w.in != 250*time.Millisecond {
			t.Fatalf("next wake-up in %v, want 250ms", w.in)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the woken tick armed no next wake-up")
	}
}
