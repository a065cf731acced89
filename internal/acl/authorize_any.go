package acl

// AuthorizeAny reports whether principal, connecting from host, may perform
// op on at least one resource of type rt: KIP-679's authorizeByResourceType,
// which lets an idempotent producer without IDEMPOTENT_WRITE on the cluster
// call InitProducerId when it may WRITE some topic. The rules, and where
// they differ from Kafka's, are in the package doc. It reads only the
// bindings of type rt for the requester and "User:*". It panics if op or rt
// is UNKNOWN or ANY.
func (a Authorizer) AuthorizeAny(ix *Index, principal, host string, op Operation, rt ResourceType) bool {
	mustBeAction(op, rt)
	if a.SuperUsers[principal] {
		return true
	}
	t := ix.of(rt)
	q := request{principal: principal, host: host, op: op}
	var s anySummary
	s.add(t.all[principal], q)
	if principal != WildcardPrincipal {
		s.add(t.all[WildcardPrincipal], q)
	}
	if s.denyLiteral[Wildcard] {
		return false // every name is denied
	}
	if s.allowWildcard {
		return true // some name escapes every DENY (prefixes never cover all names)
	}
	for _, name := range s.allowLiterals {
		if !s.denyLiteral[name] && !s.prefixDenied(name) {
			return true
		}
	}
	for _, prefix := range s.allowPrefixes {
		if !s.prefixDenied(prefix) {
			return true // the names under prefix outside any DENY
		}
	}
	// A name that no binding of type rt matches falls to the default; one
	// exists unless a LITERAL "*" binding (for anyone) matches every name.
	return a.AllowEveryoneIfNoACL && t.literal[Wildcard] == nil
}

// anySummary is the bindings of one type that apply to a request, by
// pattern.
type anySummary struct {
	allowWildcard bool
	allowLiterals []string
	allowPrefixes []string
	denyLiteral   map[string]bool
	denyPrefix    map[string]bool
	denyPrefixLen map[int]bool
}

func (s *anySummary) add(bindings []Binding, q request) {
	for _, b := range bindings {
		if !q.applies(b) {
			continue
		}
		switch {
		case b.Permission == PermissionAllow && b.PatternType == PatternLiteral && b.ResourceName == Wildcard:
			s.allowWildcard = true
		case b.Permission == PermissionAllow && b.PatternType == PatternLiteral:
			s.allowLiterals = append(s.allowLiterals, b.ResourceName)
		case b.Permission == PermissionAllow:
			s.allowPrefixes = append(s.allowPrefixes, b.ResourceName)
		case b.PatternType == PatternLiteral:
			s.denyLiteral = setAdd(s.denyLiteral, b.ResourceName)
		default:
			s.denyPrefix = setAdd(s.denyPrefix, b.ResourceName)
			s.denyPrefixLen = setAdd(s.denyPrefixLen, len(b.ResourceName))
		}
	}
}

// prefixDenied reports whether a DENY prefix is a prefix of name, so that
// it denies name and everything under it.
func (s *anySummary) prefixDenied(name string) bool {
	for l := range s.denyPrefixLen {
		if l <= len(name) && s.denyPrefix[name[:l]] {
			return true
		}
	}
	return false
}

func setAdd[K comparable](m map[K]bool, k K) map[K]bool {
	if m == nil {
		m = make(map[K]bool)
	}
	m[k] = true
	return m
}
