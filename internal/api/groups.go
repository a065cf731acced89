package api

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/metadata"
)

// groupMax caps a group API at the version the coordinator implements.
func groupMax(key int16) int16 {
	v, ok := group.MaxVersions[key]
	if !ok {
		panic("api: no coordinator version for key " + strconv.Itoa(int(key)))
	}
	return v
}

// ensureOffsetsTopic returns __consumer_offsets, creating it on first use
// (as Kafka does on the first FindCoordinator for a group) with the
// offsets.topic.* settings and opening its partitions here, which starts
// their coordinators loading.
func (h *Handler) ensureOffsetsTopic(ctx context.Context) (*metadata.Topic, error) {
	if t, ok := h.opts.Meta.Image().Topics[offsets.TopicName]; ok {
		return t, nil
	}
	h.offsetsTopicMu.Lock()
	defer h.offsetsTopicMu.Unlock()
	if t, ok := h.opts.Meta.Image().Topics[offsets.TopicName]; ok {
		return t, nil
	}
	t, err := h.opts.Meta.CreateTopic(ctx, metadata.CreateTopic{
		Name:              offsets.TopicName,
		Partitions:        h.opts.Config.OffsetsTopicNumPartitions,
		ReplicationFactor: h.opts.Config.OffsetsTopicReplicationFactor,
		Configs: map[string]string{
			"cleanup.policy":   "compact",
			"segment.bytes":    strconv.Itoa(int(h.opts.Config.OffsetsTopicSegmentBytes)),
			"compression.type": "producer",
		},
	})
	if errors.Is(err, metadata.ErrTopicExists) {
		if t, ok := h.opts.Meta.Image().Topics[offsets.TopicName]; ok {
			return t, nil
		}
	}
	if err != nil {
		return nil, err
	}
	h.logger.Info("created the consumer offsets topic", "topic", offsets.TopicName, "partitions", len(t.Partitions))
	if err := h.opts.Broker.Reconcile(); err != nil {
		h.logger.Error("opening the consumer offsets partitions", "err", err)
	}
	return t, nil
}

// offsetsPartitions is the partition count of __consumer_offsets, false
// while it does not exist.
func (h *Handler) offsetsPartitions() (int32, bool) {
	t, ok := h.opts.Meta.Image().Topics[offsets.TopicName]
	if !ok || len(t.Partitions) == 0 {
		return 0, false
	}
	return int32(len(t.Partitions)), true
}

// coordinatorPartition is the __consumer_offsets partition of a group,
// false while the topic does not exist (the client is then told
// NOT_COORDINATOR and asks FindCoordinator, which creates it).
func (h *Handler) coordinatorPartition(groupID string) (int32, bool) {
	n, ok := h.offsetsPartitions()
	if !ok {
		return 0, false
	}
	return offsets.PartitionFor(groupID, n), true
}

// submitGroup hands body to the coordinator of partition p and returns
// where its one response will arrive. The request is copied first: the
// server reuses the frame buffer that byte fields (member metadata,
// assignments) alias once the response is written, and the coordinator
// keeps them.
func (h *Handler) submitGroup(req *Request, p int32, body kmsg.Request) <-chan kmsg.Response {
	ch := make(chan kmsg.Response, 1)
	if h.opts.Groups == nil {
		ch <- group.ErrorResponse(body, kerr.CoordinatorNotAvailable.Code)
		return ch
	}
	owned := kmsg.RequestForKey(body.Key())
	owned.SetVersion(body.GetVersion())
	if err := owned.ReadFrom(body.AppendTo(nil)); err != nil {
		panic("api: a decoded request does not decode again: " + err.Error())
	}
	client := runtime.Client{Host: req.ClientHost}
	if req.ClientID != nil {
		client.ID = *req.ClientID
	}
	h.opts.Groups.Submit(p, owned, client, func(r kmsg.Response) { ch <- r })
	return ch
}

// groupReply submits a one-group request (or answers NOT_COORDINATOR while
// __consumer_offsets does not exist) and waits for the coordinator's
// response; a JoinGroup may wait up to its rebalance timeout.
func (h *Handler) groupReply(ctx context.Context, req *Request, groupID string) Reply {
	p, ok := h.coordinatorPartition(groupID)
	if !ok {
		return done(group.ErrorResponse(req.Body, kerr.NotCoordinator.Code))
	}
	ch := h.submitGroup(req, p, req.Body)
	return Reply{Wait: func() kmsg.Response { return awaitGroup(ctx, ch, req.Body) }}
}

// awaitGroup waits for a coordinator's response, or answers
// COORDINATOR_NOT_AVAILABLE (retriable) once the connection is going away.
func awaitGroup(ctx context.Context, ch <-chan kmsg.Response, body kmsg.Request) kmsg.Response {
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return group.ErrorResponse(body, kerr.CoordinatorNotAvailable.Code)
	}
}

// splitGroups groups ids by coordinator partition, each id once, in
// first-seen order; ok is false while __consumer_offsets does not exist.
func (h *Handler) splitGroups(ids []string) (map[int32][]string, bool) {
	n, ok := h.offsetsPartitions()
	if !ok {
		return nil, false
	}
	out := map[int32][]string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		p := offsets.PartitionFor(id, n)
		out[p] = append(out[p], id)
	}
	return out, true
}

// fanOut submits one request per coordinator partition (made by build from
// that partition's group ids) and returns a function that waits for them
// all, in partition order.
func (h *Handler) fanOut(req *Request, byPart map[int32][]string, build func(ids []string) kmsg.Request) func(ctx context.Context) []kmsg.Response {
	type sub struct {
		body kmsg.Request
		ch   <-chan kmsg.Response
	}
	var subs []sub
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		body := build(byPart[p])
		body.SetVersion(req.Version)
		subs = append(subs, sub{body, h.submitGroup(req, p, body)})
	}
	return func(ctx context.Context) []kmsg.Response {
		out := make([]kmsg.Response, len(subs))
		for i, s := range subs {
			out[i] = awaitGroup(ctx, s.ch, s.body)
		}
		return out
	}
}

// inRequestOrder merges per-coordinator answers back into the order the
// request named the groups; every requested id must have an answer.
func inRequestOrder[G any](ids []string, answers []G, groupOf func(G) string) []G {
	byID := make(map[string]G, len(answers))
	for _, g := range answers {
		byID[groupOf(g)] = g
	}
	out := make([]G, 0, len(ids))
	for _, id := range ids {
		g, ok := byID[id]
		if !ok {
			panic("api: the coordinator did not answer for group " + id)
		}
		out = append(out, g)
	}
	return out
}
