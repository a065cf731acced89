package retention

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// Segment is one local or remote log segment as the planner sees it.
type Segment struct {
	Range          base.Range // [BaseOffset, NextOffset)
	SizeBytes      int64
	MaxTimestampMs int64
}

// Limit is an optional non-negative limit. The zero value is unlimited;
// the wire's -1 never reaches this package.
type Limit struct {
	Value int64
	Set   bool
}

// LimitOf returns a set limit of v.
func LimitOf(v int64) Limit { return Limit{Value: v, Set: true} }

// Policy is a topic's effective retention. The local limits are already
// resolved from -2 ("same as total") by the caller.
type Policy struct {
	RetentionBytes      Limit
	RetentionMs         Limit
	LocalRetentionBytes Limit
	LocalRetentionMs    Limit
}

// Tiered is what the metadata quorum says about the remote tier. The three
// states are explicit: Known=false (metadata not loaded: plan nothing that
// depends on it), Known && !Any (nothing tiered; every local-only topic),
// Known && Any (the tier holds everything below Next, exclusive).
type Tiered struct {
	Known bool
	Any   bool
	Next  base.Offset // tieredNext, exclusive; meaningful only if Known && Any
}

// TieredUnknown is the state of a partition whose tier metadata is not loaded.
func TieredUnknown() Tiered { return Tiered{} }

// NothingTiered is the state of a partition with nothing in the remote tier.
func NothingTiered() Tiered { return Tiered{Known: true} }

// TieredUpTo is the state of a partition tiered up to next, exclusive.
func TieredUpTo(next base.Offset) Tiered { return Tiered{Known: true, Any: true, Next: next} }

// Snapshot is the immutable input of one retention pass.
type Snapshot struct {
	LogStart      base.Offset
	HighWatermark base.Offset
	// Local is ascending and non-overlapping; the last one is the active
	// segment. There is always at least one.
	Local []Segment
	// Remote holds the COPY_FINISHED segments of the current lineage,
	// ascending and non-overlapping. Ignored when Tiered.Known is false.
	Remote []Segment
	Tiered Tiered
	// DeleteRecordsTo is the log start requested by DeleteRecords, or 0.
	// It is <= HighWatermark (the api layer checks it).
	DeleteRecordsTo base.Offset
}

var errInvalid = errors.New("retention: invalid input")

// Validate checks the invariants Plan relies on.
func (p Policy) Validate() error {
	for _, l := range []struct {
		name string
		l    Limit
	}{
		{"retention.bytes", p.RetentionBytes}, {"retention.ms", p.RetentionMs},
		{"local.retention.bytes", p.LocalRetentionBytes}, {"local.retention.ms", p.LocalRetentionMs},
	} {
		if l.l.Set && l.l.Value < 0 {
			return fmt.Errorf("%w: %s = %d", errInvalid, l.name, l.l.Value)
		}
	}
	return nil
}

// Validate checks the invariants Plan relies on.
func (s Snapshot) Validate() error {
	if len(s.Local) == 0 {
		return fmt.Errorf("%w: no local segment (the active segment always exists)", errInvalid)
	}
	if err := validateSegments("local", s.Local); err != nil {
		return err
	}
	logEnd := s.Local[len(s.Local)-1].Range.End
	if s.LogStart < 0 || s.LogStart > s.HighWatermark || s.HighWatermark > logEnd {
		return fmt.Errorf("%w: want 0 <= logStart %d <= highWatermark %d <= logEnd %d",
			errInvalid, s.LogStart, s.HighWatermark, logEnd)
	}
	if s.DeleteRecordsTo < 0 || s.DeleteRecordsTo > s.HighWatermark {
		return fmt.Errorf("%w: deleteRecordsTo %d outside [0, highWatermark %d]",
			errInvalid, s.DeleteRecordsTo, s.HighWatermark)
	}
	if !s.Tiered.Known {
		return nil
	}
	if err := validateSegments("remote", s.Remote); err != nil {
		return err
	}
	if !s.Tiered.Any {
		if len(s.Remote) != 0 {
			return fmt.Errorf("%w: nothing tiered but %d remote segments", errInvalid, len(s.Remote))
		}
		return nil
	}
	if s.Tiered.Next > s.HighWatermark {
		return fmt.Errorf("%w: tieredNext %d above highWatermark %d", errInvalid, s.Tiered.Next, s.HighWatermark)
	}
	// A remote segment past tieredNext would be counted together with the
	// local segments that follow it: an overcount.
	if n := len(s.Remote); n > 0 && s.Remote[n-1].Range.End != s.Tiered.Next {
		return fmt.Errorf("%w: last remote segment ends at %d, tieredNext is %d",
			errInvalid, s.Remote[n-1].Range.End, s.Tiered.Next)
	}
	return nil
}

func validateSegments(tier string, segs []Segment) error {
	for i, seg := range segs {
		if seg.Range.Start < 0 || seg.Range.End < seg.Range.Start || seg.SizeBytes < 0 {
			return fmt.Errorf("%w: %s segment %d: range %v, size %d", errInvalid, tier, i, seg.Range, seg.SizeBytes)
		}
		// Bytes in an empty range could not be attributed to any offset.
		if seg.Range.Empty() && seg.SizeBytes != 0 {
			return fmt.Errorf("%w: %s segment %d: empty range %v holds %d bytes", errInvalid, tier, i, seg.Range, seg.SizeBytes)
		}
		if i > 0 && seg.Range.Start < segs[i-1].Range.End {
			return fmt.Errorf("%w: %s segment %d %v overlaps or precedes %v",
				errInvalid, tier, i, seg.Range, segs[i-1].Range)
		}
	}
	return nil
}

// Tier says which copy of a segment a Reason is about.
type Tier int

const (
	TierLocal Tier = iota + 1
	TierRemote
)

func (t Tier) String() string {
	switch t {
	case TierLocal:
		return "local"
	case TierRemote:
		return "remote"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// Reason kinds, with Kafka's config names where one applies.
const (
	KindRetentionBytes      = "retention.bytes"
	KindRetentionMs         = "retention.ms"
	KindLocalRetentionBytes = "local.retention.bytes"
	KindLocalRetentionMs    = "local.retention.ms"
	KindDeleteRecords       = "delete-records"
	// KindBelowLogStart is a segment entirely below the new log start that
	// no other rule named: already outside the log, or a local copy of a
	// tiered segment whose remote copy another rule deleted.
	KindBelowLogStart = "below-log-start"
	// KindNeitherTier moves the log start of a tiered log, with no segment
	// deleted, past offsets that neither tier holds: below the first
	// remote segment, which an earlier leader's retention deleted after
	// this replica last heard of the log start (Kafka's leader takes the
	// tier's first offset when it takes office). Its Range is those
	// offsets; its Tier is 0.
	KindNeitherTier = "held-by-neither-tier"
)

// Reason records why one segment is deleted, with the numbers the rule
// computed, so the executor can log each move of the log start (§4 rule 6).
type Reason struct {
	Kind  string
	Tier  Tier
	Range base.Range
	// TotalBytes is the counted size (local size for local rules) before
	// this segment went; LimitBytes the limit it was compared with.
	TotalBytes int64
	LimitBytes int64
	// AgeMs is nowMs - MaxTimestampMs; LimitMs the limit it exceeded.
	AgeMs   int64
	LimitMs int64
}

func (r Reason) String() string {
	switch r.Kind {
	case KindRetentionBytes, KindLocalRetentionBytes:
		return fmt.Sprintf("%s %s %v: size %d bytes, limit %d", r.Kind, r.Tier, r.Range, r.TotalBytes, r.LimitBytes)
	case KindRetentionMs, KindLocalRetentionMs:
		return fmt.Sprintf("%s %s %v: age %d ms, limit %d", r.Kind, r.Tier, r.Range, r.AgeMs, r.LimitMs)
	case KindNeitherTier:
		return fmt.Sprintf("%s %v", r.Kind, r.Range)
	}
	return fmt.Sprintf("%s %s %v", r.Kind, r.Tier, r.Range)
}

// Decision is what one retention pass deletes. The Go name cannot be Plan,
// which is the function that makes it.
type Decision struct {
	// NewLogStart is the log start after the pass; >= Snapshot.LogStart.
	NewLogStart base.Offset
	// DeleteLocalBefore: every local segment other than the active one whose
	// End <= DeleteLocalBefore is deleted, and no other (see LocalDeletions).
	DeleteLocalBefore base.Offset
	// DeleteRemote lists the remote segments to delete, a prefix of
	// Snapshot.Remote, oldest first.
	DeleteRemote []base.Range
	Reasons      []Reason
}

// LocalDeletions returns the local segments d deletes: a prefix of local,
// never the last (active) segment. local is the Snapshot's Local.
func (d Decision) LocalDeletions(local []Segment) []Segment {
	n := 0
	for n < len(local)-1 && local[n].Range.End <= d.DeleteLocalBefore {
		n++
	}
	return local[:n]
}
