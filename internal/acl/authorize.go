package acl

import "fmt"

// Authorizer is the broker's policy around the bindings.
type Authorizer struct {
	SuperUsers           map[string]bool // principals allowed everything (super.users)
	AllowEveryoneIfNoACL bool            // allow.everyone.if.no.acl.found
}

// request is who asks to do what, without the resource.
type request struct {
	principal string
	host      string
	op        Operation
}

// Authorize reports whether principal, connecting from host, may perform op
// on the resource (rt, name). The rules are in the package doc (Kafka's
// StandardAuthorizerData.findAclRule). It panics if op or rt is UNKNOWN or
// ANY: a request always names what it does to what.
func (a Authorizer) Authorize(ix *Index, principal, host string, op Operation, rt ResourceType, name string) bool {
	mustBeAction(op, rt)
	if a.SuperUsers[principal] {
		return true
	}
	t := ix.of(rt)
	q := request{principal: principal, host: host, op: op}
	var v verdict
	v.consider(t.literal[name], q)
	if name != Wildcard {
		v.consider(t.literal[Wildcard], q)
	}
	for _, l := range t.prefixLens {
		if l > len(name) {
			break
		}
		v.consider(t.prefixed[name[:l]], q)
	}
	switch {
	case v.denied:
		return false
	case v.allowed:
		return true
	case v.matched:
		return false // the resource has ACLs, none for this request
	}
	return a.AllowEveryoneIfNoACL
}

// verdict accumulates what the bindings matching one resource say.
type verdict struct {
	matched bool // some binding matches the resource, whoever it is for
	allowed bool // an ALLOW applies
	denied  bool // a DENY applies; final
}

// consider reads the bindings of one pattern that matches the resource.
func (v *verdict) consider(acls byPrincipal, q request) {
	if acls == nil || v.denied {
		return
	}
	v.matched = true
	v.scan(acls[q.principal], q)
	if q.principal != WildcardPrincipal {
		v.scan(acls[WildcardPrincipal], q)
	}
}

func (v *verdict) scan(bindings []Binding, q request) {
	for _, b := range bindings {
		if !q.applies(b) {
			continue
		}
		if b.Permission == PermissionDeny {
			v.denied = true
			return
		}
		v.allowed = true
	}
}

// applies reports whether b, whose principal the caller has matched, speaks
// to the request: its host is "*" or the requester's, and its operation
// covers the requested one.
func (q request) applies(b Binding) bool {
	if b.Host != Wildcard && b.Host != q.host {
		return false
	}
	return opCovers(b.Permission, b.Operation, q.op)
}

// opCovers reports whether a binding with permission perm for operation
// bound speaks to a request for op. ALL covers everything. An ALLOW for a
// stronger operation implies the weaker describe one (Kafka's
// IMPLIES_DESCRIBE, IMPLIES_DESCRIBE_CONFIGS); a DENY names exactly what it
// denies, so DENY READ leaves DESCRIBE to the other bindings.
func opCovers(perm Permission, bound, op Operation) bool {
	if bound == OpAll || bound == op {
		return true
	}
	if perm != PermissionAllow {
		return false
	}
	switch op {
	case OpDescribe:
		return bound == OpRead || bound == OpWrite || bound == OpDelete || bound == OpAlter
	case OpDescribeConfigs:
		return bound == OpAlterConfigs
	}
	return false
}

func mustBeAction(op Operation, rt ResourceType) {
	if !op.concrete() || !rt.concrete() {
		panic(fmt.Sprintf("acl: an authorization question needs a concrete operation and resource type, got operation %v (%d) on %v (%d)",
			op, op, rt, rt))
	}
}
