package broker

import "testing"

func TestPickDirtiest(t *testing.T) {
	tests := []struct {
		name   string
		cands  []cleanerCandidate
		want   int
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"one", []cleanerCandidate{{ratio: 0.6}}, 0, true},
		{"highest ratio", []cleanerCandidate{{ratio: 0.6}, {ratio: 0.9}, {ratio: 0.7}}, 1, true},
		{"past max lag beats a dirtier log", []cleanerCandidate{{ratio: 0.9}, {ratio: 0.1, forced: true}}, 1, true},
		{"among forced, the dirtiest", []cleanerCandidate{{ratio: 0.3, forced: true}, {ratio: 0.99}, {ratio: 0.4, forced: true}}, 2, true},
		{"ties keep the first", []cleanerCandidate{{ratio: 0.5}, {ratio: 0.5}}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pickDirtiest(tt.cands)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Fatalf("pickDirtiest = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
