package metadata

import (
	"testing"
)

func TestShouldUnfence(t *testing.T) {
	img := build(t, register(1, 1)) // broker 1, epoch 1, fenced
	unfenced := build(t, register(1, 1), &unfenceBrokerCmd{ID: 1, Epoch: 1})
	for name, tc := range map[string]struct {
		img     *Image
		hb      Heartbeat
		unfence bool
		fence   bool
	}{
		"caught up":            {img, Heartbeat{BrokerID: 1, BrokerEpoch: 1, AppliedVersion: 1}, true, false},
		"ahead":                {img, Heartbeat{BrokerID: 1, BrokerEpoch: 1, AppliedVersion: 9}, true, false},
		"behind registration":  {img, Heartbeat{BrokerID: 1, BrokerEpoch: 1, AppliedVersion: 0}, false, false},
		"wants to stay fenced": {img, Heartbeat{BrokerID: 1, BrokerEpoch: 1, AppliedVersion: 1, WantFence: true}, false, false},
		"other incarnation":    {img, Heartbeat{BrokerID: 1, BrokerEpoch: 7, AppliedVersion: 9}, false, false},
		"unknown broker":       {img, Heartbeat{BrokerID: 2, BrokerEpoch: 1, AppliedVersion: 9}, false, false},
		"already unfenced":     {unfenced, Heartbeat{BrokerID: 1, BrokerEpoch: 1, AppliedVersion: 9}, false, false},
		"asks to be fenced":    {unfenced, Heartbeat{BrokerID: 1, BrokerEpoch: 1, AppliedVersion: 9, WantFence: true}, false, true},
		"stale asks to fence":  {unfenced, Heartbeat{BrokerID: 1, BrokerEpoch: 2, WantFence: true}, false, false},
	} {
		if got := shouldUnfence(tc.img, tc.hb); got != tc.unfence {
			t.Errorf("%s: shouldUnfence = %v", name, got)
		}
		if got := shouldFenceOnRequest(tc.img, tc.hb); got != tc.fence {
			t.Errorf("%s: shouldFenceOnRequest = %v", name, got)
		}
	}
}

func TestExpiredBrokers(t *testing.T) {
	img := threeBrokers(t) // brokers 1..3 unfenced, epochs 1..3
	const session = 1000
	last := map[int32]lastHeartbeat{
		1: {Epoch: img.Brokers[1].Epoch, AtMs: 5000}, // heard recently
		2: {Epoch: img.Brokers[2].Epoch, AtMs: 3000}, // silent too long
		3: {Epoch: 99, AtMs: 5900},                   // another incarnation's heartbeat does not count
	}
	var ids []int32
	for _, b := range expiredBrokers(img, last, 0, 5900, session) {
		ids = append(ids, b.ID)
	}
	if len(ids) != 2 || ids[0] != 2 || ids[1] != 3 {
		t.Errorf("expired %v, want [2 3]", ids)
	}
	// A new controller gives everyone a full session from its start.
	if got := expiredBrokers(img, nil, 5000, 5900, session); len(got) != 0 {
		t.Errorf("expired %v within the first session", got)
	}
	if got := expiredBrokers(img, nil, 5000, 6001, session); len(got) != 3 {
		t.Errorf("expired %d brokers after a silent session, want 3", len(got))
	}
	fenced := applyChecked(t, img, &fenceBrokerCmd{ID: 2, Epoch: img.Brokers[2].Epoch}, nil)
	if got := expiredBrokers(fenced, nil, 0, 9999, session); len(got) != 2 {
		t.Errorf("a fenced broker expired again: %d", len(got))
	}
}
