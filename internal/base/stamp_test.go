package base

import "testing"

func TestStampLater(t *testing.T) {
	none := Stamp{}
	at := func(ts int64, o Offset) Stamp { return Stamp{Ts: ts, Offset: o, Ok: true} }
	for _, tc := range []struct {
		name string
		a, b Stamp
		want Stamp
	}{
		{"both empty", none, none, none},
		{"one empty", none, at(5, 7), at(5, 7)},
		{"larger timestamp wins, even at a later offset", at(5, 3), at(9, 70), at(9, 70)},
		{"larger timestamp wins at an earlier offset", at(5, 70), at(9, 3), at(9, 3)},
		{"a tie: the earlier offset (remote before local)", at(9, 40), at(9, 12), at(9, 12)},
		{"the same batch in both tiers", at(9, 12), at(9, 12), at(9, 12)},
		{"negative timestamps still compare", at(-5, 1), at(-3, 9), at(-3, 9)},
	} {
		if got := tc.a.Later(tc.b); got != tc.want {
			t.Errorf("%s: %+v.Later(%+v) = %+v, want %+v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if got := tc.b.Later(tc.a); got != tc.want {
			t.Errorf("%s (swapped): %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
