package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
)

// ListOffsets: v1-11. -1 latest, -2 earliest (possibly remote), -3 max
// timestamp (v7+, over both tiers), -4 earliest local (v8+), -5 last
// tiered (v9+), -6 earliest pending upload (v11, KIP-1023; v11 adds
// nothing else), or a timestamp searched in the remote time indexes, then
// the local one. With read_committed (v2+) latest is the last stable
// offset, and a timestamp search answers only offsets below it, as Kafka's
// fetchOffsetForTimestamp.
//
// The replica id decides the rest, as in Kafka's ReplicaManager.fetchOffset:
// a consumer's (-1) is answered by the leader within its isolation level;
// a follower's (a broker id) by the leader, up to the log end (latest is
// the log end); a debugging tool's (-2) by any replica, up to the log end.
// A consumer asking a leader whose high watermark has not reached the
// start of its leader epoch yet (just elected) gets OFFSET_NOT_AVAILABLE
// (LEADER_NOT_AVAILABLE before v5) for latest, and for a timestamp whose
// answer it cannot give yet. A partition the request names twice is
// INVALID_REQUEST (each copy), as in Kafka.
func init() { register(2, 1, 11, (*Handler).handleListOffsets) }

// Kafka's ListOffsets replica ids that are not broker ids.
const (
	consumerReplicaID  = -1
	debuggingReplicaID = -2
)

// offsetsReader is who a ListOffsets is for.
type offsetsReader struct {
	// client: a consumer, whose isolation level bounds the answer;
	// otherwise the log end does.
	client    bool
	isolation int8
	version   int16
}

// offsetQuery is a ListOffsets target with wire sentinels named.
type offsetQuery int

const (
	queryTimestamp offsetQuery = iota + 1
	queryLatest
	queryEarliest
	queryMaxTimestamp
	queryEarliestLocal
	queryLastTiered
	queryEarliestPendingUpload
)

func parseOffsetQuery(ts int64) (offsetQuery, bool) {
	switch {
	case ts >= 0:
		return queryTimestamp, true
	case ts == -1:
		return queryLatest, true
	case ts == -2:
		return queryEarliest, true
	case ts == -3:
		return queryMaxTimestamp, true
	case ts == -4:
		return queryEarliestLocal, true
	case ts == -5:
		return queryLastTiered, true
	case ts == -6:
		return queryEarliestPendingUpload, true
	}
	return 0, false
}

func (h *Handler) handleListOffsets(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ListOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	img := h.opts.Meta.Image()
	reader := offsetsReader{client: r.ReplicaID == consumerReplicaID, isolation: r.IsolationLevel, version: req.Version}
	leaderOnly := r.ReplicaID != debuggingReplicaID
	var asked []base.TopicPartition
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			asked = append(asked, base.TopicPartition{Topic: rt.Topic, Partition: rp.Partition})
		}
	}
	twice := repeated(asked)
	next := 0 // the index in asked of the partition answered next
	for _, rt := range r.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		t := img.Topics[rt.Topic]
		denied := !h.allowedTopic(req, acl.OpDescribe, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			askedTwice := twice[next]
			next++
			p, code := h.hostedPartition(t, rp.Partition, false, leaderOnly)
			switch {
			case denied:
				code = topicDenied
			case askedTwice:
				code = kerr.InvalidRequest.Code
			case code == 0:
				code = h.listOffset(ctx, p, rp, reader, &sp)
			}
			sp.ErrorCode = code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return done(resp)
}

func (h *Handler) listOffset(ctx context.Context, p *partition.Partition, rp kmsg.ListOffsetsRequestTopicPartition, reader offsetsReader, sp *kmsg.ListOffsetsResponseTopicPartition) int16 {
	off := p.Offsets()
	if code := checkLeaderEpoch(rp.CurrentLeaderEpoch, off.LeaderEpoch); code != 0 {
		return code
	}
	sp.LeaderEpoch = int32(off.LeaderEpoch)
	q, ok := parseOffsetQuery(rp.Timestamp)
	if !ok {
		return kerr.InvalidRequest.Code
	}
	set := func(o base.Offset) { sp.Offset, sp.Timestamp = int64(o), -1 }
	// What the reader may read: a timestamp search answers only offsets
	// below it, as Kafka's fetchOffsetForTimestamp.
	fetchable := off.LogEnd
	if reader.client {
		fetchable = off.End(isolationOf(reader.isolation))
	}
	// A new leader whose high watermark lags the start of its epoch
	// cannot tell a client what is committed yet (Kafka's
	// maybeOffsetsError).
	lagging := false
	if reader.client {
		if start, ok := h.opts.Broker.LeaderEpochStart(p); ok && start > off.HighWatermark {
			lagging = true
		}
	}
	notAvailable := kerr.OffsetNotAvailable.Code
	if reader.version < 5 {
		notAvailable = kerr.LeaderNotAvailable.Code
	}
	switch q {
	case queryLatest:
		if lagging {
			return notAvailable
		}
		set(fetchable)
	case queryEarliest:
		set(off.LogStart)
	case queryEarliestLocal:
		set(off.LocalStart)
	case queryLastTiered:
		// Nothing tiered (or a local-only partition): Kafka answers -1.
		if o, ok := h.opts.Broker.LastTiered(p); ok {
			set(o)
		}
	case queryEarliestPendingUpload:
		// Unknown tier (metadata not loaded): -1, never a guess.
		if o, ok := h.opts.Broker.EarliestPendingUpload(p); ok {
			set(o)
		}
	case queryMaxTimestamp:
		ts, o, ok, err := h.opts.Broker.MaxTimestamp(ctx, p)
		if err != nil {
			code, msg := errorCode(err)
			h.logger.Warn("remote max timestamp lookup", "partition", p.TP().String(), "err", msg)
			return code
		}
		switch {
		case ok && o < fetchable:
			sp.Offset, sp.Timestamp = int64(o), ts
		case lagging:
			return notAvailable
		}
	case queryTimestamp:
		o, ts, ok, err := h.opts.Broker.RemoteOffsetForTimestamp(ctx, p, rp.Timestamp)
		if err != nil {
			code, msg := errorCode(err)
			h.logger.Warn("remote timestamp lookup", "partition", p.TP().String(), "err", msg)
			return code
		}
		if ok {
			sp.Offset, sp.Timestamp = int64(o), ts
			return 0
		}
		// The partition searches below its high watermark only, so a
		// replica's search does not see the uncommitted tail that Kafka
		// would show it; followers ask for latest and earliest only.
		o, ts, ok = p.OffsetForTimestamp(rp.Timestamp)
		switch {
		case ok && o < fetchable:
			sp.Offset, sp.Timestamp = int64(o), ts
		case lagging:
			return notAvailable
		}
	}
	return 0
}
