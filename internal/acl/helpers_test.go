package acl

import (
	"slices"
	"strings"
)

const (
	alice = "User:alice"
	bob   = "User:bob"
	ops   = "Group:ops"
	ip1   = "10.0.0.1"
	ip2   = "10.0.0.2"
)

// acl builds a binding on any host; the helpers below vary one field.
func acl(perm Permission, principal string, op Operation, rt ResourceType, pt PatternType, name string) Binding {
	return Binding{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal, Host: Wildcard, Operation: op, Permission: perm}
}

func allowTopic(principal string, op Operation, name string) Binding {
	return acl(PermissionAllow, principal, op, ResourceTopic, PatternLiteral, name)
}

func denyTopic(principal string, op Operation, name string) Binding {
	return acl(PermissionDeny, principal, op, ResourceTopic, PatternLiteral, name)
}

func prefixed(b Binding) Binding { b.PatternType = PatternPrefixed; return b }

func onHost(b Binding, host string) Binding { b.Host = host; return b }

func ptr(s string) *string { return &s }

// grantedBy is what an ALLOW for an operation grants, written from Kafka's
// documentation independently of opCovers: ALL grants everything; READ,
// WRITE, DELETE and ALTER also grant DESCRIBE; ALTER_CONFIGS also grants
// DESCRIBE_CONFIGS.
var grantedBy = map[Operation][]Operation{
	OpRead:         {OpRead, OpDescribe},
	OpWrite:        {OpWrite, OpDescribe},
	OpDelete:       {OpDelete, OpDescribe},
	OpAlter:        {OpAlter, OpDescribe},
	OpAlterConfigs: {OpAlterConfigs, OpDescribeConfigs},
}

// refMatchesResource is the naive resource match: same type, and LITERAL
// same name, LITERAL "*", or PREFIXED prefix of the name.
func refMatchesResource(b Binding, rt ResourceType, name string) bool {
	if b.ResourceType != rt {
		return false
	}
	switch b.PatternType {
	case PatternLiteral:
		return b.ResourceName == name || b.ResourceName == "*"
	case PatternPrefixed:
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}

// refApplies: principal, host and operation of b speak to the request.
func refApplies(b Binding, principal, host string, op Operation) bool {
	if b.Principal != principal && b.Principal != "User:*" {
		return false
	}
	if b.Host != host && b.Host != "*" {
		return false
	}
	if b.Operation == OpAll || b.Operation == op {
		return true
	}
	return b.Permission == PermissionAllow && slices.Contains(grantedBy[b.Operation], op)
}

// refAuthorize is the brute-force reference: it scans every binding.
func refAuthorize(bs []Binding, a Authorizer, principal, host string, op Operation, rt ResourceType, name string) bool {
	if a.SuperUsers[principal] {
		return true
	}
	matched, allowed := false, false
	for _, b := range bs {
		if !refMatchesResource(b, rt, name) {
			continue
		}
		matched = true
		if !refApplies(b, principal, host, op) {
			continue
		}
		if b.Permission == PermissionDeny {
			return false
		}
		allowed = true
	}
	if matched {
		return allowed
	}
	return a.AllowEveryoneIfNoACL
}
