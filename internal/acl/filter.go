package acl

import "strings"

// Filter selects bindings, as Kafka's AclBindingFilter (DescribeAcls,
// DeleteAcls). A nil string and the ANY values match everything; every other
// field must be equal, except the resource name under PatternMatch.
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType // ANY, MATCH, LITERAL, PREFIXED
	Principal    *string     // exact: "User:*" selects only bindings for "User:*"
	Host         *string     // exact: "*" selects only bindings for "*"
	Operation    Operation
	Permission   Permission
}

// Matches reports whether f selects b (AclBindingFilter.matches).
//   - LITERAL or PREFIXED selects bindings of that pattern type with exactly
//     that name (a PREFIXED filter "fo" does not select PREFIXED "f").
//   - ANY selects bindings of either pattern type with exactly that name.
//   - MATCH selects the bindings that would apply to a resource called that
//     name: LITERAL with the name, LITERAL "*", and PREFIXED with a prefix of
//     the name. With a nil name, MATCH selects every pattern.
func (f Filter) Matches(b Binding) bool {
	return f.matchesPattern(b) && f.matchesEntry(b)
}

func (f Filter) matchesPattern(b Binding) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != b.ResourceType {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != b.PatternType {
		return false
	}
	if f.ResourceName == nil {
		return true
	}
	if f.PatternType != PatternMatch {
		return *f.ResourceName == b.ResourceName
	}
	return patternMatchesName(b.PatternType, b.ResourceName, *f.ResourceName)
}

func (f Filter) matchesEntry(b Binding) bool {
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != OpAny && f.Operation != b.Operation {
		return false
	}
	return f.Permission == PermissionAny || f.Permission == b.Permission
}

// patternMatchesName reports whether a binding's pattern covers the resource
// called name: the one rule shared by MATCH filters and Authorize.
func patternMatchesName(pt PatternType, pattern, name string) bool {
	switch pt {
	case PatternLiteral:
		return pattern == name || pattern == Wildcard
	case PatternPrefixed:
		return strings.HasPrefix(name, pattern)
	}
	return false
}

// Validate reports why DescribeAcls or DeleteAcls must refuse f, or nil: an
// UNKNOWN (or unknown code) anywhere, in Kafka's words
// (AclControlManager.validateFilter). The error is an *Error.
func (f Filter) Validate() error {
	if !f.ResourceType.filterable() || !f.PatternType.filterable() {
		return invalid("Unknown patternFilter.")
	}
	if !f.Operation.filterable() || !f.Permission.filterable() {
		return invalid("Unknown entryFilter.")
	}
	return nil
}
