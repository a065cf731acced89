package api

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/partition"
)

// A Fetch whose replica id is a broker id (ReplicaID before v15,
// ReplicaState.ID from v15) is a follower's, which Kafka serves by other
// rules than a consumer's (ReplicaManager.fetchMessages with a follower's
// FetchParams, Partition.fetchRecords):
//   - it needs CLUSTER_ACTION on the cluster; refused, every partition is
//     TOPIC_AUTHORIZATION_FAILED;
//   - only the partition's leader serves it (NOT_LEADER_OR_FOLLOWER), and
//     the current leader epoch is checked as for a consumer;
//   - the leader checks it and records the follower's progress
//     (broker.ReplicaFetch): a diverging log is answered with
//     DivergingEpoch and no records, an offset the leader cannot place with
//     OFFSET_OUT_OF_RANGE, one in the remote tier with
//     OFFSET_MOVED_TO_TIERED_STORAGE;
//   - records are read up to the log end, past the high watermark
//     (partition.ReadLogEnd), through the same file-region path as a
//     consumer's;
//   - a long poll waits for data past the fetch offset at the log end. As
//     Kafka's DelayedFetch, a change of the partition's leadership or epoch
//     answers it, and so does a partition error or a divergence found on
//     the first read; a moved high watermark does when the follower said
//     which it has (Fetch v18, KIP-1166) and the leader's is past it, so
//     that the follower learns the new one at once and serves its own
//     consumers (KIP-392) without waiting for the next append.
//
// Strata keeps no fetch session for a replica: every follower fetch is
// answered sessionless (session id 0), and an incremental one gets
// FETCH_SESSION_ID_NOT_FOUND, as a session Strata never opened.

// fetchingReplica is the broker that sent a follower's fetch.
type fetchingReplica struct {
	id int32
	// epoch is its broker epoch, when hasEpoch (Fetch v15+).
	epoch    int64
	hasEpoch bool
}

// fetchReplica is who sent r, if a follower did.
func fetchReplica(r *kmsg.FetchRequest, version int16) (fetchingReplica, bool) {
	if version >= 15 {
		rs := r.ReplicaState
		return fetchingReplica{id: rs.ID, epoch: rs.Epoch, hasEpoch: rs.Epoch >= 0}, rs.ID >= 0
	}
	return fetchingReplica{id: r.ReplicaID}, r.ReplicaID >= 0
}

// replicaTarget is one partition of a follower's fetch, resolved.
type replicaTarget struct {
	fetchTarget
	fetch broker.ReplicaFetch
	// epoch is the partition's leader epoch at the first read; a long
	// poll ends when it changes.
	epoch base.Epoch
	// throttled: the follower's replica is throttled here (KIP-73,
	// replication_throttle.go).
	throttled bool
	// knownHW is the high watermark the follower has (Fetch v18,
	// KIP-1166): -1 unknown, hwNotSent when it did not say.
	knownHW int64
}

// hwNotSent is Fetch v18's HighWatermark of a replica that does not send
// its high watermark (KIP-1166's default).
const hwNotSent = math.MaxInt64

func (h *Handler) handleReplicaFetch(ctx context.Context, req *Request, r *kmsg.FetchRequest, rep fetchingReplica) Reply {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	if kind, _ := classifySession(r.SessionID, r.SessionEpoch); kind == sessionIncremental {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return done(resp)
	}
	targets := h.resolveReplicaFetch(req, r, rep, req.Version >= 13, resp)
	// Take the change channels before reading, so an append between the
	// read and the wait still wakes the wait.
	changed := replicaChangeChans(targets, nil)
	bufs := newFetchBuffers()
	got, answered := h.fillReplicaFetch(r, resp, targets, bufs, true)
	maxWait := time.Duration(r.MaxWaitMillis) * time.Millisecond
	if got >= int(r.MinBytes) || answered || maxWait <= 0 || len(targets) == 0 || followerBehindHW(targets) {
		return Reply{Resp: resp, Release: bufs.release, Splices: bufs.spliceList}
	}
	deadline := time.Now().Add(maxWait)
	return Reply{Wait: func() kmsg.Response {
		for {
			woke := waitAny(ctx, req.Stopping, changed, deadline)
			changed = replicaChangeChans(targets, changed)
			if woke && !replicaFetchMayComplete(targets) {
				continue // only the high watermark moved
			}
			got, answered = h.fillReplicaFetch(r, resp, targets, bufs, false)
			if !woke || answered || got >= int(r.MinBytes) || followerBehindHW(targets) {
				return resp
			}
		}
	}, Release: bufs.release, Splices: bufs.spliceList}
}

// resolveReplicaFetch builds the response skeleton, one entry per topic
// and partition of r in its order, and the partitions to read; the others
// get their error code now.
func (h *Handler) resolveReplicaFetch(req *Request, r *kmsg.FetchRequest, rep fetchingReplica, byID bool, resp *kmsg.FetchResponse) []replicaTarget {
	img := h.opts.Meta.Image()
	denied := !h.allowedCluster(req, acl.OpClusterAction)
	var targets []replicaTarget
	resp.Topics = make([]kmsg.FetchResponseTopic, len(r.Topics))
	for i, rt := range r.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		t := lookupTopic(img, rt.Topic, rt.TopicID, byID)
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			if denied {
				sp.ErrorCode = topicDenied
				continue
			}
			p, code := h.fetchPartition(t, rp.Partition, byID)
			if sp.ErrorCode = code; code != 0 {
				continue
			}
			targets = append(targets, replicaTarget{
				fetchTarget: fetchTarget{
					topicIdx: i, partIdx: j, order: len(targets), part: p,
					offset:      base.Offset(rp.FetchOffset),
					maxBytes:    int(rp.PartitionMaxBytes),
					leaderEpoch: rp.CurrentLeaderEpoch,
				},
				fetch:     replicaFetchOf(p.TP(), rep, rp),
				throttled: ReplicaThrottled(t, config.LeaderThrottledReplicas, rp.Partition, h.opts.Broker.NodeID(), rep.id),
				knownHW:   rp.HighWatermark,
			})
		}
	}
	return targets
}

// replicaFetchOf is a follower's fetch of one partition, without the
// wire's sentinels.
func replicaFetchOf(tp base.TopicPartition, rep fetchingReplica, rp kmsg.FetchRequestTopicPartition) broker.ReplicaFetch {
	return broker.ReplicaFetch{
		TP:                  tp,
		ReplicaID:           rep.id,
		BrokerEpoch:         rep.epoch,
		HasBrokerEpoch:      rep.hasEpoch,
		FetchOffset:         base.Offset(rp.FetchOffset),
		LastFetchedEpoch:    base.Epoch(rp.LastFetchedEpoch),
		HasLastFetchedEpoch: rp.LastFetchedEpoch >= 0,
		// Unknown (-1, Fetch < v5) is recorded as 0: the leader decides
		// nothing by a follower's log start.
		LogStart: base.Offset(max(rp.LogStartOffset, 0)),
	}
}

// fillReplicaFetch reads every target into the response and returns the
// record bytes in it and whether some partition is answered without
// waiting (an error, or a diverging log). record says whether the fetch
// is recorded as the followers' progress: on the first read only, as
// Kafka's DelayedFetch reads again without recording. Only the first
// partition with data may exceed its byte limits (KIP-74).
func (h *Handler) fillReplicaFetch(r *kmsg.FetchRequest, resp *kmsg.FetchResponse, targets []replicaTarget, bufs *fetchBuffers, record bool) (int, bool) {
	bufs.reset()
	budget := int(r.MaxBytes)
	if budget <= 0 {
		budget = 1<<31 - 1
	}
	total, answered := 0, false
	throttle := h.leaderThrottled(targets)
	var throttledBytes int
	for i := range targets {
		t := &targets[i]
		sp := &resp.Topics[t.topicIdx].Partitions[t.partIdx]
		limit := max(min(t.maxBytes, budget-total), 0)
		if t.throttled && throttle {
			limit = -1 // its offsets and errors, no records
		}
		n := h.replicaFetchOne(sp, t, limit, total == 0 && limit >= 0, bufs, record)
		total += n
		if t.throttled {
			throttledBytes += n
		}
		answered = answered || sp.ErrorCode != 0 || sp.DivergingEpoch.Epoch >= 0
	}
	h.leaderThrottle.Record(int64(throttledBytes), time.Now())
	return total, answered
}

// replicaFetchOne reads t into sp and returns the record bytes added.
func (h *Handler) replicaFetchOne(sp *kmsg.FetchResponseTopicPartition, t *replicaTarget, limit int, first bool, bufs *fetchBuffers, record bool) int {
	off := t.part.Offsets()
	if record {
		t.epoch = off.LeaderEpoch
	}
	setFetchOffsets(sp, off)
	sp.ErrorCode = 0
	sp.RecordBatches = []byte{}
	sp.DivergingEpoch = kmsg.NewFetchResponseTopicPartitionDivergingEpoch()
	if code := checkLeaderEpoch(t.leaderEpoch, off.LeaderEpoch); code != 0 {
		sp.ErrorCode = code
		return 0
	}
	check := h.opts.Broker.CheckReplicaFetch
	if record {
		check = h.opts.Broker.ReplicaFetch
	}
	res, err := check(t.fetch)
	if err != nil {
		sp.ErrorCode, _ = errorCode(err)
		return 0
	}
	// Recording the fetch may have moved the high watermark: the
	// follower hears of it now rather than at its next fetch.
	setFetchOffsets(sp, t.part.Offsets())
	if epoch, end, ok := res.DivergingEpoch(); ok {
		sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = int32(epoch), int64(end)
		return 0
	}
	if res.OutOfRange() {
		sp.ErrorCode = kerr.OffsetOutOfRange.Code
		return 0
	}
	if limit <= 0 && !first {
		return 0
	}
	if wantsRegion(limit, t.offset, off.LogEnd) {
		if n, ok := fetchRegion(sp, t.fetchTarget, limit, first, partition.ReadLogEnd, bufs); ok {
			return n
		}
	}
	buf := bufs.read
	read, err := t.part.ReadIsolated(t.offset, limit, buf.b, partition.ReadLogEnd)
	setFetchOffsets(sp, read.Offsets)
	switch {
	case errors.Is(err, partition.ErrOffsetInRemote):
		// Kafka's answer to a follower below the leader's local log: it
		// rebuilds that part from the remote tier.
		sp.ErrorCode = kerr.OffsetMovedToTieredStorage.Code
		return 0
	case err != nil:
		sp.ErrorCode, _ = errorCode(err)
		return 0
	case !first && len(read.Records) > limit:
		return 0
	}
	buf.b = read.Buf
	if len(read.Records) > 0 {
		sp.RecordBatches = read.Records
	}
	return len(read.Records)
}

// replicaChangeChans are the change channels of targets' partitions,
// in buf's storage.
func replicaChangeChans(targets []replicaTarget, buf []<-chan struct{}) []<-chan struct{} {
	buf = buf[:0]
	for _, t := range targets {
		buf = append(buf, t.part.Changed())
	}
	return buf
}

// replicaFetchMayComplete reports whether a parked follower fetch may have
// something new to answer: data past a fetch offset (or a log end below
// it), a partition whose leadership or epoch changed, or a high watermark
// past the one the follower said it has (KIP-1166). A moved high
// watermark alone is not when it did not say: Kafka's DelayedFetch before
// v18 waits for bytes at the log end.
func replicaFetchMayComplete(targets []replicaTarget) bool {
	for _, t := range targets {
		off := t.part.Offsets()
		if off.LogEnd != t.offset || off.LeaderEpoch != t.epoch || !t.part.IsLeader() || hwNews(off.HighWatermark, t) {
			return true
		}
	}
	return false
}

// followerBehindHW reports whether, for some target, the leader's high
// watermark would raise the one the follower said it has (KIP-1166).
func followerBehindHW(targets []replicaTarget) bool {
	for _, t := range targets {
		// Its offsets only for a follower that said (a lock each).
		if t.knownHW != hwNotSent && hwNews(t.part.Offsets().HighWatermark, t) {
			return true
		}
	}
	return false
}

// hwNews reports whether the leader's high watermark would raise the one
// follower t has: a follower's is at most its log end (its fetch offset),
// so one whose high watermark is its log end learns nothing from it until
// it gets records, which the fetch answers for anyway (or holds back, for
// a throttled replica, which must not be answered at once again and
// again). A follower that did not say learns nothing new this way.
func hwNews(leader base.Offset, t replicaTarget) bool {
	return t.knownHW != hwNotSent && min(int64(leader), int64(t.offset)) > t.knownHW
}
