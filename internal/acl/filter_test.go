package acl

import (
	"errors"
	"slices"
	"testing"
)

// filterCorpus is a set of bindings that the filter table selects from,
// by label.
var filterCorpus = map[string]Binding{
	"lit-foo":       allowTopic(alice, OpRead, "foo"),
	"lit-foobar":    allowTopic(alice, OpRead, "foobar"),
	"pre-fo":        prefixed(allowTopic(alice, OpRead, "fo")),
	"pre-foo":       prefixed(denyTopic(bob, OpWrite, "foo")),
	"pre-star":      prefixed(allowTopic(alice, OpRead, "*")),
	"lit-star":      allowTopic("User:*", OpAll, "*"),
	"group-foo":     acl(PermissionAllow, alice, OpRead, ResourceGroup, PatternLiteral, "foo"),
	"foo-ip1":       onHost(denyTopic(alice, OpDescribe, "foo"), ip1),
	"cluster-alter": acl(PermissionAllow, ops, OpAlter, ResourceCluster, PatternLiteral, ClusterName),
}

func anyFilter() Filter {
	return Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}
}

func TestFilterMatches(t *testing.T) {
	f := func(mod func(*Filter)) Filter { x := anyFilter(); mod(&x); return x }
	topic := func(pt PatternType, name *string) Filter {
		return f(func(x *Filter) { x.ResourceType, x.PatternType, x.ResourceName = ResourceTopic, pt, name })
	}
	all := []string{"cluster-alter", "foo-ip1", "group-foo", "lit-foo", "lit-foobar", "lit-star", "pre-fo", "pre-foo", "pre-star"}
	for _, tc := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"ANY everything", anyFilter(), all},
		{"resource type", f(func(x *Filter) { x.ResourceType = ResourceGroup }), []string{"group-foo"}},
		{"LITERAL nil name: every literal topic", topic(PatternLiteral, nil), []string{"foo-ip1", "lit-foo", "lit-foobar", "lit-star"}},
		{"LITERAL name is exact, no wildcard", topic(PatternLiteral, ptr("foo")), []string{"foo-ip1", "lit-foo"}},
		{"LITERAL * is the wildcard binding only", topic(PatternLiteral, ptr("*")), []string{"lit-star"}},
		{"PREFIXED nil name: every prefix", topic(PatternPrefixed, nil), []string{"pre-fo", "pre-foo", "pre-star"}},
		{"PREFIXED name is exact", topic(PatternPrefixed, ptr("fo")), []string{"pre-fo"}},
		{"PREFIXED name is not a prefix query", topic(PatternPrefixed, ptr("f")), nil},
		{"ANY pattern with name: exact name, both types", topic(PatternAny, ptr("foo")), []string{"foo-ip1", "lit-foo", "pre-foo"}},
		{"ANY pattern, any resource type", f(func(x *Filter) { x.ResourceName = ptr("foo") }), []string{"foo-ip1", "group-foo", "lit-foo", "pre-foo"}},
		{"MATCH nil name: everything of the type", topic(PatternMatch, nil), []string{"foo-ip1", "lit-foo", "lit-foobar", "lit-star", "pre-fo", "pre-foo", "pre-star"}},
		{"MATCH foo: literal, wildcard, covering prefixes", topic(PatternMatch, ptr("foo")), []string{"foo-ip1", "lit-foo", "lit-star", "pre-fo", "pre-foo"}},
		{"MATCH foobar", topic(PatternMatch, ptr("foobar")), []string{"lit-foobar", "lit-star", "pre-fo", "pre-foo"}},
		{"MATCH fox", topic(PatternMatch, ptr("fox")), []string{"lit-star", "pre-fo"}},
		{"MATCH f: longer prefixes do not cover", topic(PatternMatch, ptr("f")), []string{"lit-star"}},
		{"MATCH *: wildcard and the * prefix", topic(PatternMatch, ptr("*")), []string{"lit-star", "pre-star"}},
		{"MATCH with ANY type", f(func(x *Filter) { x.PatternType, x.ResourceName = PatternMatch, ptr("foo") }),
			[]string{"foo-ip1", "group-foo", "lit-foo", "lit-star", "pre-fo", "pre-foo"}},
		{"principal is exact", f(func(x *Filter) { x.Principal = ptr(bob) }), []string{"pre-foo"}},
		{"principal User:* is exact, not a wildcard", f(func(x *Filter) { x.Principal = ptr("User:*") }), []string{"lit-star"}},
		{"host is exact", f(func(x *Filter) { x.Host = ptr(ip1) }), []string{"foo-ip1"}},
		{"host * is exact, not a wildcard", f(func(x *Filter) { x.Host = ptr("*") }),
			[]string{"cluster-alter", "group-foo", "lit-foo", "lit-foobar", "lit-star", "pre-fo", "pre-foo", "pre-star"}},
		{"operation is exact", f(func(x *Filter) { x.Operation = OpWrite }), []string{"pre-foo"}},
		{"operation ALL selects ALL bindings only", f(func(x *Filter) { x.Operation = OpAll }), []string{"lit-star"}},
		{"operation DESCRIBE does not select READ", f(func(x *Filter) { x.Operation = OpDescribe }), []string{"foo-ip1"}},
		{"permission", f(func(x *Filter) { x.Permission = PermissionDeny }), []string{"foo-ip1", "pre-foo"}},
		{"all fields", Filter{ResourceType: ResourceTopic, ResourceName: ptr("foo"), PatternType: PatternLiteral,
			Principal: ptr(alice), Host: ptr("*"), Operation: OpRead, Permission: PermissionAllow}, []string{"lit-foo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for label, b := range filterCorpus {
				if tc.filter.Matches(b) {
					got = append(got, label)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("matched %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFilterValidate(t *testing.T) {
	f := func(mod func(*Filter)) Filter { x := anyFilter(); mod(&x); return x }
	for _, tc := range []struct {
		name   string
		filter Filter
		want   string // "" for valid
	}{
		{"ANY everything", anyFilter(), ""},
		{"MATCH is fine", f(func(x *Filter) { x.PatternType = PatternMatch }), ""},
		{"concrete values", Filter{ResourceType: ResourceUser, PatternType: PatternPrefixed, Operation: OpDescribeTokens, Permission: PermissionDeny}, ""},
		{"zero filter is all UNKNOWN", Filter{}, "Unknown patternFilter."},
		{"unknown resource type", f(func(x *Filter) { x.ResourceType = ResourceUnknown }), "Unknown patternFilter."},
		{"unknown resource type code", f(func(x *Filter) { x.ResourceType = 8 }), "Unknown patternFilter."},
		{"unknown pattern type", f(func(x *Filter) { x.PatternType = PatternUnknown }), "Unknown patternFilter."},
		{"unknown pattern type code", f(func(x *Filter) { x.PatternType = 5 }), "Unknown patternFilter."},
		{"unknown operation", f(func(x *Filter) { x.Operation = OpUnknown }), "Unknown entryFilter."},
		{"unknown operation code", f(func(x *Filter) { x.Operation = -1 }), "Unknown entryFilter."},
		{"operation code past DESCRIBE_TOKENS", f(func(x *Filter) { x.Operation = OpDescribeTokens + 1 }), "Unknown entryFilter."},
		{"unknown permission", f(func(x *Filter) { x.Permission = PermissionUnknown }), "Unknown entryFilter."},
		{"unknown permission code", f(func(x *Filter) { x.Permission = 4 }), "Unknown entryFilter."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.filter.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var aerr *Error
			if !errors.As(err, &aerr) || aerr.Message != tc.want {
				t.Fatalf("Validate = %v, want *Error %q", err, tc.want)
			}
		})
	}
}
