package acl

// ResourceType is what an ACL protects, with Kafka's wire codes
// (org.apache.kafka.common.resource.ResourceType). UNKNOWN and ANY appear
// only in filters.
type ResourceType int8

const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is how a binding's resource name matches resources
// (org.apache.kafka.common.resource.PatternType, KIP-290). A stored binding
// is LITERAL or PREFIXED; ANY and MATCH appear only in filters.
type PatternType int8

const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is what a principal does to a resource
// (org.apache.kafka.common.acl.AclOperation). ANY appears only in filters.
type Operation int8

const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is whether a binding allows or denies
// (org.apache.kafka.common.acl.AclPermissionType). ANY appears only in
// filters.
type Permission int8

const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

const (
	// ClusterName is the name of the one CLUSTER resource.
	ClusterName = "kafka-cluster"
	// Wildcard is the LITERAL resource name that matches every resource of
	// its type, and the host that matches every host.
	Wildcard = "*"
	// WildcardPrincipal matches every principal, whatever its type.
	WildcardPrincipal = "User:*"
	// Anonymous is the principal of an unauthenticated connection.
	Anonymous = "User:ANONYMOUS"
)

var (
	resourceTypeNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternTypeNames  = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	operationNames    = [...]string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"}
	permissionNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

// codeName is Kafka's name for a code; a code outside the table is UNKNOWN,
// as Kafka's fromCode makes it.
func codeName(names []string, code int8) string {
	if code < 0 || int(code) >= len(names) {
		return names[0]
	}
	return names[code]
}

func (t ResourceType) String() string { return codeName(resourceTypeNames[:], int8(t)) }
func (p PatternType) String() string  { return codeName(patternTypeNames[:], int8(p)) }
func (o Operation) String() string    { return codeName(operationNames[:], int8(o)) }
func (p Permission) String() string   { return codeName(permissionNames[:], int8(p)) }

// concrete: a resource type a binding or a request can name.
func (t ResourceType) concrete() bool { return t >= ResourceTopic && t <= ResourceUser }

// filterable: a resource type a filter can name (Kafka refuses UNKNOWN).
func (t ResourceType) filterable() bool { return t >= ResourceAny && t <= ResourceUser }

func (p PatternType) stored() bool     { return p == PatternLiteral || p == PatternPrefixed }
func (p PatternType) filterable() bool { return p >= PatternAny && p <= PatternPrefixed }

func (o Operation) concrete() bool   { return o >= OpAll && o <= OpDescribeTokens }
func (o Operation) filterable() bool { return o >= OpAny && o <= OpDescribeTokens }

func (p Permission) concrete() bool   { return p == PermissionDeny || p == PermissionAllow }
func (p Permission) filterable() bool { return p >= PermissionAny && p <= PermissionAllow }
