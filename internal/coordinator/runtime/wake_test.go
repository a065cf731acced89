package runtime

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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

// pastWakeShard is kvShard whose ticks see a timer already due.
type pastWakeShard struct{ kvShard }

func (s *pastWakeShard) Tick(now time.Time) Result {
	res := s.kvShard.Tick(now)
	res.WakeAt = now.Add(-time.Second)
	return res
}

// A WakeAt that is not ahead (a clock that did not move, a timer already
// due) wakes the partition a millisecond later, not at once in a loop.
func TestWakeAtInThePastWaitsAMillisecond(t *testing.T) {
	wakes := make(chan time.Duration, 4)
	f := newFixtureWith(t, &memLog{}, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) { return &pastWakeShard{kvShard{kv: map[string]string{}}}, nil }
		o.After = func(d time.Duration) <-chan time.Time {
			wakes <- d
			return nil
		}
	})
	f.rt.Start(0)
	f.read("x")
	select {
	case d := <-wakes:
		if d != time.Millisecond {
			t.Fatalf("wake-up in %v, want 1ms", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the load's tick armed no wake-up")
	}
}

// Without Options.After the wake-up is a real timer (time.After).
func TestWakeUpWithoutAfterUsesARealTimer(t *testing.T) {
	f := newFixtureWith(t, &memLog{}, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) {
			return &kvShard{kv: map[string]string{}, wakeIn: 5 * time.Millisecond}, nil
		}
	})
	f.rt.Start(0)
	f.read("x")
	join := f.submit(kmsg.NewPtrJoinGroupRequest()) // answered by a tick; the periodic ticker never fires
	if id := recv(t, join).(*kmsg.JoinGroupResponse).MemberID; id != "joined" {
		t.Fatalf("join answered %q, want the woken tick's answer", id)
	}
}

// A wake-up that fires after a failed append dropped the shard does not
// tick: the partition waits for the periodic tick's reload.
func TestWakeUpAfterAFailedAppend(t *testing.T) {
	wakes := make(chan chan time.Time, 4)
	log := &memLog{readBatch: 10}
	f := newFixtureWith(t, log, func(o *Options) {
		o.NewShard = func(int32) (Shard, error) {
			return &kvShard{kv: map[string]string{}, wakeIn: time.Second}, nil
		}
		o.After = func(time.Duration) <-chan time.Time {
			c := make(chan time.Time, 1)
			wakes <- c
			return c
		}
	})
	f.rt.Start(0)
	f.read("x")
	wake := <-wakes
	log.mu.Lock()
	log.failNext = errors.New("disk on fire")
	log.mu.Unlock()
	if code := recv(t, f.submit(set("a", "1"))).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %v", kerr.ErrorForCode(code))
	}
	wake <- time.Now()
	for len(wake) > 0 { // the goroutine has taken the wake-up, with no shard
		time.Sleep(time.Millisecond)
	}
	f.tick <- time.Time{} // reloads
	if got := f.read("a"); got != "" {
		t.Fatalf("a=%q after the reload, want nothing (the append failed)", got)
	}
}
