package api

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// DescribeTopicPartitions: v0 (KIP-966), what Kafka 3.8+'s admin client
// and kafka-topics --describe ask instead of Metadata. The partitions of
// the topics named, or of every topic the client may describe, in topic
// name order, paged: at most ResponsePartitionLimit partitions, and at
// most max.request.partition.size.limit (2000), with a cursor to the first
// left out, from which the next request goes on (its topic must then be
// among those named: INVALID_REQUEST otherwise). A named topic the client may not describe is
// TOPIC_AUTHORIZATION_FAILED, listed last, whether it exists or not; an
// unnamed one is left out. Eligible leader replicas are always empty: no
// partition has any, as in Kafka without eligible.leader.replicas.version.
func init() { register(75, 0, 0, (*Handler).handleDescribeTopicPartitions) }

func (h *Handler) handleDescribeTopicPartitions(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeTopicPartitionsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	img := h.opts.Meta.Image()
	all := len(r.Topics) == 0
	var cursor *topicCursor
	if r.Cursor != nil {
		cursor = &topicCursor{topic: r.Cursor.Topic, partition: r.Cursor.Partition}
	}
	names := describedTopicNames(img, r, cursor)
	if !all && cursor != nil && !slices.Contains(names, cursor.topic) {
		for _, rt := range r.Topics {
			resp.Topics = append(resp.Topics, describedTopicError(rt.Topic, kerr.InvalidRequest.Code))
		}
		return done(resp)
	}
	var allowed, denied []string
	for _, name := range names {
		if h.allowedTopic(req, acl.OpDescribe, name) {
			allowed = append(allowed, name)
		} else if !all {
			denied = append(denied, name)
		}
	}
	count := func(name string) (int32, bool) {
		t, ok := img.Topics[name]
		if !ok {
			return 0, false
		}
		return int32(len(t.Partitions)), true
	}
	pages, next := pageTopicPartitions(allowed, count, cursor, min(r.ResponsePartitionLimit, h.pagePartitions()), !all)
	live := idsOf(h.liveBrokers(img, req.Listener))
	for _, pg := range pages {
		rt := describedTopicError(pg.name, unknownTopicCode(pg.name))
		if pg.exists {
			rt = describedTopic(img.Topics[pg.name], pg.from, pg.to, live)
		}
		rt.AuthorizedOperations = h.authorizedOps(req, acl.ResourceTopic, pg.name)
		resp.Topics = append(resp.Topics, rt)
	}
	for _, name := range denied {
		resp.Topics = append(resp.Topics, describedTopicError(name, topicDenied))
	}
	if next != nil {
		resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: next.topic, Partition: next.partition}
	}
	return done(resp)
}

// pagePartitions is max.request.partition.size.limit.
func (h *Handler) pagePartitions() int32 {
	if n := h.opts.Config.MaxRequestPartitionSizeLimit; n > 0 {
		return n
	}
	return defaultPagePartitions
}

// describedTopicNames are the topics a DescribeTopicPartitions asks about
// (every topic when it names none), each once, sorted, none before the
// cursor's topic.
func describedTopicNames(img *metadata.Image, r *kmsg.DescribeTopicPartitionsRequest, cursor *topicCursor) []string {
	var names []string
	if len(r.Topics) == 0 {
		for name := range img.Topics {
			names = append(names, name)
		}
	} else {
		for _, rt := range r.Topics {
			names = append(names, rt.Topic)
		}
	}
	if cursor != nil {
		names = slices.DeleteFunc(names, func(name string) bool { return name < cursor.topic })
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// unknownTopicCode is the error for a named topic that does not exist.
func unknownTopicCode(name string) int16 {
	if validateTopicName(name) != nil {
		return kerr.InvalidTopicException.Code
	}
	return kerr.UnknownTopicOrPartition.Code
}

func describedTopicError(name string, code int16) kmsg.DescribeTopicPartitionsResponseTopic {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic = kmsg.StringPtr(name)
	rt.ErrorCode = code
	rt.IsInternal = code != topicDenied && isInternalTopic(name)
	rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	return rt
}

// describedTopic is t with its partitions [from, to).
func describedTopic(t *metadata.Topic, from, to int32, live map[int32]bool) kmsg.DescribeTopicPartitionsResponseTopic {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic = kmsg.StringPtr(t.Name)
	rt.TopicID = t.ID
	rt.IsInternal = isInternalTopic(t.Name)
	rt.Partitions = make([]kmsg.DescribeTopicPartitionsResponseTopicPartition, 0, to-from)
	for _, p := range t.Partitions[from:to] {
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Index, p.Leader, int32(p.LeaderEpoch)
		rp.Replicas, rp.ISR = p.Replicas, p.ISR
		rp.EligibleLeaderReplicas, rp.LastKnownELR = []int32{}, []int32{}
		rp.OfflineReplicas = offlineReplicas(p.Replicas, live)
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}
