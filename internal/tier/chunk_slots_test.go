package tier

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Property: over random take, release, pin and unpin, a slot is never
// handed out while it holds a chunk or is pinned, never more than max
// slots exist, and every slot released ends up free once unpinned.
func TestSlotTableProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		max := 1 + rng.IntN(6)
		tab := newSlotTable(max)
		held := map[int]bool{} // slots holding a chunk
		pins := map[int]int{}
		for step := range 300 {
			switch rng.IntN(4) {
			case 0:
				slot, fresh, ok := tab.take()
				if !ok {
					if tab.used() < max || len(held) < max && len(tab.free) > 0 {
						t.Fatalf("trial %d step %d: no slot with %d used of %d, %d free", trial, step, tab.used(), max, len(tab.free))
					}
					continue
				}
				if held[slot] || pins[slot] > 0 {
					t.Fatalf("trial %d step %d: slot %d handed out while held %v, pins %d", trial, step, slot, held[slot], pins[slot])
				}
				if fresh && slot != tab.used()-1 {
					t.Fatalf("trial %d step %d: fresh slot %d is not the newest of %d", trial, step, slot, tab.used())
				}
				if tab.used() > max {
					t.Fatalf("trial %d step %d: %d slots, max %d", trial, step, tab.used(), max)
				}
				held[slot] = true
			case 1:
				for slot := range held {
					delete(held, slot)
					tab.release(slot)
					break
				}
			case 2:
				for slot := range held {
					tab.pin(slot)
					pins[slot]++
					break
				}
			case 3:
				for slot, n := range pins {
					if n > 0 {
						tab.unpin(slot)
						pins[slot]--
						break
					}
				}
			}
		}
		// Release and unpin everything: every slot is free, once.
		for slot := range held {
			tab.release(slot)
		}
		for slot, n := range pins {
			for range n {
				tab.unpin(slot)
			}
		}
		seenFree := map[int]bool{}
		for _, s := range tab.free {
			if seenFree[s] {
				t.Fatalf("trial %d: slot %d free twice", trial, s)
			}
			seenFree[s] = true
		}
		if len(seenFree) != tab.used() {
			t.Fatalf("trial %d: %d of %d slots free after releasing all", trial, len(seenFree), tab.used())
		}
	}
}

// A region being sent pins its slot: however many chunks come and go, its
// bytes stay those of its chunk until it is released, and then its slot
// is used again.
func TestChunkCachePinnedSlotIsNotReused(t *testing.T) {
	const chunk = 4096
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 2 * chunk, ChunkBytes: chunk})
	seg := c.segs[0]
	reg, ok, err := c.reader.ReadRegion(t.Context(), seg, seg.Range.Start, chunk)
	if err != nil || !ok {
		t.Fatalf("ReadRegion: ok %v, %v", ok, err)
	}
	want := make([]byte, reg.Size)
	if _, err := reg.File.ReadAt(want, reg.Pos); err != nil {
		t.Fatal(err)
	}
	pinned := c.slotOf(seg.ID, 0)
	// Read many other chunks through the cache, which has two slots.
	for _, s := range c.segs[1:4] {
		c.readSegment(s, 700)
	}
	got := make([]byte, reg.Size)
	if _, err := reg.File.ReadAt(got, reg.Pos); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes of a pinned region changed while it was held")
	}
	reg.File.Close()
	reg.Release()
	c.readSegment(c.segs[4], 700)
	c.cache.mu.Lock()
	reused := false
	for _, el := range c.cache.mu.byKey {
		reused = reused || el.Value.(*chunkEntry).slot == pinned
	}
	c.cache.mu.Unlock()
	if !reused {
		t.Fatal("the slot of a released region was not used again")
	}
}

// With every slot pinned, reads are still served (from the bucket) and
// nothing pinned is overwritten.
func TestChunkCacheAllSlotsPinned(t *testing.T) {
	const chunk = 4096
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: chunk, ChunkBytes: chunk})
	seg := c.segs[0]
	reg, ok, err := c.reader.ReadRegion(t.Context(), seg, seg.Range.Start, chunk)
	if err != nil || !ok {
		t.Fatalf("ReadRegion: ok %v, %v", ok, err)
	}
	defer reg.Release()
	defer reg.File.Close()
	want := make([]byte, reg.Size)
	if _, err := reg.File.ReadAt(want, reg.Pos); err != nil {
		t.Fatal(err)
	}
	c.readSegment(c.segs[1], 700)
	if _, ok, err := c.reader.ReadRegion(t.Context(), c.segs[1], c.segs[1].Range.Start, chunk); ok || err != nil {
		t.Fatalf("ReadRegion with the only slot pinned: ok %v, %v; want a fallback to Read", ok, err)
	}
	got := make([]byte, reg.Size)
	if _, err := reg.File.ReadAt(got, reg.Pos); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the pinned region changed (%v)", err)
	}
}

// The chunk buffers kept after remote reads stay within keptBufferBytes,
// however large the chunks, and at least one is kept.
func TestKeptChunkBuffers(t *testing.T) {
	cases := []struct {
		chunk int64
		want  int
	}{
		{64 << 10, readAheadParallel},
		{8 << 20, 8},
		{16 << 20, 4},
		{64 << 20, 1},
		{256 << 20, 1},
	}
	for _, c := range cases {
		if got := keptChunkBuffers(c.chunk); got != c.want {
			t.Errorf("keptChunkBuffers(%d) = %d, want %d", c.chunk, got, c.want)
		}
	}
}

// Buffers beyond the kept number are released; kept ones are handed out
// again.
func TestChunkBuffersKeepAtMost(t *testing.T) {
	p := newChunkBuffers(4096, 2)
	bufs := [][]byte{p.get(), p.get(), p.get()}
	for _, b := range bufs {
		if len(b) != 4096 {
			t.Fatalf("buffer of %d bytes, want 4096", len(b))
		}
		p.put(b)
	}
	if n := len(p.free); n != 2 {
		t.Fatalf("%d buffers kept, want 2", n)
	}
	b := p.get()
	b[0], b[4095] = 1, 2 // still mapped and writable
	p.put(b)
}
