package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

// Leader discovery (KIP-951): a partition answered NOT_LEADER_OR_FOLLOWER
// or FENCED_LEADER_EPOCH names its current leader and leader epoch in the
// response (CurrentLeader), and the response lists where the clients of
// the request's listener reach those leaders (NodeEndpoints), so a client
// moves the partition without asking for metadata first. As Kafka's
// KafkaApis: Produce v10+, consumer Fetch v16+, ShareFetch and
// ShareAcknowledge. The leader comes from this broker's metadata image;
// one it does not know is (-1, -1), and a leader that is not live (fenced,
// or without the listener) is named but has no endpoint.

// wantsLeaderHint reports whether a partition answered code carries its
// current leader.
func wantsLeaderHint(code int16) bool {
	return code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code
}

// leaderHints gathers the hints of one response.
type leaderHints struct {
	h        *Handler
	listener string
	img      *metadata.Image // loaded at the first hint
	nodes    []nodeEndpoint  // the live leaders named, once each
}

// nodeEndpoint is the shape of every response's NodeEndpoints entry
// (ProduceResponseBroker, FetchResponseBroker, ShareFetchResponseNodeEndpoint,
// ShareAcknowledgeResponseNodeEndpoint), which converts to each of them.
type nodeEndpoint = struct {
	NodeID      int32
	Host        string
	Port        int32
	Rack        *string
	UnknownTags kmsg.Tags
}

// leader is partition idx of t's current leader and leader epoch, (-1, -1)
// when t is nil or has no such partition or no leader, and notes the
// leader's endpoint.
func (lh *leaderHints) leader(t *metadata.Topic, idx int32) (id, epoch int32) {
	if t == nil || idx < 0 || int(idx) >= len(t.Partitions) || t.Partitions[idx].Leader == metadata.NoLeader {
		return -1, -1
	}
	p := t.Partitions[idx]
	lh.note(p.Leader)
	return p.Leader, int32(p.LeaderEpoch)
}

func (lh *leaderHints) note(id int32) {
	for _, n := range lh.nodes {
		if n.NodeID == id {
			return
		}
	}
	addr, ok := lh.h.brokerAddress(lh.img, id, lh.listener)
	if !ok {
		return
	}
	var rack *string
	if b, ok := lh.img.Brokers[id]; ok {
		rack = strPtr(b.Rack)
	}
	lh.nodes = append(lh.nodes, nodeEndpoint{NodeID: id, Host: addr.Host, Port: addr.Port, Rack: rack})
}

// endpointsAs converts the noted endpoints to a response's entry type;
// none is nil, as the response's default.
func endpointsAs[T ~nodeEndpoint](nodes []nodeEndpoint) []T {
	if len(nodes) == 0 {
		return nil
	}
	out := make([]T, len(nodes))
	for i, n := range nodes {
		out[i] = T(n)
	}
	return out
}

// hint fills the current leader of a partition answered code, of the
// topic named name or (byID) with id, when code calls for it.
func (lh *leaderHints) hint(code int16, name string, id [16]byte, byID bool, idx int32, leaderID, leaderEpoch *int32) {
	if !wantsLeaderHint(code) {
		return
	}
	if lh.img == nil {
		lh.img = lh.h.opts.Meta.Image()
	}
	*leaderID, *leaderEpoch = lh.leader(lookupTopic(lh.img, name, id, byID), idx)
}

// hintProduceLeaders fills a produce response's hints (v10+).
func (h *Handler) hintProduceLeaders(resp *kmsg.ProduceResponse, listener string) {
	if resp.Version < 10 {
		return
	}
	lh := leaderHints{h: h, listener: listener}
	for i := range resp.Topics {
		st := &resp.Topics[i]
		for j := range st.Partitions {
			sp := &st.Partitions[j]
			lh.hint(sp.ErrorCode, st.Topic, st.TopicID, resp.Version >= 13, sp.Partition, &sp.CurrentLeader.LeaderID, &sp.CurrentLeader.LeaderEpoch)
		}
	}
	resp.Brokers = endpointsAs[kmsg.ProduceResponseBroker](lh.nodes)
}

// hintFetchLeaders fills a consumer fetch response's hints (v16+).
func (h *Handler) hintFetchLeaders(resp *kmsg.FetchResponse, listener string) {
	if resp.Version < 16 {
		return
	}
	lh := leaderHints{h: h, listener: listener}
	for i := range resp.Topics {
		st := &resp.Topics[i]
		for j := range st.Partitions {
			sp := &st.Partitions[j]
			lh.hint(sp.ErrorCode, st.Topic, st.TopicID, true, sp.Partition, &sp.CurrentLeader.LeaderID, &sp.CurrentLeader.LeaderEpoch)
		}
	}
	resp.Brokers = endpointsAs[kmsg.FetchResponseBroker](lh.nodes)
}

// hintShareFetchLeaders fills a ShareFetch response's hints, by each
// partition's fetch error (not its acknowledgement's), as Kafka.
func (h *Handler) hintShareFetchLeaders(resp *kmsg.ShareFetchResponse, listener string) {
	lh := leaderHints{h: h, listener: listener}
	for i := range resp.Topics {
		st := &resp.Topics[i]
		for j := range st.Partitions {
			sp := &st.Partitions[j]
			lh.hint(sp.ErrorCode, "", st.TopicID, true, sp.Partition, &sp.CurrentLeader.LeaderID, &sp.CurrentLeader.LeaderEpoch)
		}
	}
	resp.NodeEndpoints = endpointsAs[kmsg.ShareFetchResponseNodeEndpoint](lh.nodes)
}

// hintShareAcknowledgeLeaders fills a ShareAcknowledge response's hints.
func (h *Handler) hintShareAcknowledgeLeaders(resp *kmsg.ShareAcknowledgeResponse, listener string) {
	lh := leaderHints{h: h, listener: listener}
	for i := range resp.Topics {
		st := &resp.Topics[i]
		for j := range st.Partitions {
			sp := &st.Partitions[j]
			lh.hint(sp.ErrorCode, "", st.TopicID, true, sp.Partition, &sp.CurrentLeader.LeaderID, &sp.CurrentLeader.LeaderEpoch)
		}
	}
	resp.NodeEndpoints = endpointsAs[kmsg.ShareAcknowledgeResponseNodeEndpoint](lh.nodes)
}
