package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/sharestate"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/share"
	"github.com/strata-broker/strata/internal/share/leader"
)

// newShareStateCoordinators is the share coordinator kind (KIP-932), on
// __share_group_state created with the share.coordinator.state.topic.*
// settings, compacted: only the last snapshot of each share-partition
// counts.
func newShareStateCoordinators(h *Handler) *coordinators {
	cfg := h.opts.Config
	return &coordinators{
		h:     h,
		topic: sharestate.TopicName,
		create: func() metadata.CreateTopic {
			return metadata.CreateTopic{
				Name:              sharestate.TopicName,
				Partitions:        cfg.ShareStateTopicNumPartitions,
				ReplicationFactor: cfg.ShareStateTopicReplicationFactor,
				Configs: map[string]string{
					"cleanup.policy":      "compact",
					"segment.bytes":       strconv.Itoa(int(cfg.ShareStateTopicSegmentBytes)),
					"min.insync.replicas": strconv.Itoa(int(cfg.ShareStateTopicMinISR)),
					"compression.type":    "uncompressed",
				},
			}
		},
		rt:            h.opts.ShareStates,
		errorResponse: sharestate.ErrorResponse,
	}
}

// shareStateMax caps a share-state API at the version the share
// coordinator implements.
func shareStateMax(key int16) int16 {
	v, ok := sharestate.MaxVersions[key]
	if !ok {
		panic("api: no share coordinator version for key " + strconv.Itoa(int(key)))
	}
	return v
}

// serveShareState answers a share-state request of another broker (a
// share-partition leader) from the coordinator here. As Kafka: it needs
// CLUSTER_ACTION; it names exactly one share-partition, as leaders send
// them (INVALID_REQUEST otherwise).
func (h *Handler) serveShareState(ctx context.Context, req *Request, group string) Reply {
	if !h.allowedCluster(req, acl.OpClusterAction) {
		return done(sharestate.ErrorResponse(req.Body, clusterDenied))
	}
	topicID, partition, ok := shareStateTarget(req.Body)
	if !ok {
		return done(sharestate.ErrorResponse(req.Body, kerr.InvalidRequest.Code))
	}
	return h.shareStates.reply(ctx, req, sharestate.Key(group, topicID, partition))
}

// shareStateTarget is the one share-partition a share-state request names;
// ok is false unless it names one topic with one partition.
func shareStateTarget(body kmsg.Request) (topicID [16]byte, partition int32, ok bool) {
	switch r := body.(type) {
	case *kmsg.InitializeShareGroupStateRequest:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].TopicID, r.Topics[0].Partitions[0].Partition, true
		}
	case *kmsg.ReadShareGroupStateRequest:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].TopicID, r.Topics[0].Partitions[0].Partition, true
		}
	case *kmsg.WriteShareGroupStateRequest:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].TopicID, r.Topics[0].Partitions[0].Partition, true
		}
	case *kmsg.DeleteShareGroupStateRequest:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].TopicID, r.Topics[0].Partitions[0].Partition, true
		}
	case *kmsg.ReadShareGroupStateSummaryRequest:
		if len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
			return r.Topics[0].TopicID, r.Topics[0].Partitions[0].Partition, true
		}
	default:
		panic(fmt.Sprintf("api: %T is no share-state request", body))
	}
	return topicID, partition, false
}

// shareExpiryInterval is how often acquisition locks are checked for
// expiry (Kafka times each lock; a lock lasts 15 s at least).
const shareExpiryInterval = 100 * time.Millisecond

// wallClock is the share-partition leader's clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// RunShares releases expired acquisition locks of share groups until ctx
// ends; the broker runs it for as long as it serves.
func (h *Handler) RunShares(ctx context.Context) { h.shares.Run(ctx) }

// errShareStateUnavailable is a share coordinator that did not answer in
// time (not elected, loading, unreachable): retriable.
var errShareStateUnavailable = errors.New("the share coordinator is not available")

// Retries of a share-state request whose coordinator is moving or
// loading: Kafka's persister backs off from 1 s; a share fetch waits on
// this, so the first retries come sooner.
const (
	shareStateRetryFirst = 5 * time.Millisecond
	shareStateRetryMax   = 500 * time.Millisecond
	shareStateTimeout    = 5 * time.Second
)

// sharePersister is leader.Persister over the share coordinator of each
// share-partition, here or on the broker that leads its
// __share_group_state partition.
type sharePersister struct{ h *Handler }

var _ leader.Persister = sharePersister{}

// call sends body (naming key's share-partition) to its coordinator and
// returns the response and that partition's error code, retrying while
// the coordinator is moving or loading.
func (p sharePersister) call(ctx context.Context, key leader.Key, body kmsg.Request, codeOf func(kmsg.Response) int16) (kmsg.Response, int16, error) {
	ctx, cancel := context.WithTimeout(ctx, shareStateTimeout)
	defer cancel()
	coordKey := sharestate.Key(key.Group, key.Topic, key.Partition)
	wait := shareStateRetryFirst
	for {
		resp, err := p.send(ctx, coordKey, body)
		code := int16(0)
		if err == nil {
			code = codeOf(resp)
		}
		switch {
		case err == nil && !retriableShareState(code):
			return resp, code, nil
		case ctx.Err() != nil:
			return nil, 0, fmt.Errorf("%w: share-partition %v: %v", errShareStateUnavailable, key, ctx.Err())
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, shareStateRetryMax)
	}
}

func retriableShareState(code int16) bool {
	switch code {
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
		return true
	}
	return false
}

// send hands body to the coordinator of coordKey: the runtime here when
// this broker leads its partition (or no peers are known), else the
// leader's broker.
func (p sharePersister) send(ctx context.Context, coordKey string, body kmsg.Request) (kmsg.Response, error) {
	h := p.h
	t, err := h.shareStates.ensureTopic(ctx)
	if err != nil {
		return nil, err
	}
	part := offsets.PartitionFor(coordKey, int32(len(t.Partitions)))
	leaderID := t.Partitions[part].Leader
	if h.opts.Peers == nil || leaderID == metadata.NoLeader || leaderID == h.opts.Broker.NodeID() {
		if h.shareStates.rt == nil {
			return sharestate.ErrorResponse(body, kerr.CoordinatorNotAvailable.Code), nil
		}
		ch := make(chan kmsg.Response, 1)
		h.shareStates.rt.Submit(part, body, runtime.Client{}, func(r kmsg.Response) { ch <- r })
		select {
		case r := <-ch:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	peer, err := h.opts.Peers(leaderID)
	if err != nil {
		return nil, err
	}
	return peer.Request(ctx, body)
}

// Read is leader.Persister's: a share-partition with no state (the
// coordinator's INVALID_REQUEST) is ok=false.
func (p sharePersister) Read(ctx context.Context, key leader.Key, leaderEpoch int32) (leader.Stored, bool, error) {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = key.Group
	rt := kmsg.NewReadShareGroupStateRequestTopic()
	rt.TopicID = key.Topic
	rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch = key.Partition, leaderEpoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, code, err := p.call(ctx, key, req, func(r kmsg.Response) int16 {
		return firstPartition(r.(*kmsg.ReadShareGroupStateResponse)).ErrorCode
	})
	if err != nil {
		return leader.Stored{}, false, err
	}
	switch code {
	case 0:
	case kerr.InvalidRequest.Code:
		return leader.Stored{}, false, nil
	default:
		return leader.Stored{}, false, shareStateError(code, key)
	}
	rp2 := firstPartition(resp.(*kmsg.ReadShareGroupStateResponse))
	st := leader.Stored{StateEpoch: rp2.StateEpoch, HasStart: rp2.StartOffset >= 0, State: share.Persisted{Start: base.Offset(max(rp2.StartOffset, 0))}}
	for _, b := range rp2.StateBatches {
		st.State.Batches = append(st.State.Batches, share.StateBatch{
			Offsets:    base.Range{Start: base.Offset(b.FirstOffset), End: base.Offset(b.LastOffset) + 1},
			State:      share.State(b.DeliveryState),
			Deliveries: b.DeliveryCount,
		})
	}
	return st, true, nil
}

func firstPartition(r *kmsg.ReadShareGroupStateResponse) kmsg.ReadShareGroupStateResponseTopicPartition {
	if len(r.Topics) == 0 || len(r.Topics[0].Partitions) == 0 {
		p := kmsg.NewReadShareGroupStateResponseTopicPartition()
		p.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return p
	}
	return r.Topics[0].Partitions[0]
}

// Initialize is leader.Persister's.
func (p sharePersister) Initialize(ctx context.Context, key leader.Key, stateEpoch int32, start base.Offset) error {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = key.Group
	rt := kmsg.NewInitializeShareGroupStateRequestTopic()
	rt.TopicID = key.Topic
	rp := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	rp.Partition, rp.StateEpoch, rp.StartOffset = key.Partition, stateEpoch, int64(start)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	_, code, err := p.call(ctx, key, req, func(r kmsg.Response) int16 {
		resp := r.(*kmsg.InitializeShareGroupStateResponse)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return kerr.CoordinatorNotAvailable.Code
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	})
	if err != nil {
		return err
	}
	return shareStateError(code, key)
}

// Write is leader.Persister's. A share-partition whose state is gone (the
// group was deleted: INVALID_REQUEST) is fenced as well: the leader drops
// it and loads it again.
func (p sharePersister) Write(ctx context.Context, key leader.Key, stateEpoch, leaderEpoch int32, state share.Persisted, completed int64) error {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.Version = 1
	req.GroupID = key.Group
	rt := kmsg.NewWriteShareGroupStateRequestTopic()
	rt.TopicID = key.Topic
	rp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	rp.Partition, rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = key.Partition, stateEpoch, leaderEpoch, int64(state.Start)
	rp.DeliveryCompleteCount = int32(min(completed, 1<<31-1))
	for _, b := range state.Batches {
		sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		sb.FirstOffset, sb.LastOffset = int64(b.Offsets.Start), int64(b.Offsets.End)-1
		sb.DeliveryState, sb.DeliveryCount = int8(b.State), b.Deliveries
		rp.StateBatches = append(rp.StateBatches, sb)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	_, code, err := p.call(ctx, key, req, func(r kmsg.Response) int16 {
		resp := r.(*kmsg.WriteShareGroupStateResponse)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return kerr.CoordinatorNotAvailable.Code
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	})
	if err != nil {
		return err
	}
	if code == kerr.InvalidRequest.Code {
		return fmt.Errorf("%w: share-partition %v has no state any more", leader.ErrFenced, key)
	}
	return shareStateError(code, key)
}

// shareStateError is the error of a share coordinator's answer code.
func shareStateError(code int16, key leader.Key) error {
	switch code {
	case 0:
		return nil
	case kerr.FencedStateEpoch.Code, kerr.FencedLeaderEpoch.Code:
		return fmt.Errorf("%w: share-partition %v: %v", leader.ErrFenced, key, kerr.ErrorForCode(code))
	}
	return fmt.Errorf("%w: share-partition %v: %v", errShareStateUnavailable, key, kerr.ErrorForCode(code))
}

// DeleteShareState deletes the share-partition state of a deleted share
// group from the share coordinators, and forgets what this broker holds
// of it; failures are logged (the state then stays, and the group's id
// starts from it if used again).
func (h *Handler) DeleteShareState(group string, topics map[base.TopicID][]int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*shareStateTimeout)
	defer cancel()
	p := sharePersister{h}
	for topicID, partitions := range topics {
		for _, partition := range partitions {
			key := leader.Key{Group: group, Topic: topicID, Partition: partition}
			if err := p.delete(ctx, key); err != nil {
				h.logger.Warn("deleting a share group's delivery state", "share_partition", key, "err", err)
			}
		}
	}
	h.shares.DropGroup(group)
}

// delete removes key's state at its share coordinator.
func (p sharePersister) delete(ctx context.Context, key leader.Key) error {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = key.Group
	rt := kmsg.NewDeleteShareGroupStateRequestTopic()
	rt.TopicID = key.Topic
	rp := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
	rp.Partition = key.Partition
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	_, code, err := p.call(ctx, key, req, func(r kmsg.Response) int16 {
		resp := r.(*kmsg.DeleteShareGroupStateResponse)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return kerr.CoordinatorNotAvailable.Code
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	})
	if err != nil {
		return err
	}
	if code == kerr.UnknownTopicOrPartition.Code {
		return nil // the topic is deleted: its share coordinator drops the state itself
	}
	return shareStateError(code, key)
}

// shareSummary is a share-partition's start offset, leader epoch and
// delivery complete count as its share coordinator holds them; ok is false
// when it holds no start offset.
type shareSummary struct {
	startOffset base.Offset
	leaderEpoch int32
	stateEpoch  int32
	completed   int64 // -1: unknown
	ok          bool
}

// summary reads key's ReadShareGroupStateSummary (v1).
func (p sharePersister) summary(ctx context.Context, key leader.Key) (shareSummary, error) {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.Version = 1
	req.GroupID = key.Group
	rt := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	rt.TopicID = key.Topic
	rp := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch = key.Partition, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	var part kmsg.ReadShareGroupStateSummaryResponseTopicPartition
	_, code, err := p.call(ctx, key, req, func(r kmsg.Response) int16 {
		resp := r.(*kmsg.ReadShareGroupStateSummaryResponse)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return kerr.CoordinatorNotAvailable.Code
		}
		part = resp.Topics[0].Partitions[0]
		return part.ErrorCode
	})
	if err != nil {
		return shareSummary{}, err
	}
	if err := shareStateError(code, key); err != nil {
		return shareSummary{}, err
	}
	return shareSummary{startOffset: base.Offset(part.StartOffset), leaderEpoch: part.LeaderEpoch, stateEpoch: part.StateEpoch,
		completed: int64(part.DeliveryCompleteCount), ok: part.StartOffset >= 0}, nil
}

// partitionEnd is the high watermark of a partition: from the partition
// when it is led here, else from its leader (ListOffsets latest).
func (h *Handler) partitionEnd(ctx context.Context, t *metadata.Topic, partition int32) (base.Offset, error) {
	if p, ok := h.opts.Broker.Partition(base.TopicPartition{Topic: t.Name, Partition: partition}); ok && p.IsLeader() {
		return p.Offsets().HighWatermark, nil
	}
	leaderID := t.Partitions[partition].Leader
	if h.opts.Peers == nil || leaderID == metadata.NoLeader {
		return 0, fmt.Errorf("%w: %s-%d has no leader", errShareStateUnavailable, t.Name, partition)
	}
	peer, err := h.opts.Peers(leaderID)
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = t.Name
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = partition, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := peer.Request(ctx, req)
	if err != nil {
		return 0, err
	}
	resp, ok := kresp.(*kmsg.ListOffsetsResponse)
	if !ok || len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
		return 0, fmt.Errorf("%w: no end offset of %s-%d from broker %d", errShareStateUnavailable, t.Name, partition, leaderID)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		return 0, kerr.ErrorForCode(code)
	}
	return base.Offset(resp.Topics[0].Partitions[0].Offset), nil
}

// DropSharePartition forgets what this broker holds of the share-partitions
// of a partition it no longer leads or hosts: their locks are gone, and
// their next leader loads the coordinator's state.
func (h *Handler) DropSharePartition(topic base.TopicID, partition int32) {
	h.shares.DropPartition(topic, partition)
}
