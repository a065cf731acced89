package quota

import (
	"errors"
	"testing"
)

func TestParseFilterRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		comps []WireComponent
		want  error
	}{
		{"type twice", []WireComponent{{TypeUser, MatchSpecified, nil}, {TypeUser, MatchDefault, nil}}, ErrInvalidFilter},
		{"unknown type", []WireComponent{{"group", MatchSpecified, nil}}, ErrUnsupportedEntityType},
		{"exact without a name", []WireComponent{{TypeUser, MatchExact, nil}}, ErrInvalidFilter},
		{"default with a name", []WireComponent{{TypeUser, MatchDefault, strp("a")}}, ErrInvalidFilter},
		{"specified with a name", []WireComponent{{TypeUser, MatchSpecified, strp("a")}}, ErrInvalidFilter},
		{"unknown match type", []WireComponent{{TypeUser, 7, nil}}, ErrInvalidFilter},
		{"ip with user", []WireComponent{{TypeIP, MatchSpecified, nil}, {TypeUser, MatchSpecified, nil}}, ErrInvalidFilter},
		{"exact type twice", []WireComponent{{TypeUser, MatchExact, strp("a")}, {TypeUser, MatchExact, strp("b")}}, ErrInvalidFilter},
		{"default then exact", []WireComponent{{TypeClientID, MatchDefault, nil}, {TypeClientID, MatchExact, strp("b")}}, ErrInvalidFilter},
		{"ip with client id", []WireComponent{{TypeClientID, MatchExact, strp("app")}, {TypeIP, MatchDefault, nil}}, ErrInvalidFilter},
	} {
		if _, err := ParseFilter(tc.comps, false); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestFilterMatches(t *testing.T) {
	alice := Entity{User: NamedPart("alice")}
	defUser := Entity{User: DefaultPart()}
	aliceApp := Entity{User: NamedPart("alice"), ClientID: NamedPart("app")}
	app := Entity{ClientID: NamedPart("app")}
	defClient := Entity{ClientID: DefaultPart()}
	local := Entity{IP: NamedPart("127.0.0.1")}
	defIP := Entity{IP: DefaultPart()}
	all := []Entity{alice, defUser, aliceApp, app, defClient, local, defIP}
	for _, tc := range []struct {
		name   string
		comps  []WireComponent
		strict bool
		want   []Entity
	}{
		{"no component matches all", nil, false, all},
		{"no component strict matches none", nil, true, nil},
		{"exact user", []WireComponent{{TypeUser, MatchExact, strp("alice")}}, false, []Entity{alice, aliceApp}},
		{"a user, not an ip", []WireComponent{{TypeUser, MatchSpecified, nil}}, false, []Entity{alice, defUser, aliceApp}},
		{"exact user strict", []WireComponent{{TypeUser, MatchExact, strp("alice")}}, true, []Entity{alice}},
		{"default user", []WireComponent{{TypeUser, MatchDefault, nil}}, false, []Entity{defUser}},
		{"any user", []WireComponent{{TypeUser, MatchSpecified, nil}}, true, []Entity{alice, defUser}},
		{"any client id", []WireComponent{{TypeClientID, MatchSpecified, nil}}, false, []Entity{aliceApp, app, defClient}},
		{"user and client", []WireComponent{{TypeUser, MatchSpecified, nil}, {TypeClientID, MatchExact, strp("app")}}, true, []Entity{aliceApp}},
		{"any ip", []WireComponent{{TypeIP, MatchSpecified, nil}}, false, []Entity{local, defIP}},
		{"any ip strict", []WireComponent{{TypeIP, MatchSpecified, nil}}, true, []Entity{local, defIP}},
		{"exact ip", []WireComponent{{TypeIP, MatchExact, strp("127.0.0.1")}}, false, []Entity{local}},
		{"other ip", []WireComponent{{TypeIP, MatchExact, strp("10.0.0.1")}}, false, nil},
		{"default ip", []WireComponent{{TypeIP, MatchDefault, nil}}, true, []Entity{defIP}},
	} {
		f, err := ParseFilter(tc.comps, tc.strict)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if f.Matches(Entity{}) {
			t.Errorf("%s: matched the entity with no part", tc.name)
		}
		var got []Entity
		for _, e := range all {
			if f.Matches(e) {
				got = append(got, e)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: matched %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: matched %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}
