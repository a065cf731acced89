package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/share"
	"github.com/strata-broker/strata/internal/share/leader"
)

// ShareFetch (KIP-932): a share group member acknowledges what it
// processed and acquires records of the partitions of its share session
// (share_sessions.go) that this broker leads. Versions 1-2 (v2: the
// record-limit acquire mode of KIP-1206 and the renewals of KIP-1222).
// As Kafka: READ on the group (GROUP_AUTHORIZATION_FAILED) and on each
// topic (TOPIC_AUTHORIZATION_FAILED); a member id is 1 to 36 characters;
// acknowledgements are applied before the fetch, answered per partition in
// AcknowledgeErrorCode once durable; a session's epoch -1 acknowledges
// and closes it, releasing the member's records, and fetches nothing.
// MaxRecords and MaxBytes are budgets of the whole request (either 0:
// acknowledgements only, nothing is fetched); the first partition with
// records may exceed MaxBytes by its first batch. In the batch-optimized
// mode a partition's acquired records are listed in pieces cut at log
// batches once BatchSize offsets are reached (share.CutAtBatches). With
// nothing to acquire the fetch waits up to MaxWaitMs for new records, or
// for records given back. At share.version 0 it, and every share group
// API, answers UNSUPPORTED_VERSION (features.go).
func init() { register(78, 1, 2, (*Handler).handleShareFetch) }

func (h *Handler) handleShareFetch(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ShareFetchRequest)
	resp := r.ResponseKind().(*kmsg.ShareFetchResponse)
	group, member := deref(r.GroupID), deref(r.MemberID)
	fail := func(code int16) Reply {
		resp.ErrorCode = code
		return done(resp)
	}
	switch {
	case !shareGroupsOn(h.opts.Meta.Image()):
		return fail(kerr.UnsupportedVersion.Code)
	case !h.allowedGroup(req, acl.OpRead, group):
		return fail(groupDenied)
	case member == "" || len(member) > maxShareMemberIDBytes:
		return fail(kerr.InvalidRequest.Code)
	case r.IsRenewAck && (r.MaxBytes != 0 || r.MinBytes != 0 || r.MaxRecords != 0 || r.MaxWaitMillis != 0):
		return fail(kerr.InvalidRequest.Code)
	case r.ShareAcquireMode != int8(share.BatchOptimized) && r.ShareAcquireMode != int8(share.RecordLimit):
		return fail(kerr.InvalidRequest.Code)
	case r.ShareSessionEpoch == sessionEpochInitial && shareFetchHasAcks(r):
		return fail(kerr.InvalidRequest.Code)
	}
	key := shareSessionKey{group, member}
	img := h.opts.Meta.Image()
	set := h.shareSettingsOf(img, group)
	connID := req.ConnID
	use, code := h.shareSessions.fetch(key, r.ShareSessionEpoch, connID, shareFetchAdds(r), shareFetchForgets(r), func() func() bool {
		return context.AfterFunc(ctx, func() { h.shareConnClosed(key, connID) })
	})
	if code != 0 {
		return fail(code)
	}
	resp.AcquisitionLockTimeoutMillis = int32(set.leader.Limits.LockDuration.Milliseconds())
	// Acknowledgements wait for the share coordinator's writes, and the
	// fetch may wait for records: all of it is answered in Wait.
	return Reply{Wait: func() kmsg.Response {
		defer h.hintShareFetchLeaders(resp, req.Listener)
		out := newShareFetchOut(resp)
		h.shareFetchAcks(ctx, req, r, out, group, member, set)
		if use.closes {
			h.shares.ReleaseMember(context.WithoutCancel(ctx), group, member)
			return resp
		}
		if r.IsRenewAck || r.MaxRecords <= 0 || r.MaxBytes <= 0 {
			// Acknowledgements only: the Java client sends its
			// acknowledgements with no room for records, and Kafka
			// then fetches nothing.
			return resp
		}
		f := &shareFetch{h: h, req: req, r: r, group: group, member: member, set: set, out: out, use: use}
		f.resolve()
		f.run(ctx, time.Now().Add(time.Duration(r.MaxWaitMillis)*time.Millisecond))
		f.finish(key)
		return resp
	}}
}

// shareFetchAcks applies the acknowledgements a ShareFetch carries; each
// partition's result goes in its AcknowledgeErrorCode.
func (h *Handler) shareFetchAcks(ctx context.Context, req *Request, r *kmsg.ShareFetchRequest, out *shareFetchOut, group, member string, set shareSettings) {
	maxType := maxAckType(req.Version, r.IsRenewAck)
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			pk := sharePartitionKey{topicID: t.TopicID, partition: p.Partition}
			code := h.acknowledgeShare(ctx, req, group, member, pk, shareFetchAcks(p.AcknowledgementBatches), maxType, set)
			out.entry(pk).AcknowledgeErrorCode = code
		}
	}
}

// maxShareMemberIDBytes bounds a share member's id (Kafka 4.2's check).
const maxShareMemberIDBytes = 36

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// shareConnClosed ends key's session when the connection that opened it
// closed, and gives back what the member holds here.
func (h *Handler) shareConnClosed(key shareSessionKey, connID uint64) {
	if h.shareSessions.dropIfConn(key, connID) {
		ctx, cancel := context.WithTimeout(context.Background(), shareStateTimeout)
		defer cancel()
		h.shares.ReleaseMember(ctx, key.group, key.member)
	}
}

func shareFetchHasAcks(r *kmsg.ShareFetchRequest) bool {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) > 0 {
				return true
			}
		}
	}
	return false
}

func shareFetchAdds(r *kmsg.ShareFetchRequest) []sharePartitionKey {
	var out []sharePartitionKey
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			out = append(out, sharePartitionKey{topicID: t.TopicID, partition: p.Partition})
		}
	}
	return out
}

func shareFetchForgets(r *kmsg.ShareFetchRequest) []sharePartitionKey {
	var out []sharePartitionKey
	for _, t := range r.ForgottenTopicsData {
		for _, p := range t.Partitions {
			out = append(out, sharePartitionKey{topicID: t.TopicID, partition: p})
		}
	}
	return out
}

func shareFetchAcks(batches []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) []wireAck {
	out := make([]wireAck, len(batches))
	for i, b := range batches {
		out[i] = wireAck{first: b.FirstOffset, last: b.LastOffset, types: b.AcknowledgeTypes}
	}
	return out
}

// shareFetchOut builds a ShareFetch response's partitions, grouped by
// topic in the order they are first named.
type shareFetchOut struct {
	resp  *kmsg.ShareFetchResponse
	index map[sharePartitionKey][2]int
}

func newShareFetchOut(resp *kmsg.ShareFetchResponse) *shareFetchOut {
	return &shareFetchOut{resp: resp, index: map[sharePartitionKey][2]int{}}
}

// entry is pk's partition in the response, added (with empty records) on
// first use.
func (o *shareFetchOut) entry(pk sharePartitionKey) *kmsg.ShareFetchResponseTopicPartition {
	if at, ok := o.index[pk]; ok {
		return &o.resp.Topics[at[0]].Partitions[at[1]]
	}
	ti := -1
	for i := range o.resp.Topics {
		if o.resp.Topics[i].TopicID == pk.topicID {
			ti = i
		}
	}
	if ti < 0 {
		t := kmsg.NewShareFetchResponseTopic()
		t.TopicID = pk.topicID
		o.resp.Topics = append(o.resp.Topics, t)
		ti = len(o.resp.Topics) - 1
	}
	p := kmsg.NewShareFetchResponseTopicPartition()
	p.Partition, p.Records = pk.partition, []byte{}
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
	o.resp.Topics[ti].Partitions = append(o.resp.Topics[ti].Partitions, p)
	o.index[pk] = [2]int{ti, len(o.resp.Topics[ti].Partitions) - 1}
	return &o.resp.Topics[ti].Partitions[len(o.resp.Topics[ti].Partitions)-1]
}

// shareFetch is the fetch part of one ShareFetch: the session's partitions
// led here, read and acquired from until something is acquired.
type shareFetch struct {
	h             *Handler
	req           *Request
	r             *kmsg.ShareFetchRequest
	group, member string
	set           shareSettings
	out           *shareFetchOut
	use           shareSessionUse
	targets       []shareTarget
	acquiredAny   bool
}

// resolve finds the session's partitions led here; the others get their
// error code in the response.
func (f *shareFetch) resolve() {
	for _, pk := range f.use.partitions {
		t, code := f.h.sharePartition(f.req, pk)
		if code != 0 {
			f.out.entry(pk).ErrorCode = code
			continue
		}
		f.targets = append(f.targets, t)
		if f.use.fresh[pk] {
			f.out.entry(pk)
		}
	}
}

// run acquires until it gets something or an error, waiting for new or
// given-back records until the deadline.
func (f *shareFetch) run(ctx context.Context, deadline time.Time) {
	for {
		changed := f.changeChans()
		if f.fill(ctx) || len(f.targets) == 0 || !waitAny(ctx, f.req.Stopping, changed, deadline) {
			return
		}
	}
}

func (f *shareFetch) changeChans() []<-chan struct{} {
	out := make([]<-chan struct{}, 0, len(f.targets)+1)
	out = append(out, f.h.shares.Changed())
	for _, t := range f.targets {
		out = append(out, t.part.Changed())
	}
	return out
}

// fill acquires from the targets, in order, within the request's budgets,
// and reports whether it acquired anything or hit an error.
func (f *shareFetch) fill(ctx context.Context) bool {
	recordsLeft := int64(f.r.MaxRecords)
	bytesLeft := int(f.r.MaxBytes)
	if limit := int(f.h.opts.Config.FetchMaxBytes); limit > 0 && bytesLeft > limit {
		bytesLeft = limit
	}
	stop := false
	for _, t := range f.targets {
		if recordsLeft <= 0 || bytesLeft <= 0 && f.acquiredAny {
			break
		}
		n, records, code := f.acquireOne(ctx, t, recordsLeft, bytesLeft)
		if code != 0 {
			f.out.entry(t.key).ErrorCode = code
			stop = true
			continue
		}
		if n > 0 {
			f.acquiredAny, stop = true, true
			recordsLeft -= n
			bytesLeft -= records
		}
	}
	return stop
}

// acquireOne acquires from one partition into its response entry and
// returns the offsets acquired and the record bytes added.
func (f *shareFetch) acquireOne(ctx context.Context, t shareTarget, recordsLeft int64, bytesLeft int) (int64, int, int16) {
	off := t.part.Offsets()
	b := boundsOf(t.part)
	b.ReadEnd = shareReadEnd(off, f.set.readCommitted)
	var read shareRead
	key := leader.Key{Group: f.group, Topic: t.key.topicID, Partition: t.key.partition}
	acquired, err := f.h.shares.Acquire(ctx, key, f.member, b, f.set.forPartition(ctx, f.h, t), recordsLeft, share.AcquireMode(f.r.ShareAcquireMode),
		func(from base.Offset) (leader.Read, error) {
			var err error
			read, err = f.h.readShare(ctx, t, from, max(bytesLeft, 1), f.set.readCommitted)
			return read.read, err
		})
	if err != nil {
		return 0, 0, shareErrorCode(err)
	}
	if len(acquired) == 0 {
		return 0, 0, 0
	}
	if share.AcquireMode(f.r.ShareAcquireMode) == share.BatchOptimized {
		acquired = share.CutAtBatches(acquired, read.read.Batches, int64(f.r.BatchSize))
	}
	e := f.out.entry(t.key)
	e.Records = trimToAcquired(read.records, acquired)
	var n int64
	for _, a := range acquired {
		ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
		ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = int64(a.Offsets.Start), int64(a.Offsets.End)-1, a.Deliveries
		e.AcquiredRecords = append(e.AcquiredRecords, ar)
		n += a.Offsets.Len()
	}
	return n, len(e.Records), 0
}

// finish marks the partitions answered for in the session.
func (f *shareFetch) finish(key shareSessionKey) {
	var answered []sharePartitionKey
	for pk := range f.out.index {
		answered = append(answered, pk)
	}
	f.h.shareSessions.answered(key, answered)
}
