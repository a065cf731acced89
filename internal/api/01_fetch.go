package api

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

// Fetch: v4-18 (v17 and v18 only add what a follower sends: its log
// directory, KIP-853, and its high watermark, KIP-1166). Long polls wait
// for new data up to max.wait.ms when fewer than min.bytes are ready. From v7 a consumer may open an incremental
// fetch session (KIP-227, fetch_session.go); full fetches without one are
// served as before. A follower's fetch (a replica id that is a broker id)
// is served by fetch_replica.go. A consumer with a consumer_byte_rate quota
// is held to it (fetch_quota.go).
func init() { register(1, 4, 18, (*Handler).handleFetch) }

const readCommitted = 1

// fetchTarget is one partition a fetch asks for, resolved against the image.
type fetchTarget struct {
	topicIdx, partIdx int
	order             int                  // place in the response, among the targets
	part              *partition.Partition // nil when resolution failed
	offset            base.Offset
	maxBytes          int
	leaderEpoch       int32 // -1 = not given
	preferred         int32 // the replica to send the consumer to (KIP-392), -1 = none
}

func (h *Handler) handleFetch(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.FetchRequest)
	if rep, ok := fetchReplica(r, req.Version); ok {
		return h.handleReplicaFetch(ctx, req, r, rep)
	}
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	fc := h.sessions.begin(r, req.Version)
	if fc.errCode != 0 {
		resp.ErrorCode = fc.errCode
		return done(resp)
	}
	capFetchBytes(r, h.opts.Config.FetchMaxBytes)
	cq, limited := h.consumerQuota(req, r)
	targets := h.resolveFetch(req, fc.wants, fc.byID, resp)
	// Take the change channels before reading, so an append between the
	// read and the wait still wakes the wait.
	changed := changeChans(targets)
	bufs := newFetchBuffers()
	got, remote := h.fillFetch(r, resp, targets, bufs)
	maxWait := time.Duration(r.MaxWaitMillis) * time.Millisecond
	// A fetch that read from the remote tier answers once those reads are
	// done (or remote.fetch.max.wait.ms passed), as Kafka's delayed remote
	// fetch does: waiting for appends would only stall a catching-up
	// consumer. A partition error is answered at once too, as in Kafka:
	// the consumer must act on it (reset an offset, refresh metadata).
	if got >= int(r.MinBytes) || remote || maxWait <= 0 || len(targets) == 0 || answersNow(resp) {
		h.finishConsumerFetch(fc, resp, bufs, cq, limited, got)
		h.hintFetchLeaders(resp, req.Listener)
		return Reply{Resp: resp, Release: bufs.release, Splices: bufs.spliceList}
	}
	deadline := time.Now().Add(maxWait)
	return Reply{Wait: func() kmsg.Response {
		for {
			woke := waitAny(ctx, req.Stopping, changed, deadline)
			changed = changeChans(targets)
			got, remote = h.fillFetch(r, resp, targets, bufs)
			if !woke || remote || got >= int(r.MinBytes) || answersNow(resp) {
				h.finishConsumerFetch(fc, resp, bufs, cq, limited, got)
				h.hintFetchLeaders(resp, req.Listener)
				return resp
			}
		}
	}, Release: bufs.release, Splices: bufs.spliceList}
}

// capFetchBytes bounds a consumer fetch's max_bytes by fetch.max.bytes
// (limit; Kafka's broker-side cap, KIP-541), and its min_bytes by the
// result. A max_bytes of 0 or less asks for no bound: it gets limit.
func capFetchBytes(r *kmsg.FetchRequest, limit int32) {
	if limit > 0 && (r.MaxBytes <= 0 || r.MaxBytes > limit) {
		r.MaxBytes = limit
	}
	if r.MaxBytes > 0 {
		r.MinBytes = min(r.MinBytes, r.MaxBytes)
	}
}

// answersNow reports whether some partition of resp carries an error code
// or a preferred read replica: the consumer must act on it, so the fetch
// does not wait, as in Kafka.
func answersNow(resp *kmsg.FetchResponse) bool {
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if p := &resp.Topics[i].Partitions[j]; p.ErrorCode != 0 || p.PreferredReadReplica >= 0 {
				return true
			}
		}
	}
	return false
}

// finishFetch settles resp with the session. A session error drops every
// partition, and with them what bufs holds for them: file regions whose
// markers are no longer in the response must not be spliced.
func (h *Handler) finishFetch(fc fetchContext, resp *kmsg.FetchResponse, bufs *fetchBuffers) {
	h.sessions.finish(fc, resp)
	if resp.ErrorCode != 0 {
		bufs.reset()
	}
}

// FetchSessions returns the incremental fetch sessions open and the
// partitions they hold, for the broker's gauges.
func (h *Handler) FetchSessions() (sessions, partitions int) { return h.sessions.counts() }

// resolveFetch builds the response skeleton, one partition per want in
// their order (consecutive wants of one topic share its entry), and the
// list of readable partitions; partitions that cannot be read get their
// error code now (TOPIC_AUTHORIZATION_FAILED without READ on the topic).
// From v11 a partition followed here is readable too (fetch_follower.go).
func (h *Handler) resolveFetch(req *Request, wants []fetchWant, byID bool, resp *kmsg.FetchResponse) []fetchTarget {
	img := h.opts.Meta.Image()
	var rack string // the client's (client.rack), which v11 brought
	if fetchFromFollowers(req.Version) {
		rack = req.Body.(*kmsg.FetchRequest).Rack
	}
	targets := make([]fetchTarget, 0, len(wants))
	resp.Topics = make([]kmsg.FetchResponseTopic, 0, topicRuns(wants))
	for i := 0; i < len(wants); {
		run := wants[i : i+topicRunLen(wants[i:])]
		i += len(run)
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = run[0].key.topic, run[0].key.topicID
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(run))
		t := lookupTopic(img, st.Topic, st.TopicID, byID)
		denied := !h.allowedTopic(req, acl.OpRead, topicName(st.Topic, t))
		for j, w := range run {
			sp := &st.Partitions[j]
			*sp = kmsg.NewFetchResponseTopicPartition()
			sp.Partition = w.key.partition
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			if denied {
				sp.ErrorCode = topicDenied
				continue
			}
			p, code := h.hostedPartition(t, w.key.partition, byID, !fetchFromFollowers(req.Version))
			if sp.ErrorCode = code; code != 0 {
				continue
			}
			targets = append(targets, fetchTarget{
				topicIdx: len(resp.Topics), partIdx: j, order: len(targets), part: p,
				offset:      base.Offset(w.offset),
				maxBytes:    int(w.maxBytes),
				leaderEpoch: w.leaderEpoch,
				preferred:   h.preferredReadReplica(img, req.Listener, rack, p, base.Offset(w.offset)),
			})
		}
		resp.Topics = append(resp.Topics, st)
	}
	return targets
}

// topicRuns counts the runs of consecutive wants of one topic: the topics
// of the response.
func topicRuns(wants []fetchWant) int {
	n := 0
	for i := 0; i < len(wants); i += topicRunLen(wants[i:]) {
		n++
	}
	return n
}

// topicRunLen is how many wants from the first are of its topic.
func topicRunLen(wants []fetchWant) int {
	n := 1
	for n < len(wants) && wants[n].key.topic == wants[0].key.topic && wants[n].key.topicID == wants[0].key.topicID {
		n++
	}
	return n
}

// fetchPartition resolves a partition that a client reads or writes:
// only its leader serves it (Kafka's fetchOnlyFromLeader), so one hosted
// here as a follower is NOT_LEADER_OR_FOLLOWER (see hostedPartition).
func (h *Handler) fetchPartition(t *metadata.Topic, idx int32, byID bool) (*partition.Partition, int16) {
	return h.hostedPartition(t, idx, byID, true)
}

// hostedPartition resolves partition idx of t (looked up by id when byID)
// to the partition hosted here, as Kafka's ReplicaManager.getPartition:
// UNKNOWN_TOPIC_ID or UNKNOWN_TOPIC_OR_PARTITION when the image has no
// such topic or partition, NOT_LEADER_OR_FOLLOWER when it has one that is
// not hosted here, or (leaderOnly) is hosted as a follower.
func (h *Handler) hostedPartition(t *metadata.Topic, idx int32, byID, leaderOnly bool) (*partition.Partition, int16) {
	switch {
	case t == nil && byID:
		return nil, kerr.UnknownTopicID.Code
	case t == nil || idx < 0 || int(idx) >= len(t.Partitions):
		return nil, kerr.UnknownTopicOrPartition.Code
	}
	p, ok := h.opts.Broker.Partition(base.TopicPartition{Topic: t.Name, Partition: idx})
	if !ok || leaderOnly && !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return p, 0
}

// fillFetch reads every target into the response and returns the number
// of record bytes in it, and whether some partition was read from the
// remote tier. Only the first partition with data may exceed its byte
// limits (KIP-74), so a large batch never stalls a consumer.
//
// Local partitions are read in request order; a partition in the remote
// tier reserves its limit from the budget at its place in that order and
// is read afterwards, in parallel with the fetch's other remote
// partitions (fetch_remote.go), so the budget holds whatever they return.
// While the fetch quota is used up (KIP-956) remote partitions are not
// read and get no records and no error.
func (h *Handler) fillFetch(r *kmsg.FetchRequest, resp *kmsg.FetchResponse, targets []fetchTarget, bufs *fetchBuffers) (int, bool) {
	bufs.reset()
	budget := int(r.MaxBytes)
	if budget <= 0 {
		budget = 1<<31 - 1
	}
	total, reserved := 0, 0
	var remote []*remoteRead
	for _, t := range targets {
		sp := &resp.Topics[t.topicIdx].Partitions[t.partIdx]
		limit := max(min(t.maxBytes, budget-total), 0)
		n, inRemote := h.fetchOne(r, sp, t, limit, total == 0, bufs)
		switch {
		case !inRemote:
			total += n
		case h.opts.Broker.RemoteFetchThrottled():
		default:
			remote = append(remote, &remoteRead{sp: sp, t: t, iso: isolationOf(r.IsolationLevel), limit: limit, first: total == 0})
			total += limit
			reserved += limit
		}
	}
	if len(remote) == 0 {
		return total, false
	}
	return total - reserved + h.readRemote(remote, bufs), true
}

// fetchOne reads t into sp and returns the record bytes added; inRemote
// says t's offset is in the remote tier, for the caller to read. A
// read_committed fetch stops at the last stable offset and carries the
// aborted transactions of what it returns.
func (h *Handler) fetchOne(r *kmsg.FetchRequest, sp *kmsg.FetchResponseTopicPartition, t fetchTarget, limit int, first bool, bufs *fetchBuffers) (n int, inRemote bool) {
	iso := isolationOf(r.IsolationLevel)
	off := t.part.Offsets()
	setFetchOffsets(sp, off)
	// Kafka sends empty, never null, record bytes; librdkafka rejects null.
	sp.RecordBatches = []byte{}
	if iso == partition.ReadCommitted {
		sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	}
	if code := checkLeaderEpoch(t.leaderEpoch, off.LeaderEpoch); code != 0 {
		sp.ErrorCode = code
		return 0, false
	}
	if t.preferred >= 0 {
		// The consumer reads from that replica instead: no records.
		sp.ErrorCode, sp.PreferredReadReplica = 0, t.preferred
		return 0, false
	}
	if off.RestartHW && !t.part.IsLeader() {
		// A follower reads nothing until its leader confirms its high
		// watermark (fetch_follower.go).
		sp.ErrorCode = 0
		return 0, false
	}
	if limit <= 0 && !first {
		return 0, false
	}
	end := off.End(iso)
	if t.offset >= end && t.offset <= off.HighWatermark && t.offset >= off.LocalStart {
		// A consumer at the end (or, read_committed, past the last
		// stable offset): nothing to read. Most partitions of a long
		// poll over many are here, on every wake-up.
		sp.ErrorCode = 0
		return 0, false
	}
	if wantsRegion(limit, t.offset, end) {
		if n, ok := fetchRegion(sp, t, limit, first, iso, bufs); ok {
			return n, false
		}
	}
	buf := bufs.read
	res, err := t.part.ReadIsolated(t.offset, limit, buf.b, iso)
	setFetchOffsets(sp, res.Offsets)
	if errors.Is(err, partition.ErrOffsetInRemote) {
		sp.ErrorCode = 0
		return 0, true
	}
	if err != nil {
		sp.ErrorCode, _ = errorCode(err)
		return 0, false
	}
	sp.ErrorCode = 0
	if !first && len(res.Records) > limit {
		return 0, false
	}
	// Earlier partitions' records may point into the buffer's old array if
	// it grew; that array stays alive through them, so nothing is lost.
	buf.b = res.Buf
	if len(res.Records) > 0 {
		sp.RecordBatches = res.Records
		addAborted(sp, t, iso, nextOffsetAfter(res.Records))
	}
	return len(res.Records), false
}

// isolationOf is a fetch's or ListOffsets' isolation level.
func isolationOf(level int8) partition.Isolation {
	if level == readCommitted {
		return partition.ReadCommitted
	}
	return partition.ReadUncommitted
}

// setFetchOffsets puts a partition's offsets in its answer.
func setFetchOffsets(sp *kmsg.FetchResponseTopicPartition, off partition.Offsets) {
	sp.HighWatermark = int64(off.HighWatermark)
	sp.LastStableOffset = int64(off.LastStable)
	sp.LogStartOffset = int64(off.LogStart)
}

// addAborted lists, for a read_committed answer holding the records of
// [t.offset, upTo), the aborted transactions among them: the consumer
// drops those producers' batches from each first offset to the marker.
func addAborted(sp *kmsg.FetchResponseTopicPartition, t fetchTarget, iso partition.Isolation, upTo base.Offset) {
	if iso != partition.ReadCommitted {
		return
	}
	if upTo <= t.offset {
		// A reader that did not say where its data ends: list up to the
		// last stable offset, a superset, which clients handle.
		upTo = t.part.Offsets().LastStable
	}
	for _, a := range t.part.AbortedTxns(t.offset, upTo) {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = int64(a.ProducerID), int64(a.FirstOffset)
		sp.AbortedTransactions = append(sp.AbortedTransactions, at)
	}
}

// nextOffsetAfter is the offset after the last whole batch of b.
func nextOffsetAfter(b []byte) base.Offset {
	var next base.Offset
	it := record.SplitBatches(b)
	for {
		_, h, ok := it.Next()
		if !ok {
			return next
		}
		next = h.NextOffset()
	}
}

// fetchRegion serves a partition as a file region to splice; ok=false means
// the read must go through the copying path instead.
func fetchRegion(sp *kmsg.FetchResponseTopicPartition, t fetchTarget, limit int, first bool, iso partition.Isolation, bufs *fetchBuffers) (int, bool) {
	reg, off, err := t.part.ReadRegionIsolated(t.offset, limit, iso)
	if errors.Is(err, partition.ErrNoRegion) || errors.Is(err, partition.ErrOffsetInRemote) {
		return 0, false
	}
	setFetchOffsets(sp, off)
	if err != nil {
		sp.ErrorCode, _ = errorCode(err)
		return 0, true
	}
	sp.ErrorCode = 0
	if reg.File == nil {
		return 0, true
	}
	if !first && reg.Size > int64(limit) {
		reg.Close()
		return 0, true
	}
	sp.RecordBatches = bufs.addRegion(reg, t.order)
	addAborted(sp, t, iso, reg.Next)
	return int(reg.Size), true
}

// checkLeaderEpoch compares the epoch a client believes in with ours
// (KIP-320); -1 means the client did not say.
func checkLeaderEpoch(clientEpoch int32, ours base.Epoch) int16 {
	switch {
	case clientEpoch < 0 || clientEpoch == int32(ours):
		return 0
	case clientEpoch > int32(ours):
		return kerr.UnknownLeaderEpoch.Code
	default:
		return kerr.FencedLeaderEpoch.Code
	}
}
