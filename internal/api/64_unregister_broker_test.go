package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestUnregisterBroker: a running broker is refused with INVALID_REQUEST,
// a fenced one is removed from the brokers, an unknown id is
// BROKER_ID_NOT_REGISTERED, and without ALTER on the cluster nothing
// happens.
func TestUnregisterBroker(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	unregister := func(id int32) *kmsg.UnregisterBrokerResponse {
		t.Helper()
		r := kmsg.NewPtrUnregisterBrokerRequest()
		r.BrokerID = id
		return rh.handle(64, 0, r, "User:ANONYMOUS").(*kmsg.UnregisterBrokerResponse)
	}
	if resp := unregister(3); resp.ErrorCode != kerr.InvalidRequest.Code || resp.ErrorMessage == nil {
		t.Fatalf("running broker 3: %+v", resp)
	}
	rh.fence(3)
	if resp := unregister(3); resp.ErrorCode != 0 {
		t.Fatalf("fenced broker 3: %+v", resp)
	}
	if _, ok := rh.meta.Image().Brokers[3]; ok {
		t.Fatal("broker 3 is still registered")
	}
	if resp := unregister(3); resp.ErrorCode != kerr.BrokerIDNotRegistered.Code {
		t.Fatalf("broker 3 again: %+v", resp)
	}
}
