package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata and DescribeCluster list the unfenced brokers: this broker is
// left out while it is fenced (it may not yet hold the image a topic
// creation is planned on), unless no other broker is live.
func TestLiveBrokersLeaveOutAFencedSelf(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	ids := func() []int32 {
		t.Helper()
		resp := rh.handle(3, 12, kmsg.NewPtrMetadataRequest(), "User:ANONYMOUS").(*kmsg.MetadataResponse)
		var out []int32
		for _, b := range resp.Brokers {
			out = append(out, b.NodeID)
		}
		if !slices.Contains(out, resp.ControllerID) {
			t.Fatalf("Metadata names controller %d, not among brokers %v", resp.ControllerID, out)
		}
		dc := rh.handle(60, 0, kmsg.NewPtrDescribeClusterRequest(), "User:ANONYMOUS").(*kmsg.DescribeClusterResponse)
		var dcIDs []int32
		for _, b := range dc.Brokers {
			dcIDs = append(dcIDs, b.NodeID)
		}
		if !slices.Equal(out, dcIDs) {
			t.Fatalf("Metadata lists %v, DescribeCluster %v", out, dcIDs)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("all unfenced: %v", got)
	}
	rh.fence(2)
	if got := ids(); !slices.Equal(got, []int32{1, 3}) {
		t.Fatalf("broker 2 fenced: %v", got)
	}
	rh.fence(1)
	if got := ids(); !slices.Equal(got, []int32{3}) {
		t.Fatalf("this broker fenced: %v", got)
	}
	rh.fence(3)
	if got := ids(); !slices.Equal(got, []int32{1}) {
		t.Fatalf("every broker fenced: want this one alone, got %v", got)
	}
}
