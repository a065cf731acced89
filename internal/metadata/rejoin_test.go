package metadata

import (
	"testing"

	"pgregory.net/rapid"
)

func TestDecideFreshStart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		voters   int
		answered []uint64
		want     freshStart
	}{
		{"one voter needs nobody", 1, nil, freshBootstrap},
		{"alone of three waits", 3, nil, freshWait},
		{"a fresh peer makes a majority of three", 3, []uint64{0}, freshBootstrap},
		{"a bootstrapped peer without a leader yet is fresh", 3, []uint64{bootstrapIndex}, freshBootstrap},
		{"a peer with a history means rejoin", 3, []uint64{bootstrapIndex + 1}, freshRejoin},
		{"one history among fresh peers is enough", 5, []uint64{0, 0, 7}, freshRejoin},
		{"two of five wait", 5, []uint64{0}, freshWait},
		{"three of five bootstrap", 5, []uint64{0, 1}, freshBootstrap},
		{"half of four waits", 4, []uint64{0}, freshWait},
		{"three of four bootstrap", 4, []uint64{0, 0}, freshBootstrap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decideFreshStart(tc.voters, tc.answered); got != tc.want {
				t.Fatalf("decideFreshStart(%d, %v) = %v, want %v", tc.voters, tc.answered, got, tc.want)
			}
		})
	}
}

// TestDecideFreshStartProperties: a voter never bootstraps while any voter
// holds a history, and never decides without hearing from a majority.
func TestDecideFreshStartProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		voters := rapid.IntRange(1, 7).Draw(t, "voters")
		answered := rapid.SliceOfN(rapid.Uint64Range(0, 5), 0, voters-1).Draw(t, "answered")
		got := decideFreshStart(voters, answered)
		history := false
		for _, last := range answered {
			history = history || last > bootstrapIndex
		}
		switch {
		case history && got != freshRejoin:
			t.Fatalf("a voter holds a history, decided %v", got)
		case !history && got == freshRejoin:
			t.Fatal("rejoin without any history")
		case got == freshBootstrap && 2*(len(answered)+1) <= voters:
			t.Fatalf("bootstrap after hearing %d of %d voters", len(answered)+1, voters)
		case !history && got == freshWait && 2*(len(answered)+1) > voters:
			t.Fatalf("waits with %d of %d voters fresh", len(answered)+1, voters)
		}
	})
}
