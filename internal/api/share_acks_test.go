package api

import (
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/share"
)

func TestMaxAckType(t *testing.T) {
	for _, tc := range []struct {
		version int16
		renew   bool
		want    share.AckType
	}{
		{0, false, share.AckReject}, {1, true, share.AckReject}, {2, false, share.AckReject}, {2, true, share.AckRenew}, {3, true, share.AckRenew},
	} {
		if got := maxAckType(tc.version, tc.renew); got != tc.want {
			t.Errorf("maxAckType(v%d, renew %v) = %v, want %v", tc.version, tc.renew, got, tc.want)
		}
	}
}

// TestAcksOf: wire batches (inclusive offsets) become half-open acks; a
// malformed one refuses the partition's acknowledgement (INVALID_REQUEST).
func TestAcksOf(t *testing.T) {
	accept, reject, renew := int8(share.AckAccept), int8(share.AckReject), int8(share.AckRenew)
	acks, code := acksOf([]wireAck{{first: 0, last: 0, types: []int8{accept}}, {first: 3, last: 5, types: []int8{accept, 0, reject}}}, share.AckReject)
	if code != 0 || len(acks) != 2 ||
		acks[0].Offsets != (base.Range{Start: 0, End: 1}) || len(acks[0].Types) != 1 ||
		acks[1].Offsets != (base.Range{Start: 3, End: 6}) || len(acks[1].Types) != 3 || acks[1].Types[2] != share.AckReject {
		t.Fatalf("acksOf = %+v, %d", acks, code)
	}
	if acks, code := acksOf(nil, share.AckReject); code != 0 || len(acks) != 0 {
		t.Fatalf("no batches: %+v, %d", acks, code)
	}
	for _, tc := range []struct {
		what    string
		batches []wireAck
		max     share.AckType
	}{
		{"a negative first offset", []wireAck{{first: -1, last: 0, types: []int8{accept}}}, share.AckReject},
		{"last before first", []wireAck{{first: 5, last: 4, types: []int8{accept}}}, share.AckReject},
		{"no types", []wireAck{{first: 0, last: 0}}, share.AckReject},
		{"two types for three offsets", []wireAck{{first: 0, last: 2, types: []int8{accept, accept}}}, share.AckReject},
		{"overlapping batches", []wireAck{{first: 0, last: 3, types: []int8{accept}}, {first: 3, last: 4, types: []int8{accept}}}, share.AckReject},
		{"a renewal without renewals", []wireAck{{first: 0, last: 0, types: []int8{renew}}}, share.AckReject},
		{"a type past renew", []wireAck{{first: 0, last: 0, types: []int8{5}}}, share.AckRenew},
		{"a negative type", []wireAck{{first: 0, last: 0, types: []int8{-1}}}, share.AckRenew},
		{"an offset at the end of int64", []wireAck{{first: math.MaxInt64, last: math.MaxInt64, types: []int8{accept}}}, share.AckReject},
	} {
		if acks, code := acksOf(tc.batches, tc.max); code != kerr.InvalidRequest.Code || acks != nil {
			t.Errorf("%s: %+v, %d; want INVALID_REQUEST", tc.what, acks, code)
		}
	}
	if _, code := acksOf([]wireAck{{first: 0, last: 0, types: []int8{renew}}}, share.AckRenew); code != 0 {
		t.Errorf("a renewal in a request that holds renewals: %d", code)
	}
}
