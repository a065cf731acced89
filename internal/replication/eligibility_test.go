package replication

import (
	"testing"

	"pgregory.net/rapid"
)

func TestIsrEligibleTable(t *testing.T) {
	fetched := Follower{ID: 2, Fetched: true, BrokerEpoch: 10}
	live := Broker{Registered: true, Epoch: 10}
	for _, tc := range []struct {
		name string
		f    Follower
		b    Broker
		want bool
	}{
		{"registered, live, same epoch", fetched, live, true},
		{"not registered", fetched, Broker{Epoch: 10}, false},
		{"fenced", fetched, Broker{Registered: true, Epoch: 10, Fenced: true}, false},
		{"in controlled shutdown", fetched, Broker{Registered: true, Epoch: 10, InControlledShutdown: true}, false},
		{"fetch from before the broker restarted", fetched, Broker{Registered: true, Epoch: 11}, false},
		{"no fetch in this term", Follower{ID: 2, BrokerEpoch: 10}, live, false},
		// The image lags a restart: only the registration the leader knows
		// may join (Kafka compares the epochs for equality).
		{"fetch from a newer incarnation than the image's", fetched, Broker{Registered: true, Epoch: 9}, false},
	} {
		if got := IsrEligible(tc.f, tc.b); got != tc.want {
			t.Errorf("%s: IsrEligible = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStaleBrokerEpochTable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		epoch int64
		b     Broker
		want  bool
	}{
		{"current", 10, Broker{Registered: true, Epoch: 10}, false},
		{"newer than the image (the image lags)", 11, Broker{Registered: true, Epoch: 10}, false},
		{"older incarnation", 9, Broker{Registered: true, Epoch: 10}, true},
		{"fenced registration does not fence", 9, Broker{Registered: true, Epoch: 10, Fenced: true}, false},
		{"unregistered does not fence", 9, Broker{}, false},
	} {
		if got := StaleBrokerEpoch(tc.epoch, tc.b); got != tc.want {
			t.Errorf("%s: StaleBrokerEpoch = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPropEligibleIsNeverStale: a follower eligible for the ISR was not
// fetching with a stale broker epoch, and eligibility needs a fetch.
func TestPropEligibleIsNeverStale(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := Follower{ID: 1, Fetched: rapid.Bool().Draw(t, "fetched"), BrokerEpoch: rapid.Int64Range(0, 4).Draw(t, "fetchEpoch")}
		b := Broker{
			Registered:           rapid.Bool().Draw(t, "registered"),
			Epoch:                rapid.Int64Range(0, 4).Draw(t, "epoch"),
			Fenced:               rapid.Bool().Draw(t, "fenced"),
			InControlledShutdown: rapid.Bool().Draw(t, "shutdown"),
		}
		if IsrEligible(f, b) && (StaleBrokerEpoch(f.BrokerEpoch, b) || !f.Fetched || b.Fenced || b.InControlledShutdown) {
			t.Fatalf("eligible: %+v %+v", f, b)
		}
	})
}
