package tier

// slotTable is the bookkeeping of the chunk cache's slot file: slot i
// holds one chunk at [i·ChunkBytes, (i+1)·ChunkBytes). Slots are handed
// out in order the first time (the file grows as the cache fills) and
// reused after that, so a chunk overwrites page-cache pages the file
// already has: writing into fresh pages of new files cost the broker
// several times more CPU than the copy itself.
//
// A slot is pinned while a reader sends or reads its bytes; a pinned slot
// is never handed out, so its bytes cannot change under a reader. A chunk
// that leaves the cache while its slot is pinned retires the slot, which
// becomes free at its last unpin.
//
// Not safe for concurrent use: the ChunkCache holds its mutex around every
// call.
type slotTable struct {
	max     int     // slots the file may hold: MaxBytes / ChunkBytes
	free    []int   // slots holding no chunk, unpinned
	pins    []int32 // readers of each slot handed out so far
	retired []bool  // out of the cache while pinned: freed at the last unpin
}

func newSlotTable(max int) slotTable { return slotTable{max: max} }

// used is how many slots were ever handed out; the file spans them.
func (t *slotTable) used() int { return len(t.pins) }

// take hands out a free slot, or a new one while fewer than max were ever
// handed out (fresh: the file has no blocks there yet). ok is false when
// neither exists: the caller evicts a chunk and releases its slot first.
func (t *slotTable) take() (slot int, fresh, ok bool) {
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
		return slot, false, true
	}
	if len(t.pins) < t.max {
		t.pins = append(t.pins, 0)
		t.retired = append(t.retired, false)
		return len(t.pins) - 1, true, true
	}
	return 0, false, false
}

// release gives back a slot whose chunk left the cache (or was never
// stored): free now, or at its last unpin.
func (t *slotTable) release(slot int) {
	if t.pins[slot] > 0 {
		t.retired[slot] = true
		return
	}
	t.free = append(t.free, slot)
}

func (t *slotTable) pin(slot int) { t.pins[slot]++ }

// unpin ends one reader of slot; a retired slot without readers is free.
func (t *slotTable) unpin(slot int) {
	t.pins[slot]--
	if t.pins[slot] == 0 && t.retired[slot] {
		t.retired[slot] = false
		t.free = append(t.free, slot)
	}
}

func (t *slotTable) pinned(slot int) bool { return t.pins[slot] > 0 }
