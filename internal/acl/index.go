package acl

import (
	"fmt"
	"slices"
)

// Index is a fixed set of bindings laid out for decisions. Build it once per
// set with NewIndex; it is immutable and safe for concurrent use. A nil
// *Index holds no bindings.
type Index struct {
	n     int
	types [ResourceUser + 1]typeIndex // by ResourceType; only the concrete ones are filled
}

// typeIndex holds the bindings of one resource type.
type typeIndex struct {
	literal  map[string]byPrincipal // LITERAL name (including "*") → its bindings
	prefixed map[string]byPrincipal // PREFIXED name → its bindings
	// prefixLens are the distinct lengths of the PREFIXED names, ascending:
	// the prefixes of a resource name worth looking up.
	prefixLens []int
	all        byPrincipal // every binding of the type, for AuthorizeAny
}

// byPrincipal groups bindings by principal, so a decision reads only those
// of the requester and of "User:*". A present key has at least one binding.
type byPrincipal map[string][]Binding

// NewIndex indexes bindings; exact duplicates count once. It costs
// O(n log n) at most (the sort of distinct prefix lengths). It panics on a
// binding whose resource type, pattern type, operation or permission cannot
// be stored (UNKNOWN, ANY or MATCH): such a binding was never validated
// (STYLE §8). Other Validate refusals (names, principals, hosts, the
// operation table) are not re-checked here, so that bindings stored under
// older rules still load.
func NewIndex(bindings []Binding) *Index {
	ix := &Index{}
	seen := make(map[Binding]struct{}, len(bindings))
	for _, b := range bindings {
		mustBeStorable(b)
		if _, dup := seen[b]; dup {
			continue
		}
		seen[b] = struct{}{}
		ix.types[b.ResourceType].add(b)
	}
	ix.n = len(seen)
	for i := range ix.types {
		ix.types[i].prefixLens = distinctLens(ix.types[i].prefixed)
	}
	return ix
}

// Len is the number of distinct bindings.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return ix.n
}

var emptyType typeIndex

// of returns the bindings of type rt, which the caller has checked is
// concrete.
func (ix *Index) of(rt ResourceType) *typeIndex {
	if ix == nil {
		return &emptyType
	}
	return &ix.types[rt]
}

func (t *typeIndex) add(b Binding) {
	if b.PatternType == PatternLiteral {
		t.literal = addTo(t.literal, b.ResourceName, b)
	} else {
		t.prefixed = addTo(t.prefixed, b.ResourceName, b)
	}
	if t.all == nil {
		t.all = make(byPrincipal)
	}
	t.all[b.Principal] = append(t.all[b.Principal], b)
}

func addTo(m map[string]byPrincipal, name string, b Binding) map[string]byPrincipal {
	if m == nil {
		m = make(map[string]byPrincipal)
	}
	acls := m[name]
	if acls == nil {
		acls = make(byPrincipal)
		m[name] = acls
	}
	acls[b.Principal] = append(acls[b.Principal], b)
	return m
}

// distinctLens returns the distinct lengths of the prefixes, ascending.
func distinctLens(prefixed map[string]byPrincipal) []int {
	set := make(map[int]struct{})
	for name := range prefixed {
		set[len(name)] = struct{}{}
	}
	lens := make([]int, 0, len(set))
	for l := range set {
		lens = append(lens, l)
	}
	slices.Sort(lens)
	return lens
}

func mustBeStorable(b Binding) {
	if !b.ResourceType.concrete() || !b.PatternType.stored() || !b.Operation.concrete() || !b.Permission.concrete() {
		panic(fmt.Sprintf("acl: NewIndex: binding %v cannot be stored (codes %d/%d/%d/%d); bindings are validated before they are stored",
			b, b.ResourceType, b.PatternType, b.Operation, b.Permission))
	}
}
