package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DeleteAcls: v0-3 (v1+ name pattern types; before, LITERAL). Each filter
// deletes the ACLs it matches and lists them in its result; the deletions
// of all filters go to the metadata quorum as one command. Needs ALTER on
// the cluster; without an authorizer SECURITY_DISABLED, as in Kafka.
func init() { register(31, 0, 3, (*Handler).handleDeleteAcls) }

func (h *Handler) handleDeleteAcls(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteACLsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(r.Filters))
	code, msg := h.aclDenial(req, acl.OpAlter)
	bindings := h.opts.Meta.Image().Acls()
	var doomed []acl.Binding
	seen := map[acl.Binding]bool{}
	for i, rf := range r.Filters {
		res := &resp.Results[i]
		*res = kmsg.NewDeleteACLsResponseResult()
		if code != 0 {
			res.ErrorCode, res.ErrorMessage = code, strPtr(msg)
			continue
		}
		f := aclFilter(int8(rf.ResourceType), rf.ResourceName, int8(rf.ResourcePatternType), rf.Principal, rf.Host, int8(rf.Operation), int8(rf.PermissionType))
		if err := f.Validate(); err != nil {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, strPtr(err.Error())
			continue
		}
		for _, b := range matching(bindings, f) {
			res.MatchingACLs = append(res.MatchingACLs, deletedAcl(b))
			if !seen[b] {
				seen[b] = true
				doomed = append(doomed, b)
			}
		}
	}
	if len(doomed) == 0 {
		return done(resp)
	}
	if err := h.opts.Meta.DeleteAcls(ctx, doomed); err != nil {
		code, msg := errorCode(err)
		for i := range resp.Results {
			if len(resp.Results[i].MatchingACLs) > 0 {
				resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, strPtr(msg)
				resp.Results[i].MatchingACLs = nil
			}
		}
		return done(resp)
	}
	h.logger.Info("deleted ACLs", "count", len(doomed), "principal", req.Principal)
	return done(resp)
}

func deletedAcl(b acl.Binding) kmsg.DeleteACLsResponseResultMatchingACL {
	m := kmsg.NewDeleteACLsResponseResultMatchingACL()
	m.ResourceType, m.ResourceName = kmsg.ACLResourceType(b.ResourceType), b.ResourceName
	m.ResourcePatternType = kmsg.ACLResourcePatternType(b.PatternType)
	m.Principal, m.Host = b.Principal, b.Host
	m.Operation, m.PermissionType = kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
	return m
}
