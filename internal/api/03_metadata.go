package api

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// Metadata: v0-13. Auto-creates requested topics when
// auto.create.topics.enable is on and the client allows it (v4+). v13's
// top-level error code (KIP-1102) is always 0: REBOOTSTRAP_REQUIRED is for
// a broker that knows its client's bootstrap went stale, which neither
// Kafka's brokers nor Strata's detect.
func init() { register(3, 0, 13, (*Handler).handleMetadata) }

func (h *Handler) handleMetadata(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.MetadataRequest)
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	img := h.opts.Meta.Image()

	live := h.liveBrokers(img, req.Listener)
	for _, b := range live {
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.ID, b.Addr.Host, b.Addr.Port
		if b.Rack != "" {
			mb.Rack = strPtr(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, mb)
	}
	resp.ClusterID = strPtr(img.ClusterID)
	resp.ControllerID = h.controllerOf(live)

	if r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = h.authorizedOps(req, acl.ResourceCluster, acl.ClusterName)
	}

	allTopics := r.Topics == nil || (req.Version == 0 && len(r.Topics) == 0)
	if allTopics {
		names := make([]string, 0, len(img.Topics))
		for name := range img.Topics {
			if h.allowedTopic(req, acl.OpDescribe, name) { // the others are not shown
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			resp.Topics = append(resp.Topics, h.authorizedOpsOf(req, r, h.metadataTopic(img.Topics[name])))
		}
		markOffline(resp, live)
		return done(resp)
	}
	autoCreate := h.opts.Config.AutoCreateTopics && (req.Version < 4 || r.AllowAutoTopicCreation)
	for _, rt := range r.Topics {
		resp.Topics = append(resp.Topics, h.authorizedOpsOf(req, r, h.metadataRequestedTopic(ctx, req, img, rt, autoCreate)))
	}
	markOffline(resp, live)
	return done(resp)
}

// markOffline lists each partition's replicas that are not on a broker
// the answer lists (v5+), as Kafka does.
func markOffline(resp *kmsg.MetadataResponse, live []brokerAt) {
	ids := idsOf(live)
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			p := &resp.Topics[i].Partitions[j]
			p.OfflineReplicas = offlineReplicas(p.Replicas, ids)
		}
	}
}

// authorizedOpsOf fills a topic's authorized operations when the client
// asked for them (v8+) and the topic is answered.
func (h *Handler) authorizedOpsOf(req *Request, r *kmsg.MetadataRequest, mt kmsg.MetadataResponseTopic) kmsg.MetadataResponseTopic {
	if r.IncludeTopicAuthorizedOperations && mt.ErrorCode == 0 && mt.Topic != nil {
		mt.AuthorizedOperations = h.authorizedOps(req, acl.ResourceTopic, *mt.Topic)
	}
	return mt
}

// metadataRequestedTopic answers one topic a client named: without
// DESCRIBE on it TOPIC_AUTHORIZATION_FAILED (whether it exists or not);
// auto-creating it needs CREATE on the cluster or the topic.
func (h *Handler) metadataRequestedTopic(ctx context.Context, req *Request, img *metadata.Image, rt kmsg.MetadataRequestTopic, autoCreate bool) kmsg.MetadataResponseTopic {
	if rt.Topic == nil {
		if t, ok := img.TopicsByID[base.TopicID(rt.TopicID)]; ok {
			if !h.allowedTopic(req, acl.OpDescribe, t.Name) {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID, mt.ErrorCode = rt.TopicID, topicDenied
				return mt
			}
			return h.metadataTopic(t)
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.TopicID = rt.TopicID
		mt.ErrorCode = kerr.UnknownTopicID.Code
		return mt
	}
	name := *rt.Topic
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = rt.Topic
	if !h.allowedTopic(req, acl.OpDescribe, name) {
		mt.ErrorCode = topicDenied
		return mt
	}
	if t, ok := img.Topics[name]; ok {
		return h.metadataTopic(t)
	}
	if err := validateTopicName(name); err != nil {
		mt.ErrorCode = kerr.InvalidTopicException.Code
		return mt
	}
	if !autoCreate {
		mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return mt
	}
	if !h.allowedCluster(req, acl.OpCreate) && !h.allowedTopic(req, acl.OpCreate, name) {
		mt.ErrorCode = topicDenied
		return mt
	}
	if kind := h.coordinatorsOf(name); kind != nil {
		// Created only with its own settings, as FindCoordinator does.
		t, err := kind.ensureTopic(ctx)
		if err != nil {
			mt.ErrorCode = kerr.LeaderNotAvailable.Code
			return mt
		}
		return h.metadataTopic(t)
	}
	t, _, err := h.createTopic(ctx, topicSpec{name: name, partitions: -1, replicationFactor: -1}, false, nil)
	if err != nil {
		// Another client may have created it a moment ago.
		if t, ok := h.opts.Meta.Image().Topics[name]; ok {
			return h.metadataTopic(t)
		}
		mt.ErrorCode, _ = topicErrorCode(err)
		return mt
	}
	return h.metadataTopic(t)
}

func (h *Handler) metadataTopic(t *metadata.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = isInternalTopic(t.Name)
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Index
		mp.Leader = p.Leader
		mp.LeaderEpoch = int32(p.LeaderEpoch)
		if p.Leader == metadata.NoLeader {
			// Kafka's answer for a partition whose ISR has no live member.
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mp.Replicas = p.Replicas
		mp.ISR = p.ISR
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// advertised is listener's advertised address. A request from an unnamed
// listener (tests that build a Request by hand) gets the only address when
// there is one.
func (h *Handler) advertised(listener string) Address {
	if a, ok := h.opts.Advertised[listener]; ok {
		return a
	}
	if len(h.opts.Advertised) == 1 {
		for _, a := range h.opts.Advertised {
			return a
		}
	}
	return Address{}
}
