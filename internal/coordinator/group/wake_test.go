package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A Tick reports the soonest timer still ahead (runtime.Result.WakeAt): the
// runtime ticks again then, so a session ends when due, not up to a
// periodic tick later (librdkafka's 0081_admin waits exactly a session
// timeout for a static member to go).
func TestTickWakesAtTheSoonestSessionEnd(t *testing.T) {
	opts := testOptions()
	opts.OffsetsRetentionCheckInterval = time.Hour // not the soonest timer
	h := newHarness(t, opts)
	if at := h.c.Tick(h.now).WakeAt; !at.Equal(h.now.Add(time.Hour)) {
		t.Fatalf("no group: WakeAt %v, want the offsets expiry check an hour on", at.Sub(h.now))
	}
	join := h.do(joinReq("g", "", kmsg.StringPtr("instance-1")), "c")
	h.advance(opts.InitialRebalanceDelay)
	r := h.joinResp(join)
	wantCode(t, "join", r.ErrorCode, nil)
	h.syncResp(h.do(syncReq("g", r.MemberID, r.Generation, map[string][]byte{r.MemberID: []byte("P")}), "c"))
	h.advance(time.Second)
	hb := heartbeatReq("g", r.MemberID, r.Generation)
	hb.InstanceID = kmsg.StringPtr("instance-1")
	wantCode(t, "heartbeat", h.resp(h.do(hb, "c")).(*kmsg.HeartbeatResponse).ErrorCode, nil)
	sessionEnd := h.now.Add(testSession)

	h.now = h.now.Add(100 * time.Millisecond) // the next periodic tick
	res := h.c.Tick(h.now)
	h.absorb(res)
	if !res.WakeAt.Equal(sessionEnd) {
		t.Fatalf("WakeAt %v after now, want the session's end, %v after now", res.WakeAt.Sub(h.now), sessionEnd.Sub(h.now))
	}
	h.now = res.WakeAt // the runtime's wake-up
	h.absorb(h.c.Tick(h.now))
	if g := h.c.groups["g"]; len(g.members) != 0 {
		t.Fatalf("the tick at the session's end left %d members", len(g.members))
	}
}

func TestTimerScanDueAndSoonest(t *testing.T) {
	now := time.Unix(1000, 0)
	at := func(d time.Duration) deadline { return armAt(now.Add(d)) }
	for _, tc := range []struct {
		name    string
		timers  []deadline
		due     []bool
		soonest time.Duration // from now; -1: none
	}{
		{"none armed", []deadline{{}, {}}, []bool{false, false}, -1},
		{"due at now", []deadline{at(0)}, []bool{true}, -1},
		{"past", []deadline{at(-time.Second)}, []bool{true}, -1},
		{"ahead", []deadline{at(time.Second)}, []bool{false}, time.Second},
		{"soonest of several", []deadline{at(3 * time.Second), {}, at(-time.Second), at(time.Second), at(2 * time.Second)},
			[]bool{false, false, true, false, false}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := timerScan{now: now}
			for i, d := range tc.timers {
				if got := s.due(d); got != tc.due[i] {
					t.Errorf("timer %d: due %v, want %v", i, got, tc.due[i])
				}
			}
			switch {
			case tc.soonest < 0 && !s.soonest.IsZero():
				t.Errorf("soonest %v after now, want none", s.soonest.Sub(now))
			case tc.soonest >= 0 && !s.soonest.Equal(now.Add(tc.soonest)):
				t.Errorf("soonest %v after now, want %v", s.soonest.Sub(now), tc.soonest)
			}
		})
	}
}
