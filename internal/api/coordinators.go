package api

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/metadata"
)

// coordinators is one kind of coordinator (consumer groups, transactions):
// its internal topic, the runtime serving the partitions of it led here,
// and how its requests are answered with an error. A key (group id,
// transactional id) maps to a partition as in Kafka: the absolute value of
// Java's String.hashCode modulo the partition count.
type coordinators struct {
	h     *Handler
	topic string
	// create is the topic's creation, with the broker's settings.
	create func() metadata.CreateTopic
	// rt is nil when this broker runs no such coordinator: every request
	// then gets COORDINATOR_NOT_AVAILABLE.
	rt            *runtime.Runtime
	errorResponse func(req kmsg.Request, code int16) kmsg.Response
	// createMu serializes the topic's creation, so that concurrent
	// FindCoordinators create it once.
	createMu sync.Mutex
}

// ensureTopic returns the internal topic, creating it on first use (as
// Kafka does on the first FindCoordinator) and opening its partitions here,
// which starts their coordinators loading.
func (c *coordinators) ensureTopic(ctx context.Context) (*metadata.Topic, error) {
	meta := c.h.opts.Meta
	if t, ok := meta.Image().Topics[c.topic]; ok {
		return t, nil
	}
	c.createMu.Lock()
	defer c.createMu.Unlock()
	if t, ok := meta.Image().Topics[c.topic]; ok {
		return t, nil
	}
	t, err := meta.CreateTopic(ctx, c.create())
	if errors.Is(err, metadata.ErrTopicExists) {
		if t, ok := meta.Image().Topics[c.topic]; ok {
			return t, nil
		}
	}
	if err != nil {
		return nil, err
	}
	c.h.logger.Info("created an internal topic", "topic", c.topic, "partitions", len(t.Partitions))
	if err := c.h.opts.Broker.Reconcile(); err != nil {
		c.h.logger.Error("opening the partitions of an internal topic", "topic", c.topic, "err", err)
	}
	return t, nil
}

// partitions is the partition count of the topic, false while it does not
// exist.
func (c *coordinators) partitions() (int32, bool) {
	t, ok := c.h.opts.Meta.Image().Topics[c.topic]
	if !ok || len(t.Partitions) == 0 {
		return 0, false
	}
	return int32(len(t.Partitions)), true
}

// partitionFor is the partition of a key, false while the topic does not
// exist (the client is then told NOT_COORDINATOR and asks FindCoordinator,
// which creates it).
func (c *coordinators) partitionFor(key string) (int32, bool) {
	n, ok := c.partitions()
	if !ok {
		return 0, false
	}
	return offsets.PartitionFor(key, n), true
}

// submit hands body to the coordinator of partition p and returns where
// its one response will arrive. The request is copied first: the server
// reuses the frame buffer that byte fields (member metadata, assignments)
// alias once the response is written, and the coordinator keeps them.
func (c *coordinators) submit(req *Request, p int32, body kmsg.Request) <-chan kmsg.Response {
	ch := make(chan kmsg.Response, 1)
	if c.rt == nil {
		ch <- c.errorResponse(body, kerr.CoordinatorNotAvailable.Code)
		return ch
	}
	owned := kmsg.RequestForKey(body.Key())
	owned.SetVersion(body.GetVersion())
	if err := owned.ReadFrom(body.AppendTo(nil)); err != nil {
		panic("api: a decoded request does not decode again: " + err.Error())
	}
	client := runtime.Client{Host: req.ClientHost}
	if c.h.policy != nil {
		client.TopicVisible = func(topic string) bool { return c.h.allowedTopic(req, acl.OpDescribe, topic) }
	}
	if req.ClientID != nil {
		client.ID = *req.ClientID
	}
	c.rt.Submit(p, owned, client, func(r kmsg.Response) { ch <- r })
	return ch
}

// reply submits a one-key request (or answers NOT_COORDINATOR while the
// topic does not exist) and waits for the coordinator's response; a
// JoinGroup may wait up to its rebalance timeout.
func (c *coordinators) reply(ctx context.Context, req *Request, key string) Reply {
	p, ok := c.partitionFor(key)
	if !ok {
		return done(c.errorResponse(req.Body, kerr.NotCoordinator.Code))
	}
	ch := c.submit(req, p, req.Body)
	return Reply{Wait: func() kmsg.Response { return c.await(ctx, ch, req.Body) }}
}

// replyThen submits body (req's request, or what of it may be served) to
// the coordinator of key and answers with then applied to its response;
// NOT_COORDINATOR while the topic does not exist.
func (c *coordinators) replyThen(ctx context.Context, req *Request, key string, body kmsg.Request, then func(kmsg.Response) kmsg.Response) Reply {
	p, ok := c.partitionFor(key)
	if !ok {
		return done(c.errorResponse(req.Body, kerr.NotCoordinator.Code))
	}
	ch := c.submit(req, p, body)
	return Reply{Wait: func() kmsg.Response { return then(c.await(ctx, ch, req.Body)) }}
}

// replyIf is reply when allowed, else the request's error response with
// code (an authorization failure) at once.
func (c *coordinators) replyIf(ctx context.Context, req *Request, key string, allowed bool, code int16) Reply {
	if !allowed {
		return done(c.errorResponse(req.Body, code))
	}
	return c.reply(ctx, req, key)
}

// await waits for a coordinator's response, or answers
// COORDINATOR_NOT_AVAILABLE (retriable) once the connection is going away.
func (c *coordinators) await(ctx context.Context, ch <-chan kmsg.Response, body kmsg.Request) kmsg.Response {
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return c.errorResponse(body, kerr.CoordinatorNotAvailable.Code)
	}
}

// split groups keys by coordinator partition, each key once, in
// first-seen order; ok is false while the topic does not exist.
func (c *coordinators) split(keys []string) (map[int32][]string, bool) {
	n, ok := c.partitions()
	if !ok {
		return nil, false
	}
	out := map[int32][]string{}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		p := offsets.PartitionFor(k, n)
		out[p] = append(out[p], k)
	}
	return out, true
}

// every maps each partition of the topic coordinated here to no key: a
// list request (ListGroups, ListTransactions) is answered, as in Kafka, by
// each broker for the coordinators it hosts, and clients ask every broker.
// On a broker that runs no such coordinator every partition is mapped (each
// answers COORDINATOR_NOT_AVAILABLE). ok is false while the topic does not
// exist or no partition of it is coordinated here.
func (c *coordinators) every() (map[int32][]string, bool) {
	n, ok := c.partitions()
	if !ok {
		return nil, false
	}
	out := make(map[int32][]string)
	if c.rt == nil {
		for p := range n {
			out[p] = nil
		}
		return out, true
	}
	for _, p := range c.rt.Hosted() {
		if p < n {
			out[p] = nil
		}
	}
	return out, len(out) > 0
}

// fanOut submits one request per coordinator partition (made by build from
// that partition's keys) and returns a function that waits for them all,
// in partition order.
func (c *coordinators) fanOut(req *Request, byPart map[int32][]string, build func(keys []string) kmsg.Request) func(ctx context.Context) []kmsg.Response {
	return c.fanOutAt(req, req.Version, byPart, build)
}

// fanOutAt is fanOut with the requests at version.
func (c *coordinators) fanOutAt(req *Request, version int16, byPart map[int32][]string, build func(keys []string) kmsg.Request) func(ctx context.Context) []kmsg.Response {
	type sub struct {
		body kmsg.Request
		ch   <-chan kmsg.Response
	}
	var subs []sub
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		body := build(byPart[p])
		body.SetVersion(version)
		subs = append(subs, sub{body, c.submit(req, p, body)})
	}
	return func(ctx context.Context) []kmsg.Response {
		out := make([]kmsg.Response, len(subs))
		for i, s := range subs {
			out[i] = c.await(ctx, s.ch, s.body)
		}
		return out
	}
}

// partitionKeys splits keys into those allow accepts and the others, each
// in first-seen order.
func partitionKeys(keys []string, allow func(string) bool) (allowed, denied []string) {
	for _, k := range keys {
		if allow(k) {
			allowed = append(allowed, k)
		} else if !slices.Contains(denied, k) {
			denied = append(denied, k)
		}
	}
	return allowed, denied
}

// inRequestOrder merges per-coordinator answers back into the order the
// request named the keys; every requested key must have an answer.
func inRequestOrder[G any](keys []string, answers []G, keyOf func(G) string) []G {
	byKey := make(map[string]G, len(answers))
	for _, g := range answers {
		byKey[keyOf(g)] = g
	}
	out := make([]G, 0, len(keys))
	for _, k := range keys {
		g, ok := byKey[k]
		if !ok {
			panic("api: the coordinator did not answer for " + k)
		}
		out = append(out, g)
	}
	return out
}
