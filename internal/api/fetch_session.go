package api

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Incremental fetch sessions (KIP-227). A consumer that opens a session
// sends only the partitions whose fetch position changed, and hears only
// of the partitions that have records, an error, or a new high watermark
// or log start offset. With many partitions that spares both sides from
// encoding, sending and decoding the whole list on every fetch.
//
// The wire's (session id, epoch) pair decides what a request is:
//
//	id any, epoch  0: a full fetch that opens a new session (closing id)
//	id any, epoch -1: a full fetch without a session (closing id)
//	id != 0, epoch n > 0: an incremental fetch of session id at epoch n
//
// A session's epoch is the one its next request must carry: 1 after the
// full fetch that opened it, then one more per incremental fetch (after
// MaxInt32 comes 1). A request with another epoch gets
// INVALID_FETCH_SESSION_EPOCH; an unknown id FETCH_SESSION_ID_NOT_FOUND;
// either way the client falls back to a full fetch.

// sessionKind is what a fetch request asks of the session cache.
type sessionKind int

const (
	sessionNone        sessionKind = iota + 1 // full fetch, no session
	sessionOpen                               // full fetch that opens a session
	sessionIncremental                        // incremental fetch of an open session
)

const (
	sessionEpochInitial int32 = 0
	sessionEpochFinal   int32 = -1
)

// classifySession decides a request's kind from its session id and epoch,
// and whether it closes the session named by id first.
func classifySession(id, epoch int32) (kind sessionKind, closes bool) {
	switch epoch {
	case sessionEpochFinal:
		return sessionNone, id != 0
	case sessionEpochInitial:
		return sessionOpen, id != 0
	default:
		return sessionIncremental, false
	}
}

// nextSessionEpoch is the epoch after e; it skips 0 and -1, which mean
// full fetches.
func nextSessionEpoch(e int32) int32 {
	if e >= 1<<31-1 || e < 0 {
		return 1
	}
	return e + 1
}

// sessionKey names a partition the way the session's requests do: by topic
// name before Fetch v13, by topic id from v13 on (the other is zero).
type sessionKey struct {
	topic     string
	topicID   [16]byte
	partition int32
}

// fetchWant is one partition to read: where from, how much, and under
// which leader epoch (-1: not given).
type fetchWant struct {
	key         sessionKey
	offset      int64
	maxBytes    int32
	leaderEpoch int32
}

// sentState is what the session's client last heard of a partition; the
// partition goes into the next incremental response only if that changed.
type sentState struct {
	highWatermark int64 // -1 after an error, so the partition is sent again once it clears
	lastStable    int64
	logStart      int64
}

type sessionPartition struct {
	want fetchWant
	sent sentState
}

// fetchSession is one open session. The cache's lock is never taken while
// a session's is held.
type fetchSession struct {
	id   int32
	byID bool // opened by Fetch v13+: partitions are named by topic id
	mu   struct {
		sync.Mutex
		epoch    int32
		parts    []*sessionPartition // in response order
		index    map[sessionKey]*sessionPartition
		lastUsed int64 // unix nanoseconds
	}
}

// requestWants lists the partitions a full fetch asks for, in its order.
func requestWants(r *kmsg.FetchRequest) []fetchWant {
	var wants []fetchWant
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			wants = append(wants, wantOf(rt.Topic, rt.TopicID, rp))
		}
	}
	return wants
}

func wantOf(topic string, id [16]byte, rp kmsg.FetchRequestTopicPartition) fetchWant {
	return fetchWant{
		key:         sessionKey{topic: topic, topicID: id, partition: rp.Partition},
		offset:      rp.FetchOffset,
		maxBytes:    rp.PartitionMaxBytes,
		leaderEpoch: rp.CurrentLeaderEpoch,
	}
}

// newSessionParts turns a full fetch's wants and its response into a new
// session's partitions, in order, and their index. A partition asked for
// twice is kept once, with the last values given.
func newSessionParts(wants []fetchWant, sent []sentState) ([]*sessionPartition, map[sessionKey]*sessionPartition) {
	parts := make([]*sessionPartition, 0, len(wants))
	index := make(map[sessionKey]*sessionPartition, len(wants))
	for i, w := range wants {
		if p, ok := index[w.key]; ok {
			p.want, p.sent = w, sent[i]
			continue
		}
		p := &sessionPartition{want: w, sent: sent[i]}
		index[w.key] = p
		parts = append(parts, p)
	}
	return parts, index
}

// updateLocked applies an incremental request to the session: partitions
// it names are added or get the new position; forgotten ones leave. It
// costs what the request names, not what the session holds, unless the
// request forgets something.
func (s *fetchSession) updateLocked(r *kmsg.FetchRequest) {
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			w := wantOf(rt.Topic, rt.TopicID, rp)
			if p, ok := s.mu.index[w.key]; ok {
				p.want = w
				continue
			}
			// Never sent: the first response includes it whatever it holds.
			p := &sessionPartition{want: w, sent: sentState{highWatermark: -1, logStart: -1}}
			s.mu.index[w.key] = p
			s.mu.parts = append(s.mu.parts, p)
		}
	}
	forgot := false
	for _, ft := range r.ForgottenTopics {
		for _, part := range ft.Partitions {
			key := sessionKey{topic: ft.Topic, topicID: ft.TopicID, partition: part}
			if _, ok := s.mu.index[key]; ok {
				delete(s.mu.index, key)
				forgot = true
			}
		}
	}
	if !forgot {
		return
	}
	kept := s.mu.parts[:0]
	for _, p := range s.mu.parts {
		if s.mu.index[p.want.key] == p {
			kept = append(kept, p)
		}
	}
	clear(s.mu.parts[len(kept):])
	s.mu.parts = kept
}

// wantsLocked is a copy of the session's partitions to read, in order.
func (s *fetchSession) wantsLocked() []fetchWant {
	wants := make([]fetchWant, len(s.mu.parts))
	for i, p := range s.mu.parts {
		wants[i] = p.want
	}
	return wants
}

// partitionNews reports whether a session partition goes into an
// incremental response, and what its client knows once it has been sent.
// Records, an error, a preferred read replica, or a new high watermark,
// last stable offset or log start offset are news, as in Kafka's
// FetchSession.
func partitionNews(sent sentState, p *kmsg.FetchResponseTopicPartition) (bool, sentState) {
	news := len(p.RecordBatches) > 0 || p.HighWatermark != sent.highWatermark ||
		p.LastStableOffset != sent.lastStable || p.LogStartOffset != sent.logStart || p.PreferredReadReplica >= 0
	now := sentState{highWatermark: p.HighWatermark, lastStable: p.LastStableOffset, logStart: p.LogStartOffset}
	if p.ErrorCode != 0 {
		news, now.highWatermark = true, -1
	}
	return news, now
}

// sentOf is what a full response tells its client about p.
func sentOf(p *kmsg.FetchResponseTopicPartition) sentState {
	_, s := partitionNews(sentState{}, p)
	return s
}

// respondLocked keeps in resp only the partitions that are news (parts[i]
// answered at resp's i-th partition) and records what was sent. Partitions
// that returned records move to the end of the session, so that under
// max.bytes the others are read first next time (KIP-227's rotation).
// epoch is the one this request moved the session to; if another request
// moved it on since, resp is a duplicate's and only the error goes back.
func (s *fetchSession) respondLocked(resp *kmsg.FetchResponse, epoch int32) {
	resp.SessionID = s.id
	if s.mu.epoch != epoch {
		resp.ErrorCode = kerr.InvalidFetchSessionEpoch.Code
		resp.Topics = nil
		return
	}
	n := 0
	for _, rt := range resp.Topics {
		n += len(rt.Partitions)
	}
	if n != len(s.mu.parts) {
		// Cannot happen while the epoch matches: only this request has
		// changed the partitions since it read them.
		resp.ErrorCode = kerr.InvalidFetchSessionEpoch.Code
		resp.Topics = nil
		return
	}
	i := 0
	var rotated []*sessionPartition
	kept := s.mu.parts[:0]
	topics := resp.Topics[:0]
	for _, rt := range resp.Topics {
		parts := rt.Partitions[:0]
		for j := range rt.Partitions {
			sp := &rt.Partitions[j]
			sessionPart := s.mu.parts[i]
			i++
			news, sent := partitionNews(sessionPart.sent, sp)
			sessionPart.sent = sent
			if len(sp.RecordBatches) > 0 {
				rotated = append(rotated, sessionPart)
			} else {
				kept = append(kept, sessionPart)
			}
			if news {
				parts = append(parts, *sp)
			}
		}
		if len(parts) > 0 {
			rt.Partitions = parts
			topics = append(topics, rt)
		}
	}
	s.mu.parts = append(kept, rotated...)
	resp.Topics = topics
}
