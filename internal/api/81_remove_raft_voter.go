package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RemoveRaftVoter: v0 (KIP-853), what `kafka-metadata-quorum
// remove-controller` and Admin.removeRaftVoter send. ALTER on the cluster;
// any broker takes it to the controller. The voter, named by its id and
// directory id, becomes a non-voter: if it runs, it goes on as a broker and
// replicates the metadata; a removed leader steps down once the change is
// committed, which is when the answer comes. VOTER_NOT_FOUND for a node
// that is not a voter or another directory id, INVALID_REQUEST for the
// last voter, REQUEST_TIMED_OUT for a change that did not commit in time,
// INCONSISTENT_CLUSTER_ID, and INVALID_REQUEST on a single node.
func init() { register(81, 0, 0, (*Handler).handleRemoveRaftVoter) }

func (h *Handler) handleRemoveRaftVoter(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.RemoveRaftVoterRequest)
	resp := r.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
	resp.ErrorCode, resp.ErrorMessage = h.answerVoterChange(ctx, req, r.ClusterID, 0,
		func(ctx context.Context, timeout time.Duration) error {
			return h.opts.Meta.RemoveVoter(ctx, r.VoterID, r.VoterDirectoryID, timeout)
		})
	return done(resp)
}
