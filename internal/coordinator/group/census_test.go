package group

import (
	"slices"
	"testing"
	"time"
)

// Tick publishes the census of the partition's groups by type and state,
// only when it changed.
func TestCensus(t *testing.T) {
	var got [][]GroupCount
	opts := testOptions()
	opts.OnCensus = func(c []GroupCount) { got = append(got, c) }
	h := newHarness(t, opts)
	h.advance(0)
	if len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("first census %v, want one, empty", got)
	}
	h.stableGroup("classic", 1)
	h.stableConsumerGroup("consumer", 2)
	wantCode(t, "simple commit", commitCodes(h.resp(h.do(commitReq("simple", "", -1, "t1", 5), "c")))[0], nil)
	h.advance(time.Millisecond)
	h.advance(time.Millisecond)
	want := []GroupCount{
		{Type: "classic", State: "Empty", Groups: 1},
		{Type: "classic", State: "Stable", Groups: 1},
		{Type: "consumer", State: "Stable", Groups: 1},
	}
	if len(got) != 2 || !slices.Equal(got[1], want) {
		t.Fatalf("censuses %v, want a second one %v and no third", got, want)
	}
}
