package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// CreateAcls: v0-3 (v1+ name pattern types; before, LITERAL). Each
// creation gets its own result: INVALID_REQUEST for a binding Kafka would
// refuse (ANY or UNKNOWN values, an operation that does not apply to the
// resource type, a cluster not named kafka-cluster, ...). The valid ones
// are stored in one metadata command. Needs ALTER on the cluster; without
// an authorizer SECURITY_DISABLED, as in Kafka.
func init() { register(30, 0, 3, (*Handler).handleCreateAcls) }

func (h *Handler) handleCreateAcls(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.CreateACLsRequest)
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	code, msg := h.aclDenial(req, acl.OpAlter)
	var valid []acl.Binding
	var validAt []int
	for i, c := range r.Creations {
		res := &resp.Results[i]
		*res = kmsg.NewCreateACLsResponseResult()
		if code != 0 {
			res.ErrorCode, res.ErrorMessage = code, strPtr(msg)
			continue
		}
		b := acl.Binding{
			ResourceType: acl.ResourceType(c.ResourceType), ResourceName: c.ResourceName,
			PatternType: acl.PatternType(c.ResourcePatternType), Principal: c.Principal, Host: c.Host,
			Operation: acl.Operation(c.Operation), Permission: acl.Permission(c.PermissionType),
		}
		if err := b.Validate(); err != nil {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, strPtr(err.Error())
			continue
		}
		valid, validAt = append(valid, b), append(validAt, i)
	}
	if len(valid) == 0 {
		return done(resp)
	}
	if err := h.opts.Meta.CreateAcls(ctx, valid); err != nil {
		code, msg := errorCode(err)
		for _, i := range validAt {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, strPtr(msg)
		}
		return done(resp)
	}
	h.logger.Info("created ACLs", "count", len(valid), "principal", req.Principal)
	return done(resp)
}
