package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

// A single node's quorum cannot change: both requests are INVALID_REQUEST
// with a message saying why (not UNSUPPORTED_VERSION, which would read as
// a version Strata does not serve).
func TestRaftVoterChangesOnASingleNode(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	add := kmsg.NewPtrAddRaftVoterRequest()
	add.VoterID = 2
	addResp := rh.handle(80, 0, add, "User:ANONYMOUS").(*kmsg.AddRaftVoterResponse)
	remove := kmsg.NewPtrRemoveRaftVoterRequest()
	remove.VoterID = 1
	removeResp := rh.handle(81, 0, remove, "User:ANONYMOUS").(*kmsg.RemoveRaftVoterResponse)
	for name, got := range map[string]struct {
		code int16
		msg  *string
	}{"AddRaftVoter": {addResp.ErrorCode, addResp.ErrorMessage}, "RemoveRaftVoter": {removeResp.ErrorCode, removeResp.ErrorMessage}} {
		if got.code != kerr.InvalidRequest.Code || got.msg == nil || *got.msg == "" {
			t.Errorf("%s on a single node: code %d, message %v; want INVALID_REQUEST with a reason", name, got.code, got.msg)
		}
	}
	if _, ok := rh.meta.Image().Brokers[2]; !ok {
		t.Fatal("the harness lost broker 2")
	}
}

func TestVoterChangeAnswerCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{nil, 0},
		{fmt.Errorf("x: %w", metadata.ErrDuplicateVoter), kerr.DuplicateVoter.Code},
		{fmt.Errorf("x: %w", metadata.ErrVoterNotFound), kerr.VoterNotFound.Code},
		{fmt.Errorf("x: %w", metadata.ErrInvalidVoter), kerr.InvalidRequest.Code},
		{fmt.Errorf("x: %w", metadata.ErrVoterNotReady), kerr.RequestTimedOut.Code},
		{fmt.Errorf("x: %w", metadata.ErrNotController), kerr.NotController.Code},
		{context.DeadlineExceeded, kerr.RequestTimedOut.Code},
	} {
		if code, msg := voterChangeAnswerCode(tc.err); code != tc.want || (tc.err != nil && msg == "") {
			t.Errorf("%v: code %d (%q), want %d", tc.err, code, msg, tc.want)
		}
	}
}
