package api

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// defaultVoterChangeTimeout bounds a voter change whose request names no
// timeout (Kafka's admin default request timeout).
const defaultVoterChangeTimeout = 30 * time.Second

// voterChangeRefusal answers a voter change before it reaches the
// controller: a single-node quorum, whose voters cannot change
// (INVALID_REQUEST, where Kafka answers UNSUPPORTED_VERSION for
// kraft.version 0, which reads as a version Strata does not serve), or a
// request for another cluster. refused
// is false when the change may go on.
func (h *Handler) voterChangeRefusal(clusterID *string) (code int16, msg string, refused bool) {
	switch img := h.opts.Meta.Image(); {
	case !h.opts.Meta.Clustered():
		return kerr.InvalidRequest.Code, "this broker's metadata quorum is a single node (no controller.quorum.voters): its voters cannot change; a cluster whose quorum grows starts with controller.quorum.voters", true
	case clusterID != nil && *clusterID != img.ClusterID:
		return kerr.InconsistentClusterID.Code, "the request is for cluster " + *clusterID + ", this is cluster " + img.ClusterID, true
	}
	return 0, "", false
}

// voterChangeTimeout is a request's timeout, or the default for none.
func voterChangeTimeout(ms int32) time.Duration {
	if ms <= 0 {
		return defaultVoterChangeTimeout
	}
	return time.Duration(ms) * time.Millisecond
}

// voterChangeAnswerCode is Kafka's error code for a voter change's outcome.
func voterChangeAnswerCode(err error) (int16, string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, metadata.ErrDuplicateVoter):
		return kerr.DuplicateVoter.Code, err.Error()
	case errors.Is(err, metadata.ErrVoterNotFound):
		return kerr.VoterNotFound.Code, err.Error()
	case errors.Is(err, metadata.ErrInvalidVoter):
		return kerr.InvalidRequest.Code, err.Error()
	case errors.Is(err, metadata.ErrVoterNotReady):
		return kerr.RequestTimedOut.Code, err.Error()
	}
	return controllerAnswerCode(err)
}

// answerVoterChange is the answer to a voter change (an error code and
// message, nil for none): it needs ALTER on the cluster, passes
// voterChangeRefusal, then runs change with the request's timeout (0: the
// default).
func (h *Handler) answerVoterChange(ctx context.Context, req *Request, clusterID *string, timeoutMs int32,
	change func(context.Context, time.Duration) error) (int16, *string) {
	if !h.allowedCluster(req, acl.OpAlter) {
		return kerr.ClusterAuthorizationFailed.Code, nil
	}
	code, msg, refused := h.voterChangeRefusal(clusterID)
	if !refused {
		timeout := voterChangeTimeout(timeoutMs)
		ctx, cancel := context.WithTimeout(ctx, timeout+time.Second) // the controller answers first
		defer cancel()
		code, msg = voterChangeAnswerCode(change(ctx, timeout))
	}
	if msg == "" {
		return code, nil
	}
	return code, &msg
}
