package tier

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestChunkSpan(t *testing.T) {
	cases := []struct {
		off, n, chunk int64
		first, last   int64
	}{
		{0, 1, 100, 0, 0},
		{0, 100, 100, 0, 0},
		{0, 101, 100, 0, 1},
		{99, 2, 100, 0, 1},
		{100, 100, 100, 1, 1},
		{250, 500, 100, 2, 7},
	}
	for _, c := range cases {
		first, last := chunkSpan(c.off, c.n, c.chunk)
		if first != c.first || last != c.last {
			t.Errorf("chunkSpan(%d, %d, %d) = [%d, %d], want [%d, %d]", c.off, c.n, c.chunk, first, last, c.first, c.last)
		}
	}
}

func TestChunkBoundsAndCount(t *testing.T) {
	cases := []struct {
		k, chunk, object int64
		start, length    int64
		count            int64
	}{
		{0, 100, 250, 0, 100, 3},
		{1, 100, 250, 100, 100, 3},
		{2, 100, 250, 200, 50, 3},
		{0, 100, 100, 0, 100, 1},
		{0, 100, 1, 0, 1, 1},
	}
	for _, c := range cases {
		start, length := chunkBounds(c.k, c.chunk, c.object)
		if start != c.start || length != c.length {
			t.Errorf("chunkBounds(%d, %d, %d) = (%d, %d), want (%d, %d)", c.k, c.chunk, c.object, start, length, c.start, c.length)
		}
		if got := chunkCount(c.object, c.chunk); got != c.count {
			t.Errorf("chunkCount(%d, %d) = %d, want %d", c.object, c.chunk, got, c.count)
		}
	}
}

func TestReadAheadSpan(t *testing.T) {
	cases := []struct {
		name               string
		prevLast           int64
		havePrev           bool
		first, last, depth int64
		count              int64
		from, to           int64
	}{
		{"first read at the start of the object", 0, false, 0, 0, 2, 10, 1, 3},
		{"first read in the middle", 0, false, 4, 4, 2, 10, 0, 0},
		{"same chunk as the previous end", 4, true, 4, 4, 2, 10, 5, 7},
		{"next chunk after the previous end", 4, true, 5, 6, 2, 10, 7, 9},
		{"a jump forward", 4, true, 6, 6, 2, 10, 0, 0},
		{"a jump back", 4, true, 2, 3, 2, 10, 0, 0},
		{"cut at the last chunk", 7, true, 8, 8, 4, 10, 9, 10},
		{"already at the last chunk", 8, true, 9, 9, 4, 10, 0, 0},
		{"read-ahead off", 4, true, 5, 5, 0, 10, 0, 0},
	}
	for _, c := range cases {
		from, to := readAheadSpan(c.prevLast, c.havePrev, c.first, c.last, c.depth, c.count)
		if from != c.from || to != c.to {
			t.Errorf("%s: readAheadSpan = [%d, %d), want [%d, %d)", c.name, from, to, c.from, c.to)
		}
	}
}

func TestFollowingReadAhead(t *testing.T) {
	cases := []struct {
		name               string
		last, depth, count int64
		nextCounts, want   []int64
	}{
		{"far from the end", 0, 2, 10, []int64{10}, nil},
		{"read-ahead reaches the last chunk, not past it", 7, 2, 10, []int64{10}, nil},
		{"one chunk past the end", 8, 2, 10, []int64{10}, []int64{1}},
		{"at the last chunk: the whole depth", 9, 2, 10, []int64{10}, []int64{2}},
		{"one-chunk objects: one chunk of each", 0, 2, 1, []int64{1, 1, 1}, []int64{1, 1}},
		{"the depth spreads over small objects", 0, 4, 1, []int64{2, 1, 5}, []int64{2, 1, 1}},
		{"no following object", 9, 2, 10, nil, nil},
		{"fewer objects than the depth", 0, 3, 1, []int64{1}, []int64{1}},
		{"read-ahead off", 9, 0, 10, []int64{10}, nil},
		{"depth 3 at the end", 9, 3, 10, []int64{10}, []int64{3}},
	}
	for _, c := range cases {
		got := followingReadAhead(c.last, c.depth, c.count, c.nextCounts)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: followingReadAhead(%d, %d, %d, %v) = %v, want %v", c.name, c.last, c.depth, c.count, c.nextCounts, got, c.want)
		}
	}
}

// Property: the chunks planned never exceed the depth nor any object's
// size, and, when the objects after the current one are enough, add up to
// exactly the part of the depth past the current object's end.
func TestFollowingReadAheadProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for range 10000 {
		count := 1 + rng.Int64N(8)
		last := rng.Int64N(count)
		depth := rng.Int64N(6)
		next := make([]int64, rng.IntN(5))
		var avail int64
		for i := range next {
			next[i] = 1 + rng.Int64N(4)
			avail += next[i]
		}
		got := followingReadAhead(last, depth, count, next)
		var sum int64
		for i, n := range got {
			if n <= 0 || n > next[i] {
				t.Fatalf("followingReadAhead(%d, %d, %d, %v) = %v: entry %d out of range", last, depth, count, next, got, i)
			}
			sum += n
		}
		past := max(0, min(depth, last+depth-(count-1)))
		if want := min(past, avail); sum != want {
			t.Fatalf("followingReadAhead(%d, %d, %d, %v) = %v: %d chunks, want %d", last, depth, count, next, got, sum, want)
		}
	}
}

// Read-ahead is as deep as configured, but leaves the reader's chunk a
// slot: at most slots-1, never negative.
func TestReadAheadDepth(t *testing.T) {
	for _, tt := range []struct{ configured, slots, want int64 }{
		{2, 128, 2}, {4, 5, 4}, {4, 4, 3}, {4, 2, 1}, {2, 1, 0}, {0, 8, 0}, {3, 0, 0},
	} {
		if got := readAheadDepth(tt.configured, tt.slots); got != tt.want {
			t.Errorf("readAheadDepth(%d, %d) = %d, want %d", tt.configured, tt.slots, got, tt.want)
		}
	}
}
