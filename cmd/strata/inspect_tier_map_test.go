package main

import (
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func rng(start, end base.Offset) base.Range { return base.Range{Start: start, End: end} }

func finishedSeg(n byte, start, end base.Offset) remotemeta.RemoteSegment {
	return remotemeta.RemoteSegment{ID: remotemeta.SegmentID{0: n, 15: 1}, Range: rng(start, end), State: remotemeta.CopyFinished}
}

func TestTierMapCoverage(t *testing.T) {
	tests := []struct {
		name     string
		log      base.Range
		finished []remotemeta.RemoteSegment
		local    []base.Range
		// wantWhere is each span's range and where(), in order.
		wantWhere []string
		// wantErr are substrings of the coverage error; nil: complete.
		wantErr []string
	}{
		{
			name:      "fine: remote, both, local",
			log:       rng(0, 1720),
			finished:  []remotemeta.RemoteSegment{finishedSeg(1, 0, 1200), finishedSeg(2, 1200, 1500)},
			local:     []base.Range{rng(1200, 1500), rng(1500, 1720)},
			wantWhere: []string{"[0, 1200) remote", "[1200, 1500) remote+local", "[1500, 1720) local"},
		},
		{
			name:      "fine: local only",
			log:       rng(0, 300),
			local:     []base.Range{rng(0, 100), rng(100, 300)},
			wantWhere: []string{"[0, 300) local"},
		},
		{
			name:      "fine: the log start inside a remote segment",
			log:       rng(50, 200),
			finished:  []remotemeta.RemoteSegment{finishedSeg(1, 0, 100)},
			local:     []base.Range{rng(100, 200)},
			wantWhere: []string{"[50, 100) remote", "[100, 200) local"},
		},
		{
			name:      "fine: a local segment straddling the tiered end",
			log:       rng(0, 300),
			finished:  []remotemeta.RemoteSegment{finishedSeg(1, 0, 150)},
			local:     []base.Range{rng(100, 300)},
			wantWhere: []string{"[0, 100) remote", "[100, 150) remote+local", "[150, 300) local"},
		},
		{
			name: "fine: an empty log",
			log:  rng(70, 70),
		},
		{
			name:      "gap between remote and local",
			log:       rng(0, 200),
			finished:  []remotemeta.RemoteSegment{finishedSeg(1, 0, 100)},
			local:     []base.Range{rng(150, 200)},
			wantWhere: []string{"[0, 100) remote", "[100, 150) gap", "[150, 200) local"},
			wantErr:   []string{"gap [100, 150)"},
		},
		{
			name:      "gap at the start: the log start below everything",
			log:       rng(0, 200),
			local:     []base.Range{rng(100, 200)},
			wantWhere: []string{"[0, 100) gap", "[100, 200) local"},
			wantErr:   []string{"gap [0, 100)"},
		},
		{
			name:      "overlap of two COPY_FINISHED segments",
			log:       rng(0, 300),
			finished:  []remotemeta.RemoteSegment{finishedSeg(1, 0, 100), finishedSeg(2, 50, 150)},
			local:     []base.Range{rng(150, 300)},
			wantWhere: []string{"[0, 50) remote", "[50, 100) remote", "[100, 150) remote", "[150, 300) local"},
			wantErr:   []string{"double count [50, 100)", "2 COPY_FINISHED segments", "01000000…", "02000000…"},
		},
		{
			name:      "overlap of two local segments",
			log:       rng(0, 200),
			local:     []base.Range{rng(0, 150), rng(100, 200)},
			wantWhere: []string{"[0, 100) local", "[100, 150) local", "[150, 200) local"},
			wantErr:   []string{"double count [100, 150)", "2 local segments"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spans := buildTierMap(tc.log, tc.finished, tc.local)
			var got []string
			for _, s := range spans {
				got = append(got, s.Range.String()+" "+s.where())
			}
			if strings.Join(got, "; ") != strings.Join(tc.wantWhere, "; ") {
				t.Errorf("spans\n got %q\nwant %q", got, tc.wantWhere)
			}
			err := checkCoverage(tc.log, spans)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("coverage: %v, want complete", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("coverage complete, want an error with %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("coverage error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestCheckCoverageOfSpansThatDoNotTile: spans that leave out part of the
// log (not what buildTierMap makes) are gaps too.
func TestCheckCoverageOfSpansThatDoNotTile(t *testing.T) {
	spans := []tierSpan{{Range: rng(10, 20), Local: 1}, {Range: rng(30, 40), Local: 1}}
	err := checkCoverage(rng(0, 50), spans)
	for _, w := range []string{"gap [0, 10)", "gap [20, 30)", "gap [40, 50)"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("coverage error %v lacks %q", err, w)
		}
	}
}
