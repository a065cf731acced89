package tier

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Gauges are Kafka's KIP-963 gauges of one partition's tier plus the
// dangling segments (DESIGN §4), from one view and one listing of the
// local segments.
type Gauges struct {
	// Loaded reports that the view held the quorum's metadata; every other
	// field is zero when it did not (the answer is unknown, not zero).
	Loaded bool
	// CopyLagKnown reports that tieredNext is known (TieredNext); the copy
	// lag is zero when it is not.
	CopyLagKnown bool
	// CopyLagSegments and CopyLagBytes (RemoteCopyLagSegments/Bytes) are
	// the rolled local segments not yet wholly tiered: those ending after
	// tieredNext, the active segment excluded. A segment straddling
	// tieredNext counts whole.
	CopyLagSegments int64
	CopyLagBytes    int64
	// DeleteLagSegments and DeleteLagBytes (RemoteDeleteLagSegments/Bytes)
	// are the remote segments whose deletion is decided but not finished:
	// DELETE_STARTED, DANGLING, and COPY_FINISHED wholly below the log
	// start (retention moved the log start past them; the next pass
	// deletes them). COPY_STARTED is left out: a copy may be in flight.
	DeleteLagSegments int64
	DeleteLagBytes    int64
	// RemoteLogSizeBytes is the bytes of the COPY_FINISHED segments of
	// every lineage: the log data held in the bucket.
	RemoteLogSizeBytes int64
	// RemoteLogMetadataCount is the remote segment metadata entries that
	// are not DELETE_FINISHED: the entries Kafka's metadata cache would
	// list for the partition, whatever their state.
	RemoteLogMetadataCount int64
	// DanglingSegments and DanglingBytes are the DANGLING segments: failed
	// copies and deletes whose objects are deleted again every pass.
	DanglingSegments int64
	DanglingBytes    int64
}

// GaugesOf computes the gauges of a partition whose remote metadata is
// view, whose local segments are local (ascending, the active one last),
// whose leader-epoch cache is lineage and whose log starts at logStart.
// It is a pure function: the broker calls it when metrics are scraped.
func GaugesOf(view PartitionView, local []LocalSegment, lineage []base.EpochStart, logStart base.Offset) Gauges {
	if !view.Loaded() {
		return Gauges{}
	}
	g := Gauges{Loaded: true}
	for _, s := range view.segs {
		if s.State != remotemeta.DeleteFinished {
			g.RemoteLogMetadataCount++
		}
		switch s.State {
		case remotemeta.CopyFinished:
			g.RemoteLogSizeBytes += s.SizeBytes
			if s.Range.End <= logStart {
				g.addDeleteLag(s)
			}
		case remotemeta.Dangling:
			g.DanglingSegments++
			g.DanglingBytes += s.SizeBytes
			g.addDeleteLag(s)
		case remotemeta.DeleteStarted:
			g.addDeleteLag(s)
		}
	}
	tiered := view.TieredNext(lineage)
	g.CopyLagKnown = tiered.Known
	if !tiered.Known {
		return g
	}
	for _, s := range local {
		if !s.Active && (!tiered.Any || s.NextOffset > tiered.Next) {
			g.CopyLagSegments++
			g.CopyLagBytes += s.SizeBytes
		}
	}
	return g
}

func (g *Gauges) addDeleteLag(s remotemeta.RemoteSegment) {
	g.DeleteLagSegments++
	g.DeleteLagBytes += s.SizeBytes
}
