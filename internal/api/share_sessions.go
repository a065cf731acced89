package api

import (
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
)

// Share sessions (KIP-932): a share group member's ShareFetch and
// ShareAcknowledge requests to one broker form a session, keyed by (group,
// member), holding the partitions it reads from here. Epoch 0 opens one
// (replacing any earlier session of the member, without releasing what it
// holds), -1 closes it (the member's records are released), and any other
// epoch must be the session's current one, which each request moves on.
// A session belongs to the connection that opened it: when that connection
// closes, the session goes and the member's records are released.

// shareSessionKey names a share session.
type shareSessionKey struct {
	group, member string
}

// sharePartitionKey names a partition in a share session.
type sharePartitionKey struct {
	topicID   base.TopicID
	partition int32
}

// shareSession is one open session. partitions are in the order they were
// added; fresh marks those not yet answered for (a newly added partition
// appears in the next response even without records, as in Kafka).
type shareSession struct {
	epoch      int32
	partitions []sharePartitionKey
	fresh      map[sharePartitionKey]bool
	connID     uint64
	// unwatch stops the watch on the opening connection's end.
	unwatch func() bool
}

// shareSessionCache holds the open share sessions, at most max of them
// (group.share.max.share.sessions). Safe for concurrent use.
type shareSessionCache struct {
	max int
	mu  struct {
		sync.Mutex
		sessions map[shareSessionKey]*shareSession
	}
}

func newShareSessionCache(max int) *shareSessionCache {
	c := &shareSessionCache{max: max}
	c.mu.sessions = map[shareSessionKey]*shareSession{}
	return c
}

// shareSessionUse is what a request may do after its session check: the
// partitions to read (a copy), which of them are fresh, and whether the
// request closes the session.
type shareSessionUse struct {
	partitions []sharePartitionKey
	fresh      map[sharePartitionKey]bool
	closes     bool
}

// fetch applies a ShareFetch's epoch to key's session: opening (0),
// closing (-1) or continuing it, with the partitions the request adds and
// forgets. watch is called with the new session when one opens and must
// return its unwatch. A refusal is a Kafka error code.
func (c *shareSessionCache) fetch(key shareSessionKey, epoch int32, connID uint64, add, forget []sharePartitionKey, watch func() func() bool) (shareSessionUse, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sessions[key]
	switch {
	case epoch == sessionEpochInitial:
		if s == nil && len(c.mu.sessions) >= c.max {
			return shareSessionUse{}, kerr.ShareSessionLimitReached.Code
		}
		if s != nil {
			s.unwatch()
		}
		s = &shareSession{epoch: nextSessionEpoch(0), fresh: map[sharePartitionKey]bool{}, connID: connID}
		s.add(add)
		s.unwatch = watch()
		c.mu.sessions[key] = s
		return s.use(false), 0
	case s == nil:
		return shareSessionUse{}, kerr.ShareSessionNotFound.Code
	case epoch == sessionEpochFinal:
		return c.closeLocked(key, s), 0
	case epoch != s.epoch:
		return shareSessionUse{}, kerr.InvalidShareSessionEpoch.Code
	}
	s.add(add)
	s.forget(forget)
	s.epoch = nextSessionEpoch(s.epoch)
	return s.use(false), 0
}

// acknowledge applies a ShareAcknowledge's epoch: it cannot open a
// session (0 is INVALID_SHARE_SESSION_EPOCH), -1 closes it, any other
// must be the session's.
func (c *shareSessionCache) acknowledge(key shareSessionKey, epoch int32) (shareSessionUse, int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sessions[key]
	switch {
	case epoch == sessionEpochInitial:
		return shareSessionUse{}, kerr.InvalidShareSessionEpoch.Code
	case s == nil:
		return shareSessionUse{}, kerr.ShareSessionNotFound.Code
	case epoch == sessionEpochFinal:
		return c.closeLocked(key, s), 0
	case epoch != s.epoch:
		return shareSessionUse{}, kerr.InvalidShareSessionEpoch.Code
	}
	s.epoch = nextSessionEpoch(s.epoch)
	return s.use(false), 0
}

func (c *shareSessionCache) closeLocked(key shareSessionKey, s *shareSession) shareSessionUse {
	s.unwatch()
	delete(c.mu.sessions, key)
	return s.use(true)
}

// dropIfConn removes key's session if connection connID opened it (the
// connection closed), and reports whether it did.
func (c *shareSessionCache) dropIfConn(key shareSessionKey, connID uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.mu.sessions[key]
	if s == nil || s.connID != connID {
		return false
	}
	delete(c.mu.sessions, key)
	return true
}

// answered marks partitions answered for: they are no longer fresh.
func (c *shareSessionCache) answered(key shareSessionKey, parts []sharePartitionKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.mu.sessions[key]; s != nil {
		for _, p := range parts {
			delete(s.fresh, p)
		}
	}
}

func (s *shareSession) add(parts []sharePartitionKey) {
	for _, p := range parts {
		if !slices.Contains(s.partitions, p) {
			s.partitions = append(s.partitions, p)
			s.fresh[p] = true
		}
	}
}

func (s *shareSession) forget(parts []sharePartitionKey) {
	s.partitions = slices.DeleteFunc(s.partitions, func(p sharePartitionKey) bool {
		if slices.Contains(parts, p) {
			delete(s.fresh, p)
			return true
		}
		return false
	})
}

func (s *shareSession) use(closes bool) shareSessionUse {
	fresh := make(map[sharePartitionKey]bool, len(s.fresh))
	for p := range s.fresh {
		fresh[p] = true
	}
	return shareSessionUse{partitions: slices.Clone(s.partitions), fresh: fresh, closes: closes}
}
