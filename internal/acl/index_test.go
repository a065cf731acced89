package acl

import (
	"fmt"
	"strings"
	"testing"
)

func TestIndexLenCountsDistinctBindings(t *testing.T) {
	a, b := allowTopic(alice, OpRead, "foo"), prefixed(allowTopic(alice, OpRead, "foo"))
	for _, tc := range []struct {
		bindings []Binding
		want     int
	}{
		{nil, 0},
		{[]Binding{a}, 1},
		{[]Binding{a, a, a}, 1},
		{[]Binding{a, b, a, b}, 2},
		{[]Binding{a, onHost(a, ip1), denyTopic(alice, OpRead, "foo")}, 3},
	} {
		if got := NewIndex(tc.bindings).Len(); got != tc.want {
			t.Errorf("NewIndex(%v).Len() = %d, want %d", tc.bindings, got, tc.want)
		}
	}
}

func TestNilIndexIsEmpty(t *testing.T) {
	var ix *Index
	if ix.Len() != 0 {
		t.Fatalf("nil Len = %d", ix.Len())
	}
	for _, allow := range []bool{true, false} {
		a := Authorizer{AllowEveryoneIfNoACL: allow}
		if got := a.Authorize(ix, alice, ip1, OpRead, ResourceTopic, "foo"); got != allow {
			t.Errorf("Authorize(nil index, default %v) = %v", allow, got)
		}
		if got := a.AuthorizeAny(ix, alice, ip1, OpWrite, ResourceTopic); got != allow {
			t.Errorf("AuthorizeAny(nil index, default %v) = %v", allow, got)
		}
	}
}

// TestDuplicateBindingsDoNotChangeDecisions: a duplicated DENY still denies
// and a duplicated ALLOW still allows.
func TestDuplicateBindingsDoNotChangeDecisions(t *testing.T) {
	d := denyTopic(alice, OpRead, "foo")
	a := allowTopic(alice, OpRead, "foo")
	ix := NewIndex([]Binding{a, d, a, d})
	if (Authorizer{}).Authorize(ix, alice, ip1, OpRead, ResourceTopic, "foo") {
		t.Error("duplicated DENY no longer denies")
	}
	if !(Authorizer{}).Authorize(ix, alice, ip1, OpDescribe, ResourceTopic, "foo") {
		t.Error("duplicated ALLOW no longer implies DESCRIBE")
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("%s did not panic", what)
		} else if !strings.HasPrefix(fmt.Sprint(r), "acl: ") {
			t.Errorf("%s panicked with %v, want an acl: assertion message", what, r)
		}
	}()
	f()
}

func TestNewIndexPanicsOnUnstorableBinding(t *testing.T) {
	good := allowTopic(alice, OpRead, "foo")
	for name, mod := range map[string]func(*Binding){
		"resource type ANY":     func(b *Binding) { b.ResourceType = ResourceAny },
		"resource type UNKNOWN": func(b *Binding) { b.ResourceType = ResourceUnknown },
		"resource type code 99": func(b *Binding) { b.ResourceType = 99 },
		"pattern MATCH":         func(b *Binding) { b.PatternType = PatternMatch },
		"pattern ANY":           func(b *Binding) { b.PatternType = PatternAny },
		"operation ANY":         func(b *Binding) { b.Operation = OpAny },
		"operation UNKNOWN":     func(b *Binding) { b.Operation = OpUnknown },
		"permission ANY":        func(b *Binding) { b.Permission = PermissionAny },
	} {
		b := good
		mod(&b)
		mustPanic(t, "NewIndex with "+name, func() { NewIndex([]Binding{good, b}) })
	}
}

func TestAuthorizePanicsOnFilterValues(t *testing.T) {
	ix := NewIndex(nil)
	a := Authorizer{}
	mustPanic(t, "Authorize op ANY", func() { a.Authorize(ix, alice, ip1, OpAny, ResourceTopic, "foo") })
	mustPanic(t, "Authorize op UNKNOWN", func() { a.Authorize(ix, alice, ip1, OpUnknown, ResourceTopic, "foo") })
	mustPanic(t, "Authorize type ANY", func() { a.Authorize(ix, alice, ip1, OpRead, ResourceAny, "foo") })
	mustPanic(t, "Authorize type 99", func() { a.Authorize(ix, alice, ip1, OpRead, 99, "foo") })
	mustPanic(t, "AuthorizeAny op ANY", func() { a.AuthorizeAny(ix, alice, ip1, OpAny, ResourceTopic) })
	mustPanic(t, "AuthorizeAny type UNKNOWN", func() { a.AuthorizeAny(ix, alice, ip1, OpWrite, ResourceUnknown) })
}

// BenchmarkAuthorizeLargeIndex: a decision over 100k bindings reads only
// the few that can match, so it costs about as much as over ten.
func BenchmarkAuthorizeLargeIndex(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		var bs []Binding
		for i := range n {
			name := fmt.Sprintf("topic-%d", i)
			bs = append(bs, allowTopic(fmt.Sprintf("User:u%d", i%100), OpRead, name))
			if i%10 == 0 {
				bs = append(bs, prefixed(allowTopic(alice, OpWrite, name[:len(name)-1])))
			}
		}
		ix := NewIndex(bs)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Authorizer{}.Authorize(ix, alice, ip1, OpDescribe, ResourceTopic, "topic-5")
			}
		})
	}
}
