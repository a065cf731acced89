package acl

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

func TestParseSuperUsers(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "   ", want: nil},
		{in: "User:admin", want: []string{"User:admin"}},
		{in: "User:a;User:b", want: []string{"User:a", "User:b"}},
		{in: " User:a ; ;User:b ;", want: []string{"User:a", "User:b"}},
		{in: "Group:ops;User:CN=broker,O=acme", want: []string{"Group:ops", "User:CN=broker,O=acme"}},
		{in: "User:a:b", want: []string{"User:a:b"}},           // the name may hold colons
		{in: "User:a,User:b", want: []string{"User:a,User:b"}}, // comma is not a separator
		{in: "admin", wantErr: true},
		{in: "User:", wantErr: true},
		{in: ":admin", wantErr: true},
		{in: "User:a;admin", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSuperUsers(tc.in)
			if tc.wantErr {
				var aerr *Error
				if !errors.As(err, &aerr) {
					t.Fatalf("ParseSuperUsers(%q) = %v, %v; want an *Error", tc.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSuperUsers(%q): %v", tc.in, err)
			}
			if got == nil {
				t.Fatalf("ParseSuperUsers(%q) = nil map", tc.in)
			}
			keys := slices.Sorted(maps.Keys(got))
			if !slices.Equal(keys, tc.want) {
				t.Errorf("ParseSuperUsers(%q) = %v, want %v", tc.in, keys, tc.want)
			}
		})
	}
}
