package api

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddRaftVoter: v0-1 (KIP-853), what `kafka-metadata-quorum add-controller`
// and Admin.addRaftVoter send. ALTER on the cluster. Any broker takes it to
// the controller, as Kafka's brokers forward it. The node must have joined
// the quorum as a non-voter (started with the cluster's
// controller.quorum.voters), be registered with the given directory id
// (its log directory's id, which DescribeQuorum v2 shows), be caught up
// with the controller's metadata, and one of the listeners must be its
// controller address. The answer comes once the new voter set is
// committed, also for v1's AckWhenCommitted=false (answer once the leader
// has written it): Raft reports the change only when committed, which is
// after it was written. Errors as
// Kafka's: DUPLICATE_VOTER for a voter, REQUEST_TIMED_OUT for a node not
// (yet) ready or a change that did not commit in time, INVALID_REQUEST for
// a directory id or listeners that are not the node's,
// INCONSISTENT_CLUSTER_ID, and INVALID_REQUEST on a single node, whose
// quorum cannot grow.
func init() { register(80, 0, 1, (*Handler).handleAddRaftVoter) }

func (h *Handler) handleAddRaftVoter(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AddRaftVoterRequest)
	resp := r.ResponseKind().(*kmsg.AddRaftVoterResponse)
	addrs := make([]string, 0, len(r.Listeners))
	for _, l := range r.Listeners {
		addrs = append(addrs, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
	}
	resp.ErrorCode, resp.ErrorMessage = h.answerVoterChange(ctx, req, r.ClusterID, r.TimeoutMillis,
		func(ctx context.Context, timeout time.Duration) error {
			return h.opts.Meta.AddVoter(ctx, r.VoterID, r.VoterDirectoryID, addrs, timeout)
		})
	return done(resp)
}
