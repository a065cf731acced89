package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
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

// DescribeCluster v2 lists fenced brokers too when asked (KIP-1073),
// marked; and a broker listener refuses a request for controllers.
func TestDescribeClusterFencedBrokersAndEndpointType(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.fence(2)
	describe := func(version int16, includeFenced bool, endpointType int8) *kmsg.DescribeClusterResponse {
		r := kmsg.NewPtrDescribeClusterRequest()
		r.IncludeFencedBrokers, r.EndpointType = includeFenced, endpointType
		return rh.handle(60, version, r, "User:ANONYMOUS").(*kmsg.DescribeClusterResponse)
	}
	type row struct {
		id     int32
		fenced bool
		rack   string
	}
	rows := func(resp *kmsg.DescribeClusterResponse) []row {
		var out []row
		for _, b := range resp.Brokers {
			out = append(out, row{b.NodeID, b.IsFenced, *b.Rack})
		}
		return out
	}
	if got := rows(describe(2, false, 1)); !slices.Equal(got, []row{{1, false, "rack-1"}, {3, false, "rack-3"}}) {
		t.Fatalf("v2 without fenced brokers: %v", got)
	}
	if got := rows(describe(2, true, 1)); !slices.Equal(got, []row{{1, false, "rack-1"}, {2, true, "rack-2"}, {3, false, "rack-3"}}) {
		t.Fatalf("v2 with fenced brokers: %v", got)
	}
	if resp := describe(1, false, 2); resp.ErrorCode != kerr.MismatchedEndpointType.Code || len(resp.Brokers) != 0 {
		t.Fatalf("endpoint type 2 (controllers) on a broker listener: code %d, %d brokers", resp.ErrorCode, len(resp.Brokers))
	}
	if resp := describe(1, false, 7); resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("endpoint type 7: code %d", resp.ErrorCode)
	}
}
