package clientmetrics

import (
	"container/heap"
	"container/list"
	"fmt"
)

// instance is Kafka's ClientMetricsInstance: what the broker remembers of
// one client instance between its requests.
type instance struct {
	id InstanceID
	// selectors are those of the request that created the instance; Kafka
	// keeps its ClientMetricsInstanceMetadata when it re-plans.
	selectors Selectors
	plan      Plan
	// version is the subscription set version plan was computed from.
	version uint64
	times   requestTimes
	// terminating is the Terminating flag of the last validated push.
	terminating bool

	expiresAtMs int64
	lru         *list.Element // in instanceCache.lru
	heapIndex   int           // in instanceCache.expiry
}

// instanceCache holds the instances, bounded twice as Kafka's
// ClientMetricsManager bounds them: by count, evicting the least recently
// used (its LRUCache of CACHE_MAX_SIZE), and by time, dropping an instance
// whose deadline has passed (its expiration timer task). Not safe for
// concurrent use.
//
// Invariant: byID, lru and expiry hold the same instances.
type instanceCache struct {
	maxInstances int
	byID         map[InstanceID]*instance
	lru          *list.List // of *instance, most recently used first
	expiry       expiryHeap
}

func newInstanceCache(maxInstances int) *instanceCache {
	return &instanceCache{maxInstances: maxInstances, byID: map[InstanceID]*instance{}, lru: list.New()}
}

func (c *instanceCache) len() int { return len(c.byID) }

// get returns the instance and marks it used, or nil.
func (c *instanceCache) get(id InstanceID) *instance {
	inst := c.byID[id]
	if inst != nil {
		c.lru.MoveToFront(inst.lru)
	}
	return inst
}

// put adds inst as the most recently used, replacing an instance of the
// same id, and evicts the least recently used beyond the bound.
func (c *instanceCache) put(inst *instance) {
	c.remove(inst.id)
	c.byID[inst.id] = inst
	inst.lru = c.lru.PushFront(inst)
	heap.Push(&c.expiry, inst)
	for c.len() > c.maxInstances {
		c.remove(c.lru.Back().Value.(*instance).id)
	}
}

// remove drops the instance of id, reporting whether there was one.
func (c *instanceCache) remove(id InstanceID) bool {
	inst := c.byID[id]
	if inst == nil {
		return false
	}
	delete(c.byID, id)
	c.lru.Remove(inst.lru)
	heap.Remove(&c.expiry, inst.heapIndex)
	return true
}

// setDeadline sets when inst expires.
func (c *instanceCache) setDeadline(inst *instance, expiresAtMs int64) {
	if c.byID[inst.id] != inst {
		panic(fmt.Sprintf("clientmetrics: deadline set on instance %s that is not cached", inst.id))
	}
	inst.expiresAtMs = expiresAtMs
	heap.Fix(&c.expiry, inst.heapIndex)
}

// expire drops the instances whose deadline is at or before nowMs and
// returns how many.
func (c *instanceCache) expire(nowMs int64) int {
	n := 0
	for len(c.expiry) > 0 && c.expiry[0].expiresAtMs <= nowMs {
		c.remove(c.expiry[0].id)
		n++
	}
	return n
}

// expiryHeap orders instances by deadline, earliest first
// (container/heap.Interface).
type expiryHeap []*instance

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expiresAtMs < h[j].expiresAtMs }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}

func (h *expiryHeap) Push(x any) {
	inst := x.(*instance)
	inst.heapIndex = len(*h)
	*h = append(*h, inst)
}

func (h *expiryHeap) Pop() any {
	old := *h
	inst := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	inst.heapIndex = -1
	return inst
}
