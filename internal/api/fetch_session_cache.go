package api

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionIdleEvictAfter is how long a session must go unused before any new
// session may take its slot (Kafka's min.incremental.fetch.session.eviction.ms).
const sessionIdleEvictAfter = 2 * time.Minute

// fetchSessionCache holds the broker's open fetch sessions, at most slots of
// them (max.incremental.fetch.session.cache.slots; 0 keeps none, and every
// fetch is answered as a full one). Sessions are not tied to connections:
// a client may go on with its session over a new one, and a session ends
// when its client closes it or it is evicted (pickEviction).
type fetchSessionCache struct {
	slots int
	now   func() time.Time
	newID func() int32 // a candidate id, > 0
	mu    struct {
		sync.Mutex
		byID map[int32]*fetchSession
	}
}

func newFetchSessionCache(slots int, now func() time.Time) *fetchSessionCache {
	c := &fetchSessionCache{slots: slots, now: now, newID: func() int32 { return 1 + rand.Int32N(1<<31-1) }}
	c.mu.byID = make(map[int32]*fetchSession)
	return c
}

// fetchContext is one fetch request's dealings with the cache, from begin
// to finish.
type fetchContext struct {
	kind    sessionKind
	byID    bool        // the request names topics by id (v13+)
	wants   []fetchWant // the partitions to read, in response order
	session *fetchSession
	epoch   int32 // incremental: the epoch this request moved the session to
	errCode int16 // the session error to answer with, instead of reading
}

// begin resolves a request against the cache: the partitions to read, or
// a session error. An incremental request updates its session here.
func (c *fetchSessionCache) begin(r *kmsg.FetchRequest, version int16) fetchContext {
	byID := version >= 13
	kind, closes := classifySession(r.SessionID, r.SessionEpoch)
	if closes {
		c.remove(r.SessionID)
	}
	if kind != sessionIncremental {
		return fetchContext{kind: kind, byID: byID, wants: requestWants(r)}
	}
	s := c.get(r.SessionID)
	if s == nil {
		return fetchContext{errCode: kerr.FetchSessionIDNotFound.Code}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.mu.epoch != r.SessionEpoch:
		return fetchContext{errCode: kerr.InvalidFetchSessionEpoch.Code}
	case s.byID != byID:
		// Topic names and topic ids cannot be mixed in one session.
		return fetchContext{errCode: kerr.FetchSessionTopicIDError.Code}
	}
	s.updateLocked(r)
	s.mu.epoch = nextSessionEpoch(s.mu.epoch)
	s.mu.lastUsed = c.now().UnixNano()
	return fetchContext{kind: sessionIncremental, byID: byID, wants: s.wantsLocked(), session: s, epoch: s.mu.epoch}
}

// finish fills resp's session fields once its partitions are read: a
// full fetch that asked for a session opens one, an incremental one keeps
// only the partitions that are news.
func (c *fetchSessionCache) finish(fc fetchContext, resp *kmsg.FetchResponse) {
	switch fc.kind {
	case sessionOpen:
		resp.SessionID = c.open(fc, resp)
	case sessionIncremental:
		fc.session.mu.Lock()
		defer fc.session.mu.Unlock()
		fc.session.respondLocked(resp, fc.epoch)
	default:
		resp.SessionID = 0
	}
}

// open creates a session from a full fetch and its response, and returns
// its id; 0 (no session: the client goes on with full fetches) when the
// cache has no slot for it.
func (c *fetchSessionCache) open(fc fetchContext, resp *kmsg.FetchResponse) int32 {
	if c.slots <= 0 || len(fc.wants) == 0 {
		return 0
	}
	sent := make([]sentState, 0, len(fc.wants))
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			sent = append(sent, sentOf(&resp.Topics[i].Partitions[j]))
		}
	}
	if len(sent) != len(fc.wants) {
		return 0 // the response does not answer the wants one for one
	}
	parts, index := newSessionParts(fc.wants, sent)
	now := c.now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.byID) >= c.slots {
		id, ok := pickEviction(c.statsLocked(), len(parts), now, int64(sessionIdleEvictAfter))
		if !ok {
			return 0
		}
		delete(c.mu.byID, id)
	}
	s := &fetchSession{id: c.unusedIDLocked(), byID: fc.byID}
	s.mu.epoch = nextSessionEpoch(sessionEpochInitial)
	s.mu.parts, s.mu.index = parts, index
	s.mu.lastUsed = now
	c.mu.byID[s.id] = s
	return s.id
}

func (c *fetchSessionCache) unusedIDLocked() int32 {
	for {
		if id := c.newID(); id > 0 && c.mu.byID[id] == nil {
			return id
		}
	}
}

func (c *fetchSessionCache) get(id int32) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.byID[id]
}

func (c *fetchSessionCache) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.byID, id)
}

// counts returns the open sessions and the partitions they hold.
func (c *fetchSessionCache) counts() (sessions, partitions int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.mu.byID {
		s.mu.Lock()
		partitions += len(s.mu.parts)
		s.mu.Unlock()
	}
	return len(c.mu.byID), partitions
}

// sessionStat is what eviction weighs of a session.
type sessionStat struct {
	id       int32
	lastUsed int64 // unix nanoseconds
	size     int   // partitions
}

func (c *fetchSessionCache) statsLocked() []sessionStat {
	stats := make([]sessionStat, 0, len(c.mu.byID))
	for id, s := range c.mu.byID {
		s.mu.Lock()
		stats = append(stats, sessionStat{id: id, lastUsed: s.mu.lastUsed, size: len(s.mu.parts)})
		s.mu.Unlock()
	}
	return stats
}

// pickEviction chooses the session that gives its slot to a new one of
// newSize partitions, as Kafka's cache does: the least recently used one,
// if it has gone unused for idleAfter; otherwise the smallest one, if it
// is smaller than the new one (a session saves its client work in
// proportion to its partitions). ok=false keeps every session and refuses
// the new one. Ties go to the lower id, so the choice is deterministic.
func pickEviction(stats []sessionStat, newSize int, now, idleAfter int64) (id int32, ok bool) {
	if len(stats) == 0 {
		return 0, false
	}
	lru, smallest := stats[0], stats[0]
	for _, s := range stats[1:] {
		if s.lastUsed < lru.lastUsed || s.lastUsed == lru.lastUsed && s.id < lru.id {
			lru = s
		}
		if s.size < smallest.size || s.size == smallest.size && s.id < smallest.id {
			smallest = s
		}
	}
	if now-lru.lastUsed >= idleAfter {
		return lru.id, true
	}
	if smallest.size < newSize {
		return smallest.id, true
	}
	return 0, false
}
