package acl

import "testing"

func TestAuthorizeAny(t *testing.T) {
	prefixT := func(b Binding) Binding { return prefixed(b) }
	for _, tc := range []struct {
		name      string
		bindings  []Binding
		policy    Authorizer
		principal string // alice unless set
		op        Operation
		rt        ResourceType // TOPIC unless set
		want      bool
	}{
		{name: "super user", policy: superAlice, op: OpWrite,
			bindings: []Binding{denyTopic(alice, OpAll, "*")}, want: true},
		{name: "no bindings, default allow", policy: openPolicy, op: OpWrite, want: true},
		{name: "no bindings, default deny", policy: closedPolicy, op: OpWrite, want: false},
		{name: "allow on one literal", op: OpWrite, bindings: []Binding{allowTopic(alice, OpWrite, "t")}, want: true},
		{name: "allow ALL on one literal", op: OpWrite, bindings: []Binding{allowTopic(alice, OpAll, "t")}, want: true},
		{name: "allow of another operation", op: OpWrite, bindings: []Binding{allowTopic(alice, OpRead, "t")}, want: false},
		{name: "allow for bob", op: OpWrite, bindings: []Binding{allowTopic(bob, OpWrite, "t")}, want: false},
		{name: "allow for everyone", op: OpWrite, bindings: []Binding{allowTopic("User:*", OpWrite, "t")}, want: true},
		{name: "allow from another host", op: OpWrite, bindings: []Binding{onHost(allowTopic(alice, OpWrite, "t"), ip2)}, want: false},
		{name: "allow from her host", op: OpWrite, bindings: []Binding{onHost(allowTopic(alice, OpWrite, "t"), ip1)}, want: true},
		{name: "allow on another resource type", op: OpWrite,
			bindings: []Binding{acl(PermissionAllow, alice, OpWrite, ResourceTransactionalID, PatternLiteral, "t")}, want: false},
		{name: "literal allow negated by equal literal deny", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(alice, OpWrite, "t")}, want: false},
		{name: "literal allow negated by deny ALL", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(alice, OpAll, "t")}, want: false},
		{name: "literal allow negated by a covering prefix deny", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "foo"), prefixT(denyTopic(alice, OpWrite, "f"))}, want: false},
		{name: "literal allow negated by an equal prefix deny", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "foo"), prefixT(denyTopic(alice, OpWrite, "foo"))}, want: false},
		{name: "literal allow survives a longer prefix deny", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "foo"), prefixT(denyTopic(alice, OpWrite, "foox"))}, want: true},
		{name: "literal allow survives a deny for bob", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(bob, OpWrite, "t")}, want: true},
		{name: "literal allow survives a deny of another operation", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(alice, OpRead, "t")}, want: true},
		{name: "one of two literal allows survives", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "a"), allowTopic(alice, OpWrite, "b"), denyTopic(alice, OpWrite, "a")}, want: true},
		{name: "prefix allow survives a literal deny of the prefix name", op: OpWrite,
			bindings: []Binding{prefixT(allowTopic(alice, OpWrite, "foo")), denyTopic(alice, OpWrite, "foo")}, want: true},
		{name: "prefix allow survives a longer prefix deny", op: OpWrite,
			bindings: []Binding{prefixT(allowTopic(alice, OpWrite, "foo")), prefixT(denyTopic(alice, OpWrite, "fooa"))}, want: true},
		{name: "prefix allow negated by an equal prefix deny", op: OpWrite,
			bindings: []Binding{prefixT(allowTopic(alice, OpWrite, "foo")), prefixT(denyTopic(alice, OpWrite, "foo"))}, want: false},
		{name: "prefix allow negated by a shorter prefix deny", op: OpWrite,
			bindings: []Binding{prefixT(allowTopic(alice, OpWrite, "foo")), prefixT(denyTopic(alice, OpWrite, "fo"))}, want: false},
		{name: "wildcard allow survives prefix and literal denies", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "*"), prefixT(denyTopic(alice, OpWrite, "a")), denyTopic(alice, OpWrite, "b")}, want: true},
		{name: "wildcard deny denies everything", op: OpWrite, policy: openPolicy,
			bindings: []Binding{allowTopic(alice, OpWrite, "*"), allowTopic(alice, OpWrite, "t"), denyTopic(alice, OpWrite, "*")}, want: false},
		{name: "wildcard deny for everyone denies alice", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic("User:*", OpAll, "*")}, want: false},
		{name: "wildcard deny for bob does not", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(bob, OpAll, "*")}, want: true},
		{name: "prefixed * deny is not a wildcard", op: OpWrite,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), prefixT(denyTopic(alice, OpWrite, "*"))}, want: true},
		{name: "prefixed * allow is not a wildcard: an equal prefix deny negates it", op: OpWrite,
			bindings: []Binding{prefixT(allowTopic(alice, OpWrite, "*")), prefixT(denyTopic(alice, OpWrite, "*"))}, want: false},
		{name: "implied: WRITE allows DESCRIBE somewhere", op: OpDescribe,
			bindings: []Binding{allowTopic(alice, OpWrite, "t")}, want: true},
		{name: "implied allow negated by DENY DESCRIBE", op: OpDescribe,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(alice, OpDescribe, "t")}, want: false},
		{name: "DENY WRITE does not negate DESCRIBE", op: OpDescribe,
			bindings: []Binding{allowTopic(alice, OpWrite, "t"), denyTopic(alice, OpWrite, "t")}, want: true},
		{name: "default: bindings for others on some names leave fresh names", policy: openPolicy, op: OpWrite,
			bindings: []Binding{allowTopic(bob, OpWrite, "t"), prefixT(denyTopic(bob, OpWrite, "h"))}, want: true},
		{name: "default: a deny for alice on one name leaves fresh names", policy: openPolicy, op: OpWrite,
			bindings: []Binding{denyTopic(alice, OpWrite, "t")}, want: true},
		{name: "default: a wildcard binding for bob covers every name", policy: openPolicy, op: OpWrite,
			bindings: []Binding{allowTopic(bob, OpRead, "*")}, want: false},
		{name: "default: bindings of another type do not count", policy: openPolicy, op: OpWrite,
			bindings: []Binding{acl(PermissionDeny, alice, OpAll, ResourceGroup, PatternLiteral, "*")}, want: true},
		{name: "default off: bindings for others only", policy: closedPolicy, op: OpWrite,
			bindings: []Binding{allowTopic(bob, OpWrite, "t")}, want: false},
		{name: "transactional ids", op: OpWrite, rt: ResourceTransactionalID,
			bindings: []Binding{prefixT(acl(PermissionAllow, alice, OpWrite, ResourceTransactionalID, PatternLiteral, "app-"))}, want: true},
		{name: "requester User:* reads the wildcard principal once", principal: "User:*", op: OpWrite,
			bindings: []Binding{allowTopic("User:*", OpWrite, "t")}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			principal, rt := tc.principal, tc.rt
			if principal == "" {
				principal = alice
			}
			if rt == ResourceUnknown {
				rt = ResourceTopic
			}
			got := tc.policy.AuthorizeAny(NewIndex(tc.bindings), principal, ip1, tc.op, rt)
			if got != tc.want {
				t.Errorf("AuthorizeAny = %v, want %v", got, tc.want)
			}
		})
	}
}
