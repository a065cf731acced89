package acl

import "testing"

// authzCase is one Authorize question: a principal, from a host, doing op to
// the resource (rt, name), under bindings and a policy.
type authzCase struct {
	name      string
	bindings  []Binding
	policy    Authorizer
	principal string // alice unless set
	host      string // ip1 unless set
	op        Operation
	rt        ResourceType // TOPIC unless set
	resource  string       // "foo" unless set
	want      bool
}

func (tc authzCase) ask(ix *Index) bool {
	principal, host, rt, resource := tc.principal, tc.host, tc.rt, tc.resource
	if principal == "" {
		principal = alice
	}
	if host == "" {
		host = ip1
	}
	if rt == ResourceUnknown {
		rt = ResourceTopic
	}
	if resource == "" {
		resource = "foo"
	}
	got := tc.policy.Authorize(ix, principal, host, tc.op, rt, resource)
	// Every table row is also a check of the reference model.
	if ref := refAuthorize(tc.bindings, tc.policy, principal, host, tc.op, rt, resource); ref != got {
		panic("reference model disagrees with Authorize on " + tc.name)
	}
	return got
}

func runAuthz(t *testing.T, cases []authzCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ask(NewIndex(tc.bindings)); got != tc.want {
				t.Errorf("Authorize = %v, want %v", got, tc.want)
			}
		})
	}
}

var (
	openPolicy   = Authorizer{AllowEveryoneIfNoACL: true}
	closedPolicy = Authorizer{}
	superAlice   = Authorizer{SuperUsers: map[string]bool{alice: true}}
)

func TestAuthorizeSuperUsers(t *testing.T) {
	runAuthz(t, []authzCase{
		{name: "super user with no ACLs and default deny", policy: superAlice, op: OpWrite, want: true},
		{name: "super user despite DENY ALL for them", policy: superAlice, op: OpWrite,
			bindings: []Binding{denyTopic(alice, OpAll, "foo"), denyTopic("User:*", OpAll, "*")}, want: true},
		{name: "super user on the cluster", policy: superAlice, op: OpClusterAction, rt: ResourceCluster, resource: ClusterName, want: true},
		{name: "super user match is exact", policy: superAlice, principal: "User:Alice", op: OpRead, want: false},
		{name: "other principals are not super", policy: superAlice, principal: bob, op: OpRead, want: false},
	})
}

func TestAuthorizeNoACLDefault(t *testing.T) {
	runAuthz(t, []authzCase{
		{name: "no ACLs, default allow", policy: openPolicy, op: OpRead, want: true},
		{name: "no ACLs, default deny", policy: closedPolicy, op: OpRead, want: false},
		{name: "ACLs on another topic do not count, default allow", policy: openPolicy, op: OpRead,
			bindings: []Binding{denyTopic(alice, OpAll, "bar"), allowTopic(bob, OpRead, "bar")}, want: true},
		{name: "ACLs on another topic do not count, default deny", policy: closedPolicy, op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "bar")}, want: false},
		{name: "ACLs on a group of the same name do not count", policy: openPolicy, op: OpRead,
			bindings: []Binding{acl(PermissionDeny, alice, OpAll, ResourceGroup, PatternLiteral, "foo")}, want: true},
		{name: "a literal that is a prefix of the name does not count", policy: openPolicy, op: OpRead,
			bindings: []Binding{denyTopic(alice, OpAll, "fo")}, want: true},
		{name: "a literal that extends the name does not count", policy: openPolicy, op: OpRead,
			bindings: []Binding{denyTopic(alice, OpAll, "foob")}, want: true},
		{name: "a longer prefix does not count", policy: openPolicy, op: OpRead,
			bindings: []Binding{prefixed(denyTopic(alice, OpAll, "foob"))}, want: true},
		{name: "prefixed * is not a wildcard", policy: openPolicy, op: OpRead,
			bindings: []Binding{prefixed(denyTopic(alice, OpAll, "*"))}, want: true},
		{name: "an ACL for someone else on the resource ends the default", policy: openPolicy, op: OpRead,
			bindings: []Binding{allowTopic(bob, OpRead, "foo")}, want: false},
		{name: "an ACL for another host on the resource ends the default", policy: openPolicy, op: OpRead,
			bindings: []Binding{onHost(allowTopic(alice, OpRead, "foo"), ip2)}, want: false},
		{name: "an ACL for another operation on the resource ends the default", policy: openPolicy, op: OpRead,
			bindings: []Binding{allowTopic(alice, OpWrite, "foo")}, want: false},
		{name: "a wildcard ACL for someone else ends the default", policy: openPolicy, op: OpRead,
			bindings: []Binding{allowTopic(bob, OpRead, "*")}, want: false},
		{name: "a covering prefix for someone else ends the default", policy: openPolicy, op: OpRead,
			bindings: []Binding{prefixed(allowTopic(bob, OpRead, "f"))}, want: false},
		{name: "a DENY of another operation ends the default", policy: openPolicy, op: OpDescribe,
			bindings: []Binding{denyTopic(alice, OpRead, "foo")}, want: false},
	})
}

func TestAuthorizeDenyBeatsAllow(t *testing.T) {
	runAuthz(t, []authzCase{
		{name: "allow", op: OpRead, bindings: []Binding{allowTopic(alice, OpRead, "foo")}, want: true},
		{name: "deny and allow of the same op", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpRead, "foo")}, want: false},
		{name: "deny ALL beats allow READ", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpAll, "foo")}, want: false},
		{name: "deny READ beats allow ALL", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpAll, "foo"), denyTopic(alice, OpRead, "foo")}, want: false},
		{name: "deny for everyone beats allow for alice", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic("User:*", OpRead, "foo")}, want: false},
		{name: "wildcard-resource deny beats literal allow", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpRead, "*")}, want: false},
		{name: "prefix deny beats literal allow", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), prefixed(denyTopic(alice, OpRead, "f"))}, want: false},
		{name: "literal deny beats wildcard allow", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "*"), denyTopic(alice, OpRead, "foo")}, want: false},
		{name: "deny for bob does not touch alice", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(bob, OpRead, "foo")}, want: true},
		{name: "deny from another host does not touch alice", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), onHost(denyTopic(alice, OpRead, "foo"), ip2)}, want: true},
		{name: "deny from her host", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), onHost(denyTopic(alice, OpRead, "foo"), ip1)}, want: false},
		{name: "deny on another topic does not touch foo", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpAll, "bar")}, want: true},
		{name: "deny alone with default allow", policy: openPolicy, op: OpRead,
			bindings: []Binding{denyTopic(alice, OpRead, "foo")}, want: false},
	})
}

func TestAuthorizeWildcards(t *testing.T) {
	runAuthz(t, []authzCase{
		{name: "wildcard principal allows alice", op: OpRead, bindings: []Binding{allowTopic("User:*", OpRead, "foo")}, want: true},
		{name: "wildcard principal allows a Group principal", principal: ops, op: OpRead,
			bindings: []Binding{allowTopic("User:*", OpRead, "foo")}, want: true},
		{name: "Group:* is not a wildcard", principal: ops, op: OpRead,
			bindings: []Binding{allowTopic("Group:*", OpRead, "foo")}, want: false},
		{name: "principal match is exact", principal: "User:alice2", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo")}, want: false},
		{name: "wildcard host allows any host", host: "192.168.1.1", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo")}, want: true},
		{name: "host must match", host: ip2, op: OpRead,
			bindings: []Binding{onHost(allowTopic(alice, OpRead, "foo"), ip1)}, want: false},
		{name: "host matches", host: ip1, op: OpRead,
			bindings: []Binding{onHost(allowTopic(alice, OpRead, "foo"), ip1)}, want: true},
		{name: "wildcard resource allows any topic", op: OpRead, resource: "anything",
			bindings: []Binding{allowTopic(alice, OpRead, "*")}, want: true},
		{name: "wildcard resource is per type", op: OpRead,
			bindings: []Binding{acl(PermissionAllow, alice, OpRead, ResourceGroup, PatternLiteral, "*")}, want: false},
		{name: "a topic literally named * is matched by the wildcard", op: OpRead, resource: "*",
			bindings: []Binding{allowTopic(alice, OpRead, "*")}, want: true},
		{name: "a topic named * is not matched by a literal foo", op: OpRead, resource: "*",
			bindings: []Binding{allowTopic(alice, OpRead, "foo")}, want: false},
		{name: "all wildcards at once", principal: bob, host: ip2, op: OpWrite, resource: "x",
			bindings: []Binding{allowTopic("User:*", OpAll, "*")}, want: true},
	})
}

func TestAuthorizePrefixed(t *testing.T) {
	runAuthz(t, []authzCase{
		{name: "prefix allows", op: OpRead, resource: "foobar", bindings: []Binding{prefixed(allowTopic(alice, OpRead, "foo"))}, want: true},
		{name: "prefix equal to the name allows", op: OpRead, bindings: []Binding{prefixed(allowTopic(alice, OpRead, "foo"))}, want: true},
		{name: "one-byte prefix allows", op: OpRead, bindings: []Binding{prefixed(allowTopic(alice, OpRead, "f"))}, want: true},
		{name: "longer prefix does not allow", op: OpRead, bindings: []Binding{prefixed(allowTopic(alice, OpRead, "foox"))}, want: false},
		{name: "diverging prefix does not allow", op: OpRead, resource: "fob", bindings: []Binding{prefixed(allowTopic(alice, OpRead, "foo"))}, want: false},
		{name: "a literal is not a prefix", op: OpRead, resource: "foobar", bindings: []Binding{allowTopic(alice, OpRead, "foo")}, want: false},
		{name: "prefix deny beats prefix allow", op: OpRead, resource: "foobar",
			bindings: []Binding{prefixed(allowTopic(alice, OpRead, "foo")), prefixed(denyTopic(alice, OpRead, "foob"))}, want: false},
		{name: "prefix deny on a sibling does not", op: OpRead, resource: "foobar",
			bindings: []Binding{prefixed(allowTopic(alice, OpRead, "foo")), prefixed(denyTopic(alice, OpRead, "fooc"))}, want: true},
		{name: "several prefix lengths", op: OpRead, resource: "abcdef",
			bindings: []Binding{prefixed(allowTopic(bob, OpRead, "a")), prefixed(allowTopic(alice, OpRead, "abc")), prefixed(denyTopic(alice, OpRead, "abcdeg"))}, want: true},
		{name: "group prefixes", op: OpRead, rt: ResourceGroup, resource: "team-a-consumers",
			bindings: []Binding{prefixed(acl(PermissionAllow, alice, OpRead, ResourceGroup, PatternLiteral, "team-a-"))}, want: true},
	})
}

func TestAuthorizeImpliedOperations(t *testing.T) {
	var cases []authzCase
	for _, strong := range []Operation{OpRead, OpWrite, OpDelete, OpAlter} {
		cases = append(cases,
			authzCase{name: "ALLOW " + strong.String() + " implies DESCRIBE", op: OpDescribe,
				bindings: []Binding{allowTopic(alice, strong, "foo")}, want: true},
			authzCase{name: "DENY " + strong.String() + " does not deny DESCRIBE", op: OpDescribe,
				bindings: []Binding{allowTopic(alice, OpDescribe, "foo"), denyTopic(alice, strong, "foo")}, want: true},
		)
	}
	cases = append(cases, []authzCase{
		{name: "ALLOW ALTER_CONFIGS implies DESCRIBE_CONFIGS", op: OpDescribeConfigs,
			bindings: []Binding{allowTopic(alice, OpAlterConfigs, "foo")}, want: true},
		{name: "DENY ALTER_CONFIGS does not deny DESCRIBE_CONFIGS", op: OpDescribeConfigs,
			bindings: []Binding{allowTopic(alice, OpAlterConfigs, "foo"), denyTopic(alice, OpAlterConfigs, "foo")}, want: true},
		{name: "ALLOW and DENY READ: DESCRIBE still allowed", op: OpDescribe,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpRead, "foo")}, want: true},
		{name: "ALLOW and DENY READ: READ denied", op: OpRead,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpRead, "foo")}, want: false},
		{name: "DENY DESCRIBE beats implied DESCRIBE", op: OpDescribe,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpDescribe, "foo")}, want: false},
		{name: "DESCRIBE does not imply READ", op: OpRead, bindings: []Binding{allowTopic(alice, OpDescribe, "foo")}, want: false},
		{name: "CREATE does not imply DESCRIBE", op: OpDescribe, bindings: []Binding{allowTopic(alice, OpCreate, "foo")}, want: false},
		{name: "ALTER_CONFIGS does not imply DESCRIBE", op: OpDescribe, bindings: []Binding{allowTopic(alice, OpAlterConfigs, "foo")}, want: false},
		{name: "ALTER does not imply ALTER_CONFIGS", op: OpAlterConfigs, bindings: []Binding{allowTopic(alice, OpAlter, "foo")}, want: false},
		{name: "ALTER does not imply DESCRIBE_CONFIGS", op: OpDescribeConfigs, bindings: []Binding{allowTopic(alice, OpAlter, "foo")}, want: false},
		{name: "DESCRIBE_CONFIGS does not imply ALTER_CONFIGS", op: OpAlterConfigs,
			bindings: []Binding{allowTopic(alice, OpDescribeConfigs, "foo")}, want: false},
		{name: "WRITE does not imply READ", op: OpRead, bindings: []Binding{allowTopic(alice, OpWrite, "foo")}, want: false},
		{name: "ALLOW ALL implies every operation", op: OpClusterAction, rt: ResourceCluster, resource: ClusterName,
			bindings: []Binding{acl(PermissionAllow, alice, OpAll, ResourceCluster, PatternLiteral, ClusterName)}, want: true},
		{name: "DENY ALL denies DESCRIBE", op: OpDescribe,
			bindings: []Binding{allowTopic(alice, OpRead, "foo"), denyTopic(alice, OpAll, "foo")}, want: false},
		{name: "IDEMPOTENT_WRITE on the cluster", op: OpIdempotentWrite, rt: ResourceCluster, resource: ClusterName,
			bindings: []Binding{acl(PermissionAllow, alice, OpIdempotentWrite, ResourceCluster, PatternLiteral, ClusterName)}, want: true},
		{name: "a requested ALL needs an ALL binding", op: OpAll, bindings: []Binding{allowTopic(alice, OpRead, "foo")}, want: false},
		{name: "implied DESCRIBE through a wildcard principal and a prefix", op: OpDescribe, resource: "foobar",
			bindings: []Binding{prefixed(allowTopic("User:*", OpWrite, "foo"))}, want: true},
	}...)
	runAuthz(t, cases)
}
