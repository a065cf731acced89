package e2e

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareMember is a member of a share group (KIP-932): it joins by
// heartbeat, opens a share session with a ShareFetch at epoch 0, fetches
// and acknowledges what it acquired (accept, release, reject, record by
// record or a batch at once) in ShareFetch and ShareAcknowledge, closes
// its session and leaves.
type shareMember struct {
	memberID string
	epoch    int32 // the member's group epoch
	session  int32 // the share session's next epoch; 0 opens one
	acquired map[int32][][2]int64
	next     int
}

const (
	shareHeartbeat = iota
	shareFetch
	shareAcknowledge
	shareClose
	shareLeave
	shareDescribe
	shareSteps
)

func newShareMember(*walkEnv) *shareMember {
	return &shareMember{acquired: map[int32][][2]int64{}}
}

func (m *shareMember) step(w *walker) {
	if m.memberID == "" {
		m.memberID = walkMember(w.rng)
	}
	switch w.pick(m.next, shareSteps) {
	case shareHeartbeat:
		m.heartbeat(w, m.epoch)
	case shareFetch:
		m.fetch(w)
	case shareAcknowledge:
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(walkShare), kmsg.StringPtr(m.memberID), m.session
		req.Topics = m.acknowledgements(w)
		if resp, ok := w.send(req).(*kmsg.ShareAcknowledgeResponse); ok {
			m.acknowledged(w, req, resp)
			m.sessionAnswered(w, resp.ErrorCode)
		}
	case shareClose:
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(walkShare), kmsg.StringPtr(m.memberID), -1
		req.Topics = m.acknowledgements(w)
		if resp, ok := w.send(req).(*kmsg.ShareAcknowledgeResponse); ok {
			m.acknowledged(w, req, resp)
		}
		m.forget()
		m.next = shareFetch
	case shareLeave:
		m.heartbeat(w, -1)
		m.epoch, m.next = 0, shareHeartbeat
		m.forget()
	case shareDescribe:
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs, req.IncludeAuthorizedOperations = []string{walkShare}, w.oneIn(2)
		w.send(req)
	}
}

func (m *shareMember) heartbeat(w *walker, epoch int32) {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = walkShare, m.memberID, epoch
	if epoch == 0 || w.oneIn(6) {
		req.SubscribedTopicNames = []string{walkTopic}
	}
	resp, ok := w.send(req).(*kmsg.ShareGroupHeartbeatResponse)
	if !ok || epoch < 0 {
		return
	}
	switch kerr.ErrorForCode(resp.ErrorCode) {
	case nil:
		m.epoch = resp.MemberEpoch
		m.next = shareFetch
	case kerr.UnknownMemberID, kerr.FencedMemberEpoch:
		m.epoch = 0
	}
}

// fetch opens the session (epoch 0, every partition, no acknowledgements:
// Kafka refuses them there) or fetches in it with what was acquired
// acknowledged, and keeps what it acquires.
func (m *shareMember) fetch(w *walker) {
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(walkShare), kmsg.StringPtr(m.memberID), m.session
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = int32(w.rng.IntN(300)), 1, 1<<20
	req.MaxRecords = int32(1 + w.rng.IntN(50))
	req.BatchSize = req.MaxRecords
	req.ShareAcquireMode = int8(w.rng.IntN(2))
	if m.session != 0 {
		req.Topics = m.acknowledgementsInFetch(w)
	}
	if m.session == 0 || w.oneIn(3) {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = w.env.topicID
		for _, p := range w.homePartitions() {
			if m.session != 0 && len(m.acquired[p]) > 0 {
				continue // listed with its acknowledgements
			}
			rp := kmsg.NewShareFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	if m.session != 0 {
		clear(m.acquired) // acknowledged above, or left to their locks
	}
	resp, ok := w.send(req).(*kmsg.ShareFetchResponse)
	if !ok {
		return
	}
	m.sessionAnswered(w, resp.ErrorCode)
	if resp.ErrorCode != 0 {
		return
	}
	clean := !w.mutated
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if clean && rp.AcknowledgeErrorCode == 0 {
				for _, b := range fetchAcksOf(req, rp.Partition) {
					w.env.shares.complete(rp.Partition, b.FirstOffset, b.LastOffset, b.AcknowledgeTypes)
				}
			}
			for _, a := range rp.AcquiredRecords {
				if o, again := w.env.shares.acquiredAgain(rp.Partition, a.FirstOffset, a.LastOffset); clean && again {
					w.fail("%s (seed %d): ShareFetch acquired offset %d of partition %d (delivery %d), whose acceptance or rejection was acknowledged: %s",
						w.name, w.env.seed, o, rp.Partition, a.DeliveryCount, requestJSON(req))
				}
				m.acquired[rp.Partition] = append(m.acquired[rp.Partition], [2]int64{a.FirstOffset, a.LastOffset})
			}
		}
	}
}

// fetchAcksOf is what req acknowledged of partition p.
func fetchAcksOf(req *kmsg.ShareFetchRequest, p int32) []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch {
	var out []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if rp.Partition == p {
				out = append(out, rp.AcknowledgementBatches...)
			}
		}
	}
	return out
}

// acknowledged records, after a clean answer to a ShareAcknowledge as
// meant, the offsets it completed in each partition answered without
// error.
func (m *shareMember) acknowledged(w *walker, req *kmsg.ShareAcknowledgeRequest, resp *kmsg.ShareAcknowledgeResponse) {
	if w.mutated || resp.ErrorCode != 0 {
		return
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				continue
			}
			for _, qt := range req.Topics {
				for _, qp := range qt.Partitions {
					if qp.Partition != rp.Partition {
						continue
					}
					for _, b := range qp.AcknowledgementBatches {
						w.env.shares.complete(rp.Partition, b.FirstOffset, b.LastOffset, b.AcknowledgeTypes)
					}
				}
			}
		}
	}
}

// sessionAnswered moves the share session on after an answer in it.
func (m *shareMember) sessionAnswered(w *walker, code int16) {
	switch kerr.ErrorForCode(code) {
	case nil:
		if m.session == math.MaxInt32 {
			m.session = 1
		} else {
			m.session++
		}
		m.next = []int{shareFetch, shareFetch, shareFetch, shareAcknowledge, shareHeartbeat}[w.rng.IntN(5)]
		if w.oneIn(10) {
			m.next = []int{shareClose, shareLeave}[w.rng.IntN(2)]
		}
	case kerr.ShareSessionNotFound, kerr.InvalidShareSessionEpoch:
		m.forget()
		m.next = shareFetch
	case kerr.UnknownMemberID, kerr.FencedMemberEpoch:
		m.forget()
		m.epoch, m.next = 0, shareHeartbeat
	}
}

func (m *shareMember) forget() {
	m.session = 0
	clear(m.acquired)
}

// ackBatch is one acknowledgement of offsets [first, last]: one type for
// all of them, or a type per offset (0, a gap, among them).
type ackBatch struct {
	first, last int64
	types       []int8
}

// ackBatches acknowledges what m acquired in partition p, by random
// types, some of it only.
func (m *shareMember) ackBatches(w *walker, p int32) []ackBatch {
	var out []ackBatch
	for _, r := range m.acquired[p] {
		first, last := r[0], r[1]
		if w.oneIn(4) && last > first {
			last = first + w.rng.Int64N(last-first)
		}
		b := ackBatch{first: first, last: last}
		if last-first < 64 && w.oneIn(3) {
			for range last - first + 1 {
				b.types = append(b.types, int8(w.rng.IntN(4)))
			}
		} else {
			b.types = []int8{int8(1 + w.rng.IntN(3))} // accept, release or reject
		}
		out = append(out, b)
	}
	return out
}

func (m *shareMember) acknowledgements(w *walker) []kmsg.ShareAcknowledgeRequestTopic {
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = w.env.topicID
	for _, p := range w.homePartitions() {
		batches := m.ackBatches(w, p)
		if len(batches) == 0 {
			continue
		}
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.Partition = p
		for _, b := range batches {
			kb := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
			kb.FirstOffset, kb.LastOffset, kb.AcknowledgeTypes = b.first, b.last, b.types
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, kb)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	clear(m.acquired)
	if len(rt.Partitions) == 0 {
		return nil
	}
	return []kmsg.ShareAcknowledgeRequestTopic{rt}
}

func (m *shareMember) acknowledgementsInFetch(w *walker) []kmsg.ShareFetchRequestTopic {
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = w.env.topicID
	for _, p := range w.homePartitions() {
		batches := m.ackBatches(w, p)
		if len(batches) == 0 {
			continue
		}
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = p, 1<<20
		for _, b := range batches {
			kb := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
			kb.FirstOffset, kb.LastOffset, kb.AcknowledgeTypes = b.first, b.last, b.types
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, kb)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(rt.Partitions) == 0 {
		return nil
	}
	return []kmsg.ShareFetchRequestTopic{rt}
}
