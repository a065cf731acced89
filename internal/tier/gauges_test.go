package tier

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestGaugesOf(t *testing.T) {
	const (
		fin  = remotemeta.CopyFinished
		st   = remotemeta.CopyStarted
		dang = remotemeta.Dangling
		del  = remotemeta.DeleteStarted
		done = remotemeta.DeleteFinished
	)
	local := []LocalSegment{lseg(0, 10, 100), lseg(10, 20, 200), lseg(20, 30, 300), active(30, 35, 50)}
	cases := []struct {
		name     string
		view     PartitionView
		local    []LocalSegment
		lineage  []base.EpochStart
		logStart base.Offset
		want     Gauges
	}{
		{
			name: "view not loaded: nothing is known", view: PartitionView{}, local: local, lineage: epoch0,
			want: Gauges{},
		},
		{
			name: "nothing tiered: every rolled segment lags, the active one not", view: mustView(),
			local: local, lineage: epoch0,
			want: Gauges{Loaded: true, CopyLagKnown: true, CopyLagSegments: 3, CopyLagBytes: 600},
		},
		{
			name: "two tiered: the third lags", view: mustView(rseg(1, 0, 10, 100, fin), rseg(2, 10, 20, 200, fin)),
			local: local, lineage: epoch0,
			want: Gauges{
				Loaded: true, CopyLagKnown: true, CopyLagSegments: 1, CopyLagBytes: 300,
				RemoteLogSizeBytes: 300, RemoteLogMetadataCount: 2,
			},
		},
		{
			name: "a local segment straddling tieredNext counts whole", view: mustView(rseg(1, 0, 15, 150, fin)),
			local: local, lineage: epoch0,
			want: Gauges{
				Loaded: true, CopyLagKnown: true, CopyLagSegments: 2, CopyLagBytes: 500,
				RemoteLogSizeBytes: 150, RemoteLogMetadataCount: 1,
			},
		},
		{
			name: "only the active segment left: no lag", view: mustView(rseg(1, 0, 30, 600, fin)),
			local: []LocalSegment{active(30, 35, 50)}, lineage: epoch0,
			want: Gauges{Loaded: true, CopyLagKnown: true, RemoteLogSizeBytes: 600, RemoteLogMetadataCount: 1},
		},
		{
			name: "dangling and delete-started are delete lag; a copy in flight is not",
			view: mustView(
				rseg(1, 0, 10, 100, done), rseg(2, 0, 10, 100, fin), rseg(3, 10, 20, 200, dang),
				rseg(4, 10, 20, 200, del), rseg(5, 10, 20, 200, st),
			),
			local: local, lineage: epoch0,
			want: Gauges{
				Loaded: true, CopyLagKnown: true, CopyLagSegments: 2, CopyLagBytes: 500,
				DeleteLagSegments: 2, DeleteLagBytes: 400, RemoteLogSizeBytes: 100, RemoteLogMetadataCount: 4,
				DanglingSegments: 1, DanglingBytes: 200,
			},
		},
		{
			name:  "finished segments below the log start are delete lag",
			view:  mustView(rseg(1, 0, 10, 100, fin), rseg(2, 10, 20, 200, fin), rseg(3, 20, 30, 300, fin)),
			local: []LocalSegment{active(30, 35, 50)}, lineage: epoch0, logStart: 20,
			want: Gauges{
				Loaded: true, CopyLagKnown: true, DeleteLagSegments: 2, DeleteLagBytes: 300,
				RemoteLogSizeBytes: 600, RemoteLogMetadataCount: 3,
			},
		},
		{
			name: "tier unknown (no lineage for finished segments): no copy lag, sizes still known",
			view: mustView(rseg(1, 0, 10, 100, fin)), local: local, lineage: nil,
			want: Gauges{Loaded: true, RemoteLogSizeBytes: 100, RemoteLogMetadataCount: 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := GaugesOf(c.view, c.local, c.lineage, c.logStart); got != c.want {
				t.Errorf("GaugesOf =\n %+v, want\n %+v", got, c.want)
			}
		})
	}
}
