package metadata

import (
	"errors"
	"slices"
	"testing"
)

// TestUnregisterBroker: a running broker is not unregistered; a fenced one
// is, leaving its partitions naming it as a replica; an unknown id is
// refused; the id can register again.
func TestUnregisterBroker(t *testing.T) {
	s, epochs := brokersStore(t, nil)
	if err := s.UnregisterBroker(t.Context(), 1); !errors.Is(err, ErrBrokerNotFenced) {
		t.Fatalf("unregistering a running broker: %v", err)
	}
	if err := s.FenceBroker(t.Context(), 1, epochs[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.UnregisterBroker(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	img := s.Image()
	if _, ok := img.Brokers[1]; ok || len(img.Brokers) != 2 {
		t.Fatalf("brokers after unregistering 1: %v", img.Brokers)
	}
	for _, p := range img.Topics["t"].Partitions {
		if !slices.Contains(p.Replicas, 1) || p.Leader == 1 || slices.Contains(p.ISR, 1) {
			t.Fatalf("partition %d: %+v", p.Index, p)
		}
	}
	if err := s.UnregisterBroker(t.Context(), 1); !errors.Is(err, ErrUnknownBroker) {
		t.Fatalf("unregistering again: %v", err)
	}
	// Apply checks too, whatever the proposer saw.
	if _, err := applyCommand(img, &unregisterBrokerCmd{ID: 2, Epoch: epochs[2]}, img.Version+1); !errors.Is(err, ErrBrokerNotFenced) {
		t.Fatalf("apply on a running broker: %v", err)
	}
	if _, err := applyCommand(img, &unregisterBrokerCmd{ID: 2, Epoch: epochs[2] + 1}, img.Version+1); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Fatalf("apply with another epoch: %v", err)
	}
	b, err := s.RegisterBroker(t.Context(), BrokerRegistration{ID: 1, Incarnation: [16]byte{9}, Endpoints: endpoint(9001)})
	if err != nil || !b.Fenced {
		t.Fatalf("registering 1 again: %+v, %v", b, err)
	}
}
