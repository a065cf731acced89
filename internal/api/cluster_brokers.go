package api

import (
	"slices"

	"github.com/strata-broker/strata/internal/metadata"
)

// brokerAt is one broker as the clients of a listener reach it.
type brokerAt struct {
	ID   int32
	Addr Address
	Rack string
}

// liveBrokers lists, ascending by id, the brokers the clients of listener
// can use: on a node where no broker has registered (a single node), this
// broker alone; in a cluster, every unfenced registered broker that has
// the listener (Kafka's alive brokers of MetadataCache). This broker is
// left out while it is fenced (starting, or stopping), unless no other
// broker is live: a client then still has one broker to ask again.
func (h *Handler) liveBrokers(img *metadata.Image, listener string) []brokerAt {
	self := h.opts.Broker.NodeID()
	out := []brokerAt{{ID: self, Addr: h.advertised(listener)}}
	selfFenced := false
	if b, ok := img.Brokers[self]; ok {
		out[0].Rack, selfFenced = b.Rack, b.Fenced
	}
	if selfFenced {
		out = out[:0]
	}
	for id, b := range img.Brokers {
		if id == self || b.Fenced {
			continue
		}
		if a, ok := endpointOf(b, listener); ok {
			out = append(out, brokerAt{ID: id, Addr: a, Rack: b.Rack})
		}
	}
	if len(out) == 0 {
		out = append(out, brokerAt{ID: self, Addr: h.advertised(listener), Rack: img.Brokers[self].Rack})
	}
	slices.SortFunc(out, func(a, b brokerAt) int { return int(a.ID) - int(b.ID) })
	return out
}

// registeredBrokers lists, ascending by id, every broker registered with
// the listener, fenced or not, with whether it is fenced (Kafka's
// MetadataCache.getBrokerNodes); a single node, where no broker
// registers, is this broker alone, unfenced.
func (h *Handler) registeredBrokers(img *metadata.Image, listener string) (brokers []brokerAt, fenced map[int32]bool) {
	self := h.opts.Broker.NodeID()
	fenced = map[int32]bool{}
	for id, b := range img.Brokers {
		a, ok := endpointOf(b, listener)
		if id == self {
			a, ok = h.advertised(listener), true
		}
		if ok {
			brokers = append(brokers, brokerAt{ID: id, Addr: a, Rack: b.Rack})
			fenced[id] = b.Fenced
		}
	}
	if len(img.Brokers) == 0 {
		brokers = append(brokers, brokerAt{ID: self, Addr: h.advertised(listener)})
	}
	slices.SortFunc(brokers, func(a, b brokerAt) int { return int(a.ID) - int(b.ID) })
	return brokers, fenced
}

// controllerOf is the controller id Metadata and DescribeCluster give with
// live: this broker, which serves the controller's APIs by forwarding
// them, or while it is fenced (and so not in live) the first live broker.
func (h *Handler) controllerOf(live []brokerAt) int32 {
	self := h.opts.Broker.NodeID()
	for _, b := range live {
		if b.ID == self {
			return self
		}
	}
	return live[0].ID
}

// brokerAddress is where the clients of listener reach broker id: this
// broker's advertised address, or another unfenced broker's registered
// endpoint for the listener; ok is false when there is none.
func (h *Handler) brokerAddress(img *metadata.Image, id int32, listener string) (Address, bool) {
	if id == h.opts.Broker.NodeID() {
		return h.advertised(listener), true
	}
	b, ok := img.Brokers[id]
	if !ok || b.Fenced {
		return Address{}, false
	}
	return endpointOf(b, listener)
}

// endpointOf is b's endpoint for listener. A request from an unnamed
// listener (a test building Requests by hand) takes b's only endpoint.
func endpointOf(b *metadata.Broker, listener string) (Address, bool) {
	e, ok := b.Endpoint(listener)
	if !ok && listener == "" && len(b.Endpoints) == 1 {
		e, ok = b.Endpoints[0], true
	}
	if !ok {
		return Address{}, false
	}
	return Address{Host: e.Host, Port: e.Port}, true
}

// idsOf is the set of the brokers' ids.
func idsOf(brokers []brokerAt) map[int32]bool {
	ids := make(map[int32]bool, len(brokers))
	for _, b := range brokers {
		ids[b.ID] = true
	}
	return ids
}

// offlineReplicas are the replicas not on a live broker (fenced, gone, or
// without the client's listener), as Kafka's offline replicas; empty, not
// nil, when there is none.
func offlineReplicas(replicas []int32, live map[int32]bool) []int32 {
	out := []int32{}
	for _, id := range replicas {
		if !live[id] {
			out = append(out, id)
		}
	}
	return out
}
