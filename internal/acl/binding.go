package acl

import (
	"slices"
	"strings"
)

// Binding is one ACL: a resource pattern (ResourceType, ResourceName,
// PatternType) and an access control entry (Principal, Host, Operation,
// Permission), as Kafka's AclBinding. A stored binding passes Validate.
type Binding struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType // LITERAL or PREFIXED in a stored binding
	Principal    string      // "Type:name", e.g. "User:alice"; "User:*" is every principal
	Host         string      // "*" or an IP address
	Operation    Operation
	Permission   Permission
}

func (b Binding) String() string {
	return "(pattern=ResourcePattern(resourceType=" + b.ResourceType.String() +
		", name=" + b.ResourceName + ", patternType=" + b.PatternType.String() +
		"), entry=(principal=" + b.Principal + ", host=" + b.Host +
		", operation=" + b.Operation.String() + ", permissionType=" + b.Permission.String() + "))"
}

// Validate reports why CreateAcls must refuse b, or nil. The checks run in
// Kafka's order: the broker's (AclApis: CLUSTER name, empty name), then the
// controller's (AclControlManager.validateNewAcl: resource type, pattern
// type, operation, permission, principal), then ours (principal parts,
// host, operation for the resource type). The error is an *Error.
func (b Binding) Validate() error {
	if err := b.validate(); err != nil {
		return err
	}
	return nil
}

func (b Binding) validate() *Error {
	if b.ResourceType == ResourceCluster && b.ResourceName != ClusterName {
		return invalid("The only valid name for the CLUSTER resource is " + ClusterName)
	}
	if b.ResourceName == "" {
		return invalid("Invalid empty resource name")
	}
	if !b.ResourceType.concrete() {
		return invalid("Invalid resourceType " + b.ResourceType.String())
	}
	if !b.PatternType.stored() {
		return invalid("Invalid patternType " + b.PatternType.String())
	}
	if !b.Operation.concrete() {
		return invalid("Invalid operation " + b.Operation.String())
	}
	if !b.Permission.concrete() {
		return invalid("Invalid permissionType " + b.Permission.String())
	}
	if !strings.Contains(b.Principal, ":") {
		return invalid("Could not parse principal from `" + clip(b.Principal) + "` " +
			"(no colon is present separating the principal type from the principal name)")
	}
	if !validPrincipal(b.Principal) {
		return invalid("expected a string in format principalType:principalName but got " + clip(b.Principal))
	}
	if b.Host == "" {
		return invalid("Invalid empty host")
	}
	if ops := supportedOperations(b.ResourceType); b.Operation != OpAll && !slices.Contains(ops, b.Operation) {
		return invalid("ResourceType " + b.ResourceType.String() + " only supports operations " + opList(ops))
	}
	return nil
}

// validPrincipal: "Type:name" split at the first colon (Kafka's
// SecurityUtils.parseKafkaPrincipal), both parts non-empty. Kafka accepts
// any type (User, Group, ...); the name may itself contain colons.
func validPrincipal(s string) bool {
	typ, name, found := strings.Cut(s, ":")
	return found && typ != "" && name != ""
}

// supportedOperations is which operations apply to each resource type, as
// kafka-acls.sh checks them (AclEntry.supportedOperations). ALL applies to
// every type in addition. Kafka's broker does not check this; we do, so that
// an ACL that can never take effect is refused rather than stored.
func supportedOperations(t ResourceType) []Operation {
	switch t {
	case ResourceTopic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []Operation{OpRead, OpDescribe, OpDelete}
	case ResourceCluster:
		return []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case ResourceTransactionalID:
		return []Operation{OpDescribe, OpWrite}
	case ResourceDelegationToken:
		return []Operation{OpDescribe}
	case ResourceUser:
		return []Operation{OpCreateTokens, OpDescribeTokens}
	}
	return nil
}

func opList(ops []Operation) string {
	names := make([]string, 0, len(ops)+1)
	for _, o := range ops {
		names = append(names, o.String())
	}
	return strings.Join(append(names, OpAll.String()), ", ")
}
