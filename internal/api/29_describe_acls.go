package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeAcls: v0-3 (v1+ name pattern types; before, LITERAL). Lists the
// ACLs a filter matches, grouped by resource pattern. Needs DESCRIBE on the
// cluster; without an authorizer SECURITY_DISABLED, as in Kafka.
func init() { register(29, 0, 3, (*Handler).handleDescribeAcls) }

func (h *Handler) handleDescribeAcls(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeACLsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := aclFilter(int8(r.ResourceType), r.ResourceName, int8(r.ResourcePatternType), r.Principal, r.Host, int8(r.Operation), int8(r.PermissionType))
	if code, msg := h.aclDenial(req, acl.OpDescribe); code != 0 {
		resp.ErrorCode, resp.ErrorMessage = code, strPtr(msg)
		return done(resp)
	}
	if err := f.Validate(); err != nil {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, strPtr(err.Error())
		return done(resp)
	}
	resp.Resources = describedAcls(matching(h.opts.Meta.Image().Acls(), f))
	return done(resp)
}
