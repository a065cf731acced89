package acl

import (
	"testing"

	"pgregory.net/rapid"
)

// Small alphabets make bindings collide with requests often, and are small
// enough that every property asks every question of the universe (about
// 800) of each drawn set of bindings. Names share prefixes; none contains
// '~', which the AuthorizeAny property uses for names no binding names.
var (
	genNames        = []string{"a", "ab", "abc", "b", "ba", "*"}
	genRequestNames = []string{"a", "ab", "abc", "abd", "b", "ba", "c", "*"}
	genPrincipals   = []string{alice, bob, ops, "User:*"}
	genRequesters   = []string{alice, bob, ops}
	genHosts        = []string{"*", ip1, ip2}
	genRequestHosts = []string{ip1, ip2}
	genTypes        = []ResourceType{ResourceTopic, ResourceGroup}
	// Operations the implication rules are about, plus ALL and a bystander.
	genOps        = []Operation{OpAll, OpRead, OpWrite, OpDelete, OpAlter, OpDescribe, OpDescribeConfigs, OpAlterConfigs, OpCreate}
	genRequestOps = []Operation{OpRead, OpWrite, OpDescribe, OpDescribeConfigs, OpAlterConfigs, OpCreate}
)

func genBinding(t *rapid.T, label string) Binding {
	return Binding{
		ResourceType: rapid.SampledFrom(genTypes).Draw(t, label+"type"),
		ResourceName: rapid.SampledFrom(genNames).Draw(t, label+"name"),
		PatternType:  rapid.SampledFrom([]PatternType{PatternLiteral, PatternPrefixed}).Draw(t, label+"pattern"),
		Principal:    rapid.SampledFrom(genPrincipals).Draw(t, label+"principal"),
		Host:         rapid.SampledFrom(genHosts).Draw(t, label+"host"),
		Operation:    rapid.SampledFrom(genOps).Draw(t, label+"op"),
		Permission:   rapid.SampledFrom([]Permission{PermissionAllow, PermissionDeny}).Draw(t, label+"perm"),
	}
}

func genBindings(t *rapid.T) []Binding {
	n := rapid.IntRange(0, 20).Draw(t, "nBindings")
	bs := make([]Binding, 0, n)
	for range n {
		bs = append(bs, genBinding(t, "b"))
	}
	return bs
}

func genAuthorizer(t *rapid.T) Authorizer {
	a := Authorizer{AllowEveryoneIfNoACL: rapid.Bool().Draw(t, "allowEveryone")}
	if rapid.IntRange(0, 4).Draw(t, "withSuper") == 0 {
		a.SuperUsers = map[string]bool{rapid.SampledFrom(genRequesters).Draw(t, "super"): true}
	}
	return a
}

type question struct {
	principal, host string
	op              Operation
	rt              ResourceType
	name            string
}

func (q question) String() string {
	return q.principal + " from " + q.host + " " + q.op.String() + " " + q.rt.String() + " " + q.name
}

// everyQuestion is every request of the universe, with the resource name
// left empty when noName.
func everyQuestion(noName bool) []question {
	names := genRequestNames
	if noName {
		names = []string{""}
	}
	var qs []question
	for _, principal := range genRequesters {
		for _, host := range genRequestHosts {
			for _, op := range genRequestOps {
				for _, rt := range genTypes {
					for _, name := range names {
						qs = append(qs, question{principal, host, op, rt, name})
					}
				}
			}
		}
	}
	return qs
}

var (
	allQuestions     = everyQuestion(false)
	allTypeQuestions = everyQuestion(true)
)

func (q question) authorize(a Authorizer, ix *Index) bool {
	return a.Authorize(ix, q.principal, q.host, q.op, q.rt, q.name)
}

func TestAuthorizeMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs := genBindings(t)
		a := genAuthorizer(t)
		ix := NewIndex(bs)
		for _, q := range allQuestions {
			got := a.Authorize(ix, q.principal, q.host, q.op, q.rt, q.name)
			if want := refAuthorize(bs, a, q.principal, q.host, q.op, q.rt, q.name); got != want {
				t.Fatalf("Authorize(%v) = %v, reference says %v", q, got, want)
			}
		}
	})
}

// TestAddingDenyNeverAllows: a DENY only takes permissions away, the
// no-ACL default included.
func TestAddingDenyNeverAllows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs, a := genBindings(t), genAuthorizer(t)
		d := genBinding(t, "deny")
		d.Permission = PermissionDeny
		before, after := NewIndex(bs), NewIndex(append(bs, d))
		for _, q := range allQuestions {
			if !q.authorize(a, before) && q.authorize(a, after) {
				t.Fatalf("adding %v allowed %v", d, q)
			}
		}
	})
}

// TestAddingAllowDeniesOnlyThroughDefault: an ALLOW only takes away what
// the no-ACL default gave. Precisely, if the request was allowed and is
// denied after adding the ALLOW x, then the policy has
// AllowEveryoneIfNoACL, the requester is no super user, no binding matched
// the resource before, x matches the resource, and x does not apply to the
// request (principal, host or operation differ).
func TestAddingAllowDeniesOnlyThroughDefault(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs, a := genBindings(t), genAuthorizer(t)
		x := genBinding(t, "allow")
		x.Permission = PermissionAllow
		before, after := NewIndex(bs), NewIndex(append(bs, x))
		for _, q := range allQuestions {
			if !q.authorize(a, before) || q.authorize(a, after) {
				continue
			}
			matchedBefore := false
			for _, b := range bs {
				matchedBefore = matchedBefore || refMatchesResource(b, q.rt, q.name)
			}
			switch {
			case !a.AllowEveryoneIfNoACL, a.SuperUsers[q.principal], matchedBefore:
				t.Fatalf("adding %v denied %v, which the default did not allow", x, q)
			case !refMatchesResource(x, q.rt, q.name):
				t.Fatalf("adding %v, which does not match the resource, denied %v", x, q)
			case refApplies(x, q.principal, q.host, q.op):
				t.Fatalf("adding %v, which applies, denied %v", x, q)
			}
		}
	})
}

// TestAuthorizeAnyIsSomeNameAllowed: AuthorizeAny is true exactly when
// Authorize is true for some name. The candidates are every name a binding
// carries, each prefix followed by a byte no binding uses, and a name no
// binding covers but the wildcard; any other name decides like one of them.
func TestAuthorizeAnyIsSomeNameAllowed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs, a := genBindings(t), genAuthorizer(t)
		ix := NewIndex(bs)
		candidates := []string{"~fresh"}
		for _, b := range bs {
			candidates = append(candidates, b.ResourceName, b.ResourceName+"~")
		}
		for _, q := range allTypeQuestions {
			want := false
			for _, name := range candidates {
				want = want || a.Authorize(ix, q.principal, q.host, q.op, q.rt, name)
			}
			if got := a.AuthorizeAny(ix, q.principal, q.host, q.op, q.rt); got != want {
				t.Fatalf("AuthorizeAny(%v) = %v, but some name allowed = %v", q, got, want)
			}
		}
	})
}

// TestMatchFilterSelectsWhatAuthorizeReads: a MATCH filter on a resource
// selects exactly the bindings that match that resource in a decision.
func TestMatchFilterSelectsWhatAuthorizeReads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBinding(t, "b")
		for _, rt := range genTypes {
			for _, name := range genRequestNames {
				f := Filter{ResourceType: rt, ResourceName: &name, PatternType: PatternMatch, Operation: OpAny, Permission: PermissionAny}
				if got, want := f.Matches(b), refMatchesResource(b, rt, name); got != want {
					t.Fatalf("MATCH %q on %v: Matches(%v) = %v, want %v", name, rt, b, got, want)
				}
			}
		}
	})
}

// TestExactFilterSelectsOnlyItsBinding: a filter with every field set from a
// binding (and a concrete pattern type) selects that binding and no other.
func TestExactFilterSelectsOnlyItsBinding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b1, b2 := genBinding(t, "b1"), genBinding(t, "b2")
		f := Filter{ResourceType: b1.ResourceType, ResourceName: &b1.ResourceName, PatternType: b1.PatternType,
			Principal: &b1.Principal, Host: &b1.Host, Operation: b1.Operation, Permission: b1.Permission}
		if err := f.Validate(); err != nil {
			t.Fatalf("exact filter invalid: %v", err)
		}
		if !f.Matches(b1) || f.Matches(b2) != (b1 == b2) {
			t.Fatalf("filter from %v: Matches(itself) = %v, Matches(%v) = %v", b1, f.Matches(b1), b2, f.Matches(b2))
		}
	})
}
