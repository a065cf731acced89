package metadata

import "slices"

// Heartbeat is what a broker tells the controller periodically (Kafka's
// BrokerHeartbeatRequest).
type Heartbeat struct {
	BrokerID    int32 `json:"broker_id"`
	BrokerEpoch int64 `json:"broker_epoch"`
	// AppliedVersion is the newest image version the broker has applied
	// (Kafka's CurrentMetadataOffset).
	AppliedVersion uint64 `json:"applied_version"`
	// WantFence asks to stay (or become) fenced, as a broker that is not
	// ready to serve does.
	WantFence bool `json:"want_fence,omitempty"`
}

// HeartbeatReply is the controller's answer (Kafka's
// BrokerHeartbeatResponse).
type HeartbeatReply struct {
	// Fenced reports whether the broker is fenced once this heartbeat is
	// handled.
	Fenced bool `json:"fenced"`
	// CaughtUp reports whether the broker has applied its own registration.
	CaughtUp bool `json:"caught_up"`
}

// lastHeartbeat is the controller's memory of one broker's latest
// heartbeat. It is not replicated: a new controller starts every broker's
// clock at its own start, so each gets a full session before it is fenced.
type lastHeartbeat struct {
	Epoch int64
	AtMs  int64
}

// shouldUnfence decides a heartbeat from a fenced broker (Kafka's
// BrokerHeartbeatManager.calculateNextBrokerState): it is unfenced once it
// has applied the image of its own registration and does not ask to stay
// fenced. A heartbeat from another incarnation changes nothing.
func shouldUnfence(img *Image, hb Heartbeat) bool {
	b, ok := img.Brokers[hb.BrokerID]
	return ok && b.Fenced && b.Epoch == hb.BrokerEpoch && !hb.WantFence &&
		hb.AppliedVersion >= uint64(b.Epoch)
}

// shouldFenceOnRequest decides a heartbeat that asks to be fenced from an
// unfenced broker of that registration.
func shouldFenceOnRequest(img *Image, hb Heartbeat) bool {
	b, ok := img.Brokers[hb.BrokerID]
	return ok && !b.Fenced && b.Epoch == hb.BrokerEpoch && hb.WantFence
}

// expiredBrokers lists, ascending, the unfenced brokers of img whose last
// heartbeat for their current registration is older than sessionMs at
// nowMs (Kafka's broker.session.timeout.ms). A broker the controller has
// not heard from since it took office counts from sinceMs.
func expiredBrokers(img *Image, last map[int32]lastHeartbeat, sinceMs, nowMs, sessionMs int64) []*Broker {
	var out []*Broker
	for id, b := range img.Brokers {
		if b.Fenced {
			continue
		}
		at := sinceMs
		if hb, ok := last[id]; ok && hb.Epoch == b.Epoch && hb.AtMs > at {
			at = hb.AtMs
		}
		if nowMs-at > sessionMs {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *Broker) int { return int(a.ID) - int(b.ID) })
	return out
}
