package tier

import "testing"

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

func TestNextObjectReadAhead(t *testing.T) {
	cases := []struct{ last, depth, count, want int64 }{
		{0, 2, 10, 0}, // far from the end
		{7, 2, 10, 0}, // read-ahead reaches the last chunk, not past it
		{8, 2, 10, 1}, // one chunk of read-ahead runs past the end
		{9, 2, 10, 2}, // at the last chunk: the whole depth
		{0, 2, 1, 2},  // a one-chunk object
		{9, 0, 10, 0}, // read-ahead off
		{9, 3, 10, 3},
	}
	for _, c := range cases {
		if got := nextObjectReadAhead(c.last, c.depth, c.count); got != c.want {
			t.Errorf("nextObjectReadAhead(%d, %d, %d) = %d, want %d", c.last, c.depth, c.count, got, c.want)
		}
	}
}
