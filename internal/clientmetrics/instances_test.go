package clientmetrics

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// cacheModel is the naive instanceCache: for each id, when it was last
// used (a counter) and when it expires.
type cacheModel struct {
	max      int
	lastUse  map[InstanceID]int
	deadline map[InstanceID]int64
	clock    int
}

func (m *cacheModel) use(id InstanceID) { m.clock++; m.lastUse[id] = m.clock }

func (m *cacheModel) put(id InstanceID) {
	m.use(id)
	m.deadline[id] = 0
	for len(m.lastUse) > m.max {
		lru := slices.MinFunc(slices.Collect(maps.Keys(m.lastUse)), func(a, b InstanceID) int { return m.lastUse[a] - m.lastUse[b] })
		m.remove(lru)
	}
}

func (m *cacheModel) remove(id InstanceID) { delete(m.lastUse, id); delete(m.deadline, id) }

// check verifies the cache's invariant and that it holds what the model
// holds.
func (c *instanceCache) check(t *rapid.T, m *cacheModel) {
	if c.len() != len(m.lastUse) || c.lru.Len() != c.len() || len(c.expiry) != c.len() {
		t.Fatalf("sizes: byID %d, lru %d, heap %d, model %d", c.len(), c.lru.Len(), len(c.expiry), len(m.lastUse))
	}
	prevUse := int(^uint(0) >> 1)
	for e := c.lru.Front(); e != nil; e = e.Next() {
		inst := e.Value.(*instance)
		if c.byID[inst.id] != inst || inst.lru != e {
			t.Fatalf("instance %s: lru and byID disagree", inst.id)
		}
		use, ok := m.lastUse[inst.id]
		if !ok || use >= prevUse {
			t.Fatalf("instance %s: not in the model or out of use order", inst.id)
		}
		prevUse = use
		if inst.expiresAtMs != m.deadline[inst.id] {
			t.Fatalf("instance %s: deadline %d, model %d", inst.id, inst.expiresAtMs, m.deadline[inst.id])
		}
	}
	for i, inst := range c.expiry {
		if inst.heapIndex != i || (i > 0 && c.expiry[(i-1)/2].expiresAtMs > inst.expiresAtMs) {
			t.Fatalf("heap broken at %d", i)
		}
	}
}

func TestInstanceCacheMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		max := rapid.IntRange(1, 5).Draw(t, "max")
		c := newInstanceCache(max)
		m := &cacheModel{max: max, lastUse: map[InstanceID]int{}, deadline: map[InstanceID]int64{}}
		id := rapid.Custom(func(t *rapid.T) InstanceID { return InstanceID{15: rapid.ByteRange(1, 8).Draw(t, "id")} })
		t.Repeat(map[string]func(*rapid.T){
			"put": func(t *rapid.T) {
				i := id.Draw(t, "id")
				c.put(&instance{id: i})
				m.put(i)
			},
			"get": func(t *rapid.T) {
				i := id.Draw(t, "id")
				got := c.get(i)
				if _, ok := m.lastUse[i]; ok != (got != nil) {
					t.Fatalf("get %s: %v, model has it: %v", i, got != nil, ok)
				}
				if got != nil {
					m.use(i)
				}
			},
			"setDeadline": func(t *rapid.T) {
				i := id.Draw(t, "id")
				inst := c.byID[i]
				if inst == nil {
					t.Skip("not cached")
				}
				d := rapid.Int64Range(0, 100).Draw(t, "deadline")
				c.setDeadline(inst, d)
				m.deadline[i] = d
			},
			"remove": func(t *rapid.T) {
				i := id.Draw(t, "id")
				_, had := m.lastUse[i]
				if c.remove(i) != had {
					t.Fatalf("remove %s: reported %v", i, !had)
				}
				m.remove(i)
			},
			"expire": func(t *rapid.T) {
				now := rapid.Int64Range(0, 100).Draw(t, "now")
				want := 0
				for i, d := range m.deadline {
					if d <= now {
						m.remove(i)
						want++
					}
				}
				if got := c.expire(now); got != want {
					t.Fatalf("expire(%d) dropped %d, model %d", now, got, want)
				}
			},
			"": func(t *rapid.T) { c.check(t, m) },
		})
	})
}
