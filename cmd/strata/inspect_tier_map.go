package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// The tier map of `strata inspect tier`: which offsets of [logStart,
// logEnd) live where. Pure: buildTierMap and checkCoverage do no I/O.

// tierSpan is a run of offsets held by the same remote segments and the
// same number of local segments.
type tierSpan struct {
	Range base.Range
	// Remote are the COPY_FINISHED segments holding Range: one, or none,
	// or (a double count) more.
	Remote []remotemeta.RemoteSegment
	// Local is how many local segments hold Range: one, or none, or (a
	// broken log) more.
	Local int
}

// where names the span's home: "remote", "local", "remote+local" or "gap".
func (s tierSpan) where() string {
	switch {
	case len(s.Remote) > 0 && s.Local > 0:
		return "remote+local"
	case len(s.Remote) > 0:
		return "remote"
	case s.Local > 0:
		return "local"
	}
	return "gap"
}

// buildTierMap splits log, the log's offsets [logStart, logEnd), into
// spans at every boundary of a COPY_FINISHED segment of finished and of a
// local segment of local, and merges neighbours held the same way. Spans
// are ascending and tile log; parts of segments outside log are left out.
func buildTierMap(log base.Range, finished []remotemeta.RemoteSegment, local []base.Range) []tierSpan {
	if log.Empty() {
		return nil
	}
	cuts := []base.Offset{log.Start, log.End}
	for _, s := range finished {
		cuts = append(cuts, s.Range.Start, s.Range.End)
	}
	for _, r := range local {
		cuts = append(cuts, r.Start, r.End)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var spans []tierSpan
	for i := 0; i+1 < len(cuts); i++ {
		piece := base.Range{Start: cuts[i], End: cuts[i+1]}
		if piece.Start < log.Start || piece.End > log.End {
			continue
		}
		span := tierSpan{Range: piece}
		for _, s := range finished {
			if contains(s.Range, piece) {
				span.Remote = append(span.Remote, s)
			}
		}
		for _, r := range local {
			if contains(r, piece) {
				span.Local++
			}
		}
		if n := len(spans); n > 0 && sameHolders(spans[n-1], span) {
			spans[n-1].Range.End = piece.End
			continue
		}
		spans = append(spans, span)
	}
	return spans
}

// contains reports whether outer holds all of inner.
func contains(outer, inner base.Range) bool {
	return outer.Start <= inner.Start && inner.End <= outer.End
}

func sameHolders(a, b tierSpan) bool {
	return a.Local == b.Local && slices.EqualFunc(a.Remote, b.Remote, func(x, y remotemeta.RemoteSegment) bool { return x.ID == y.ID })
}

// checkCoverage checks that spans cover log exactly once: no offset in no
// segment (a gap), none in two COPY_FINISHED segments or two local
// segments (a double count). Being both remote and local is fine: that
// is a segment tiered and not yet expired locally. The error names every
// problem, in offset order.
func checkCoverage(log base.Range, spans []tierSpan) error {
	var problems []string
	next := log.Start
	for _, s := range spans {
		if s.Range.Start > next {
			problems = append(problems, fmt.Sprintf("gap %v: in no segment", base.Range{Start: next, End: s.Range.Start}))
		}
		next = max(next, s.Range.End)
		switch {
		case s.Local == 0 && len(s.Remote) == 0:
			problems = append(problems, fmt.Sprintf("gap %v: in no segment", s.Range))
		case len(s.Remote) > 1:
			problems = append(problems, fmt.Sprintf("double count %v: in %d COPY_FINISHED segments (%s)", s.Range, len(s.Remote), segmentIDs(s.Remote)))
		case s.Local > 1:
			problems = append(problems, fmt.Sprintf("double count %v: in %d local segments", s.Range, s.Local))
		}
	}
	if next < log.End {
		problems = append(problems, fmt.Sprintf("gap %v: in no segment", base.Range{Start: next, End: log.End}))
	}
	if len(problems) > 0 {
		return fmt.Errorf("coverage: %v is broken: %s", log, strings.Join(problems, "; "))
	}
	return nil
}

func segmentIDs(segs []remotemeta.RemoteSegment) string {
	ids := make([]string, len(segs))
	for i, s := range segs {
		ids[i] = shortID(s.ID)
	}
	return strings.Join(ids, ", ")
}

// shortID is the first 4 bytes of a segment id in hex, as in a listing.
func shortID(id remotemeta.SegmentID) string {
	return fmt.Sprintf("%x…", id[:4])
}
