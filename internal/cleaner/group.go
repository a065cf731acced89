package cleaner

import "math"

// GroupSegments splits segs (consecutive, oldest first) into runs that one
// cleaned segment can replace, as Kafka's groupSegmentsBySize does, so that
// segments shrunk by earlier passes merge: each group's total SizeBytes is
// at most maxBytes (a lone larger segment is a group by itself), and its
// offset span, last Next minus first Base, fits in a uint32, because the
// offset index stores offsets relative to the segment base as uint32. The
// groups are subslices of segs, in order, and cover it exactly.
func GroupSegments(segs []Segment, maxBytes int64) [][]Segment {
	if maxBytes <= 0 {
		panic("cleaner: GroupSegments needs maxBytes > 0")
	}
	var groups [][]Segment
	for len(segs) > 0 {
		n, size := 1, segs[0].SizeBytes
		for n < len(segs) && size+segs[n].SizeBytes <= maxBytes &&
			int64(segs[n].Next-segs[0].Base) <= math.MaxUint32 {
			size += segs[n].SizeBytes
			n++
		}
		groups = append(groups, segs[:n:n])
		segs = segs[n:]
	}
	return groups
}
