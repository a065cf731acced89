package acl

import (
	"errors"
	"strings"
	"testing"
)

func validBinding() Binding { return allowTopic(alice, OpRead, "orders") }

func TestBindingValidateRefusals(t *testing.T) {
	with := func(f func(*Binding)) Binding { b := validBinding(); f(&b); return b }
	for _, tc := range []struct {
		name string
		b    Binding
		want string // message, exactly
	}{
		{"unknown resource type", with(func(b *Binding) { b.ResourceType = ResourceUnknown }), "Invalid resourceType UNKNOWN"},
		{"any resource type", with(func(b *Binding) { b.ResourceType = ResourceAny }), "Invalid resourceType ANY"},
		{"unknown resource type code", with(func(b *Binding) { b.ResourceType = 42 }), "Invalid resourceType UNKNOWN"},
		{"unknown pattern type", with(func(b *Binding) { b.PatternType = PatternUnknown }), "Invalid patternType UNKNOWN"},
		{"any pattern type", with(func(b *Binding) { b.PatternType = PatternAny }), "Invalid patternType ANY"},
		{"match pattern type", with(func(b *Binding) { b.PatternType = PatternMatch }), "Invalid patternType MATCH"},
		{"unknown pattern type code", with(func(b *Binding) { b.PatternType = -3 }), "Invalid patternType UNKNOWN"},
		{"unknown operation", with(func(b *Binding) { b.Operation = OpUnknown }), "Invalid operation UNKNOWN"},
		{"any operation", with(func(b *Binding) { b.Operation = OpAny }), "Invalid operation ANY"},
		{"unknown operation code", with(func(b *Binding) { b.Operation = 99 }), "Invalid operation UNKNOWN"},
		{"unknown permission", with(func(b *Binding) { b.Permission = PermissionUnknown }), "Invalid permissionType UNKNOWN"},
		{"any permission", with(func(b *Binding) { b.Permission = PermissionAny }), "Invalid permissionType ANY"},
		{"empty resource name", with(func(b *Binding) { b.ResourceName = "" }), "Invalid empty resource name"},
		{"cluster not named kafka-cluster", with(func(b *Binding) { b.ResourceType, b.Operation, b.ResourceName = ResourceCluster, OpAlter, "my-cluster" }),
			"The only valid name for the CLUSTER resource is kafka-cluster"},
		{"cluster prefix", with(func(b *Binding) {
			b.ResourceType, b.Operation, b.ResourceName, b.PatternType = ResourceCluster, OpAlter, "kafka", PatternPrefixed
		}), "The only valid name for the CLUSTER resource is kafka-cluster"},
		{"principal without colon", with(func(b *Binding) { b.Principal = "alice" }),
			"Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)"},
		{"principal with empty name", with(func(b *Binding) { b.Principal = "User:" }),
			"expected a string in format principalType:principalName but got User:"},
		{"principal with empty type", with(func(b *Binding) { b.Principal = ":alice" }),
			"expected a string in format principalType:principalName but got :alice"},
		{"empty host", with(func(b *Binding) { b.Host = "" }), "Invalid empty host"},
		{"operation not for groups", with(func(b *Binding) { b.ResourceType, b.Operation = ResourceGroup, OpWrite }),
			"ResourceType GROUP only supports operations READ, DESCRIBE, DELETE, ALL"},
		{"operation not for topics", with(func(b *Binding) { b.Operation = OpClusterAction }),
			"ResourceType TOPIC only supports operations READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS, ALL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Validate()
			var aerr *Error
			if !errors.As(err, &aerr) {
				t.Fatalf("Validate(%v) = %v, want an *Error", tc.b, err)
			}
			if aerr.Message != tc.want {
				t.Errorf("message = %q, want %q", aerr.Message, tc.want)
			}
			if err.Error() != "acl: "+tc.want {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

func TestBindingValidateAccepts(t *testing.T) {
	for _, b := range []Binding{
		validBinding(),
		prefixed(validBinding()),
		allowTopic("User:*", OpAll, "*"),
		allowTopic("Group:ops", OpWrite, "orders"),
		allowTopic("User:CN=a:b", OpWrite, "orders"), // the name may hold colons
		onHost(denyTopic(alice, OpRead, "orders"), "192.168.0.7"),
		acl(PermissionAllow, alice, OpIdempotentWrite, ResourceCluster, PatternLiteral, ClusterName),
		acl(PermissionAllow, alice, OpAll, ResourceCluster, PatternLiteral, ClusterName),
		acl(PermissionAllow, alice, OpCreateTokens, ResourceUser, PatternLiteral, "bob"),
	} {
		if err := b.Validate(); err != nil {
			t.Errorf("Validate(%v) = %v, want nil", b, err)
		}
	}
}

// TestBindingValidateOperationTable checks every (resource type, operation)
// pair against Kafka's table (AclEntry.supportedOperations, as documented),
// written out here independently.
func TestBindingValidateOperationTable(t *testing.T) {
	supported := map[ResourceType]string{
		ResourceTopic:           "READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS ALL",
		ResourceGroup:           "READ DESCRIBE DELETE ALL",
		ResourceCluster:         "CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE ALL",
		ResourceTransactionalID: "WRITE DESCRIBE ALL",
		ResourceDelegationToken: "DESCRIBE ALL",
		ResourceUser:            "CREATE_TOKENS DESCRIBE_TOKENS ALL",
	}
	for rt, list := range supported {
		want := map[string]bool{}
		for _, name := range strings.Fields(list) {
			want[name] = true
		}
		for op := OpAll; op <= OpDescribeTokens; op++ {
			b := acl(PermissionDeny, alice, op, rt, PatternLiteral, "x")
			if rt == ResourceCluster {
				b.ResourceName = ClusterName
			}
			if got := b.Validate() == nil; got != want[op.String()] {
				t.Errorf("Validate(%v on %v) ok = %v, want %v", op, rt, got, want[op.String()])
			}
		}
	}
}

func TestBindingValidateClipsLongPrincipal(t *testing.T) {
	b := validBinding()
	b.Principal = strings.Repeat("x", 40000)
	err := b.Validate()
	if err == nil || len(err.Error()) > 400 {
		t.Fatalf("Validate = %d-byte error, want a short one", len(err.Error()))
	}
}
