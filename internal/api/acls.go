package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// Shared by DescribeAcls, CreateAcls and DeleteAcls: the wire shapes of a
// binding and a filter, and the error every ACL request gets while the
// broker runs no authorizer (SECURITY_DISABLED, as Kafka answers).

const securityDisabledMessage = "no authorizer is configured on this broker: set authorizer.class.name"

// aclDenial is why an ACL request is refused as a whole:
// SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED
// without op on the cluster (DESCRIBE to list, ALTER to change); 0
// otherwise.
func (h *Handler) aclDenial(req *Request, op acl.Operation) (int16, string) {
	switch {
	case h.policy == nil:
		return kerr.SecurityDisabled.Code, securityDisabledMessage
	case !h.allowedCluster(req, op):
		return clusterDenied, ""
	}
	return 0, ""
}

// aclFilter is the filter a DescribeAcls or DeleteAcls names.
func aclFilter(rt int8, name *string, pattern int8, principal, host *string, op, perm int8) acl.Filter {
	return acl.Filter{
		ResourceType: acl.ResourceType(rt), ResourceName: name, PatternType: acl.PatternType(pattern),
		Principal: principal, Host: host, Operation: acl.Operation(op), Permission: acl.Permission(perm),
	}
}

// describedAcls groups bindings by resource pattern, in the image's order,
// as a DescribeAcls response lists them.
func describedAcls(bindings []acl.Binding) []kmsg.DescribeACLsResponseResource {
	var out []kmsg.DescribeACLsResponseResource
	for _, b := range bindings {
		n := len(out)
		if n == 0 || out[n-1].ResourceType != kmsg.ACLResourceType(b.ResourceType) ||
			out[n-1].ResourceName != b.ResourceName || out[n-1].ResourcePatternType != kmsg.ACLResourcePatternType(b.PatternType) {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName = kmsg.ACLResourceType(b.ResourceType), b.ResourceName
			r.ResourcePatternType = kmsg.ACLResourcePatternType(b.PatternType)
			out = append(out, r)
			n++
		}
		e := kmsg.NewDescribeACLsResponseResourceACL()
		e.Principal, e.Host = b.Principal, b.Host
		e.Operation, e.PermissionType = kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
		out[n-1].ACLs = append(out[n-1].ACLs, e)
	}
	return out
}

// matching are the bindings f selects.
func matching(bindings []acl.Binding, f acl.Filter) []acl.Binding {
	var out []acl.Binding
	for _, b := range bindings {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}
