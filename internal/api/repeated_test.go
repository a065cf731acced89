package api

import (
	"slices"
	"testing"
)

func TestRepeated(t *testing.T) {
	rs := []configResource{
		{resourceTopic, "a"}, {resourceBroker, "a"}, {resourceTopic, "b"},
		{resourceTopic, "a"}, {resourceBroker, ""}, {resourceGroup, "a"}, {resourceBroker, ""},
	}
	want := []bool{true, false, false, true, true, false, true}
	if got := repeated(rs); !slices.Equal(got, want) {
		t.Fatalf("repeated = %v, want %v", got, want)
	}
	if got := repeated([]configResource(nil)); len(got) != 0 {
		t.Fatalf("repeated([]configResource(nil)) = %v", got)
	}
}

func TestRepeatedNames(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		want []bool
	}{
		{nil, []bool{}},
		{[]string{"a"}, []bool{false}},
		{[]string{"a", "a"}, []bool{true, true}},
		{[]string{"a", "b", "c", "b"}, []bool{false, true, false, true}},
		{[]string{"", "a", ""}, []bool{true, false, true}},
	} {
		if got := repeated(tc.keys); !slices.Equal(got, tc.want) {
			t.Errorf("repeated(%q) = %v, want %v", tc.keys, got, tc.want)
		}
	}
}
