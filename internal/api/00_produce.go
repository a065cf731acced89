package api

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/record"
)

// Produce: v3-13 (RecordBatch v2 only; v13 names topics by id).
// acks=0 gets no response, acks=1 is answered once the batch is in the page
// cache, acks=-1 once it is fdatasynced (group commit) and, on a partition
// with other replicas, once the high watermark has passed it (Kafka's
// DelayedProduce, see awaitReplication). A client over its
// producer_byte_rate quota is throttled (quotas.go).
func init() { register(0, 3, 13, (*Handler).handleProduce) }

// pendingSync is a partition answer that waits on a sync and, for an
// acks=all batch on a replicated partition (replicated set), on the high
// watermark reaching end, the batch's exclusive end.
type pendingSync struct {
	part *kmsg.ProduceResponseTopicPartition
	wait func() error

	replicated *partition.Partition
	end        base.Offset
}

func (h *Handler) handleProduce(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ProduceRequest)
	acks, acksOK := produceAcks(r.Acks)
	img := h.opts.Meta.Image()
	denied := h.produceDenials(req, r, img, req.Version >= 13)
	checks := h.transactionalChecks(r, img, req.Version >= 13, denied)
	// A version 2 client's partitions are added to its transaction here,
	// verification on or off: nothing else adds them.
	if len(checks.verify) > 0 && (checks.add || h.txnPartitionVerification()) {
		// The first transactional batch of a producer on a partition
		// waits for its coordinator to confirm the partition is in the
		// transaction (KIP-890 part 1). It waits here, holding up the
		// connection's next requests as Kafka does while it handles one:
		// a pipelined batch behind it must not be appended first.
		h.verifyTransactional(ctx, r, &checks)
	}
	// The produce timeout counts from here, as Kafka's DelayedProduce
	// from its append.
	deadline := time.Now().Add(time.Duration(r.TimeoutMillis) * time.Millisecond)
	resp, pending := h.produceAll(r, img, req.Version, acks, acksOK, checks.refused, checks.guards())
	throttle := h.quotaThrottle(req, quota.ProducerByteRate, produceBytes(r))
	resp.ThrottleMillis = throttleMillis(throttle)
	if acks == partition.AcksNone && acksOK {
		for _, ps := range pending {
			_ = ps.sync() // nobody to tell; the flush policy still applies
		}
		// The mute is the throttle as a response would carry it: at
		// most an int32 of milliseconds, as Kafka's.
		return Reply{NoResponse: true, Mute: time.Duration(resp.ThrottleMillis) * time.Millisecond}
	}
	if len(pending) == 0 {
		h.hintProduceLeaders(resp, req.Listener)
		return done(resp)
	}
	return Reply{Wait: func() kmsg.Response {
		h.awaitSyncs(pending)
		h.awaitReplication(ctx, req.Stopping, pending, deadline)
		h.hintProduceLeaders(resp, req.Listener)
		return resp
	}}
}

// produceAll appends every partition's batch, except those refused (with
// their code), each verified one with its guard, and returns the response
// and the syncs to wait for.
func (h *Handler) produceAll(r *kmsg.ProduceRequest, img *metadata.Image, version int16, acks partition.Acks, acksOK bool,
	refused map[partitionRef]int16, guards map[partitionRef]partition.VerificationGuard) (*kmsg.ProduceResponse, []pendingSync) {
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	var pending []pendingSync
	for i, rt := range r.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		t := lookupTopic(img, rt.Topic, rt.TopicID, version >= 13)
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			var code int16
			var msg string
			var ps pendingSync
			if c, ok := refused[partitionRef{i, j}]; ok {
				sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
				code, msg = c, refusalMessage(c)
			} else {
				code, msg, ps = h.producePartition(t, rp, acks, acksOK, sp, version >= 13, guards[partitionRef{i, j}])
			}
			sp.ErrorCode = code
			if version >= 8 {
				sp.ErrorMessage = strPtr(msg)
			}
			if ps.wait != nil || ps.replicated != nil {
				ps.part = sp
				pending = append(pending, ps)
			}
		}
	}
	return resp, pending
}

// awaitSyncs waits for the syncs of a produce and answers the partitions
// whose sync failed with its error; those wait for nothing more.
func (h *Handler) awaitSyncs(pending []pendingSync) {
	errs := syncAll(pending)
	for i, err := range errs {
		if err != nil {
			pending[i].part.ErrorCode, _ = errorCode(err)
			pending[i].part.BaseOffset = -1
			pending[i].replicated = nil
			h.logger.Error("sync failed; produce not acknowledged", "err", err)
		}
	}
}

// syncAll waits for every pending sync. Different partitions are
// different files, so their fdatasyncs run in parallel rather than one
// after another.
func syncAll(pending []pendingSync) []error {
	errs := make([]error, len(pending))
	if len(pending) == 1 {
		errs[0] = pending[0].sync()
		return errs
	}
	var wg sync.WaitGroup
	for i := range pending[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = pending[i+1].sync()
		}()
	}
	errs[0] = pending[0].sync()
	wg.Wait()
	return errs
}

// sync waits for ps's sync, if it has one.
func (ps pendingSync) sync() error {
	if ps.wait == nil {
		return nil
	}
	return ps.wait()
}

// producePartition appends one partition's batch; it returns the code and
// message to answer with, and what to wait for before answering (its
// wait nil and replicated nil: nothing).
func (h *Handler) producePartition(t *metadata.Topic, rp kmsg.ProduceRequestTopicPartition, acks partition.Acks, acksOK bool,
	sp *kmsg.ProduceResponseTopicPartition, byID bool, guard partition.VerificationGuard) (int16, string, pendingSync) {
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
	switch {
	case !acksOK:
		return kerr.InvalidRequiredAcks.Code, "acks must be 0, 1 or -1", pendingSync{}
	case t == nil && byID:
		return kerr.UnknownTopicID.Code, "", pendingSync{}
	case t == nil:
		return kerr.UnknownTopicOrPartition.Code, "", pendingSync{}
	case isInternalTopic(t.Name):
		// Only its coordinator writes there; a client's record could
		// stop the partition from loading. Kafka refuses too.
		return kerr.InvalidTopicException.Code, "cannot produce to the internal topic " + t.Name, pendingSync{}
	}
	p, code := h.fetchPartition(t, rp.Partition, byID)
	if code != 0 {
		return code, "", pendingSync{}
	}
	res, wait, err := p.AppendVerified(rp.Records, acks, guard) // guard 0: Append
	if err != nil {
		code, msg := errorCode(err)
		sp.ErrorRecords = recordErrors(err)
		return code, msg, pendingSync{}
	}
	sp.BaseOffset = int64(res.BaseOffset)
	sp.LogStartOffset = int64(res.LogStart)
	if res.LogAppendTime {
		sp.LogAppendTime = res.LogAppendTimeMs
	}
	ps := pendingSync{wait: wait}
	// In a cluster every acks=all batch waits for AcksAllDone, which goes
	// by this broker's own leadership state, not by the image: a newer
	// image may list one replica (a reassignment that moved the partition
	// away) while this broker still leads it with a follower that lacks
	// the batch, and acknowledging at once would lose it.
	if acks == partition.AcksAll && (len(t.Partitions[rp.Partition].Replicas) > 1 || len(h.opts.Meta.Image().Brokers) > 0) {
		// Append validated the batch: its header parses.
		hd, _ := record.ParseHeader(rp.Records)
		ps.replicated, ps.end = p, res.BaseOffset+base.Offset(hd.LastOffsetDelta)+1
	}
	return 0, "", ps
}

// recordErrors lists the records a refused batch was refused for (KIP-467,
// v8+; older versions do not encode them), none for other errors.
func recordErrors(err error) []kmsg.ProduceResponseTopicPartitionErrorRecord {
	var recErr *record.Error
	if !errors.As(err, &recErr) {
		return nil
	}
	out := make([]kmsg.ProduceResponseTopicPartitionErrorRecord, len(recErr.Records))
	for i, r := range recErr.Records {
		out[i] = kmsg.NewProduceResponseTopicPartitionErrorRecord()
		out[i].RelativeOffset, out[i].ErrorMessage = r.Index, strPtr(r.Msg)
	}
	return out
}

func produceAcks(wire int16) (partition.Acks, bool) {
	switch wire {
	case 0:
		return partition.AcksNone, true
	case 1:
		return partition.AcksLeader, true
	case -1:
		return partition.AcksAll, true
	}
	return 0, false
}

// lookupTopic finds a topic by name, or by id for versions that use ids.
func lookupTopic(img *metadata.Image, name string, id [16]byte, byID bool) *metadata.Topic {
	if byID {
		return img.TopicsByID[base.TopicID(id)]
	}
	return img.Topics[name]
}

// refusalMessage explains a partition refused before its append.
func refusalMessage(code int16) string {
	switch code {
	case topicDenied:
		return "not authorized to write to this topic"
	case txnDenied:
		return "not authorized to use this transactional id"
	}
	return "refused by the transaction coordinator's verification"
}
