package api

import (
	"bytes"
	"testing"

	"github.com/strata-broker/strata/internal/partition"
)

// Remote partitions finish in any order, but the server finds the
// markers front to back: the splice list follows the response's order,
// not the order regions were added in.
func TestSpliceListFollowsResponseOrder(t *testing.T) {
	var f fetchBuffers
	markers := map[int][]byte{}
	for _, order := range []int{2, 0, 3, 1} {
		markers[order] = f.addRegion(partition.Region{Pos: int64(order), Size: 1}, order)
	}
	got := f.spliceList()
	if len(got) != 4 {
		t.Fatalf("%d splices, want 4", len(got))
	}
	for i, s := range got {
		if !bytes.Equal(s.Marker, markers[i]) || s.Pos != int64(i) {
			t.Fatalf("splice %d is the region of place %d, want place %d", i, s.Pos, i)
		}
	}
}
