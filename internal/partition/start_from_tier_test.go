package partition

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func tieredTopic(o *Options) { o.Config.Tiered = true }

// tierStartOf is what a follower of l would rebuild from the remote tier
// if l's whole log were tiered: l's lineage and producer state at its log
// end, and its log start.
func tierStartOf(t *testing.T, l *Partition) TierStart {
	t.Helper()
	off := l.Offsets()
	l.mu.Lock()
	snap := l.mu.producers.Snapshot()
	l.mu.Unlock()
	return TierStart{LocalStart: off.LogEnd, LogStart: off.LogStart, Lineage: l.Lineage(), ProducerSnapshot: snap}
}

// TestStartOverFromTierInstallsTheRemoteState: a follower started over
// from the remote tier has the leader's log start, lineage and producer
// state, an empty local log at the remote end, and keeps them across a
// restart; made leader, it answers a producer's retry of a batch it never
// held locally as a duplicate, at the original offset.
func TestStartOverFromTierInstallsTheRemoteState(t *testing.T) {
	l := newLeader(t, tieredTopic, smallSegments)
	orig := mustAppend(t, l.p, batch(t, spec{pid: 7, epoch: 0, seq: 0, records: 3}), AcksAll)
	for range 20 {
		mustAppend(t, l.p, batch(t, spec{valueBytes: 100}), AcksAll)
	}
	if err := l.p.BecomeFollower(2); err != nil { // a new leader epoch in the lineage
		t.Fatal(err)
	}
	if err := l.p.BecomeLeader(3); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		mustAppend(t, l.p, batch(t, spec{valueBytes: 100}), AcksAll)
	}
	s := tierStartOf(t, l.p)
	s.Aborted = []AbortedTxn{{ProducerID: 9, FirstOffset: 2, LastOffset: 5, LastStableOffset: 2}}

	f := newFollower(t, 3, tieredTopic, smallSegments)
	if err := f.p.StartOverFromTier(s); err != nil {
		t.Fatal(err)
	}
	check := func(p *Partition, dir, what string) {
		t.Helper()
		off := p.Offsets()
		if off.LogStart != 0 || off.LocalStart != s.LocalStart || off.LogEnd != s.LocalStart || off.HighWatermark != s.LocalStart {
			t.Fatalf("%s: offsets %+v, want log start 0 and an empty local log at %d", what, off, s.LocalStart)
		}
		if got := p.Lineage(); !slices.Equal(got, s.Lineage) {
			t.Fatalf("%s: lineage %v, want %v", what, got, s.Lineage)
		}
		if got := p.AbortedTxns(0, s.LocalStart); !slices.Equal(got, s.Aborted) {
			t.Fatalf("%s: aborted %v, want %v", what, got, s.Aborted)
		}
		if _, err := os.Stat(filepath.Join(dir, tierStartName)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the intent file is still there (%v)", what, err)
		}
	}
	dedupes := func(p *Partition, what string) {
		t.Helper()
		if err := p.BecomeLeader(4); err != nil {
			t.Fatal(err)
		}
		res := mustAppend(t, p, batch(t, spec{pid: 7, epoch: 0, seq: 0, records: 3}), AcksAll)
		if !res.Duplicate || res.BaseOffset != orig.BaseOffset {
			t.Fatalf("%s: retry of a remote batch: %+v, want a duplicate at %d", what, res, orig.BaseOffset)
		}
		if end := p.Offsets().LogEnd; end != s.LocalStart {
			t.Fatalf("%s: the duplicate was appended: log end %d", what, end)
		}
	}
	check(f.p, f.e.dir, "after the start over")
	// What is on disk, without the snapshot a clean close writes.
	crashed := f.e.crashCopy(t)
	c := openAt(t, crashed)
	if err := c.BecomeFollower(3); err != nil {
		t.Fatal(err)
	}
	check(c, crashed.Dir, "after a crash")
	dedupes(c, "after a crash")
	f.restart(t, 3)
	check(f.p, f.e.dir, "after a restart")
	dedupes(f.p, "after a restart")
}

// TestStartOverFromTierRefuses: a leader, an untiered partition and a
// state that does not hold together are refused, and nothing changes.
func TestStartOverFromTierRefuses(t *testing.T) {
	good := TierStart{LocalStart: 100, LogStart: 10, Lineage: []base.EpochStart{{Epoch: 1, Start: 10}, {Epoch: 3, Start: 50}}}
	for name, tc := range map[string]struct {
		leader, untiered bool
		mutate           func(*TierStart)
		want             error
	}{
		"leader":                {leader: true, want: ErrNotFollower},
		"untiered":              {untiered: true, want: ErrStartNotTiered},
		"local start below log": {mutate: func(s *TierStart) { s.LocalStart = 5 }, want: ErrBadTierStart},
		"no lineage":            {mutate: func(s *TierStart) { s.Lineage = nil }, want: ErrBadTierStart},
		"lineage not at start":  {mutate: func(s *TierStart) { s.Lineage[0].Start = 12 }, want: ErrBadTierStart},
		"lineage past local":    {mutate: func(s *TierStart) { s.Lineage[1].Start = 100 }, want: ErrBadTierStart},
		"lineage not ascending": {mutate: func(s *TierStart) { s.Lineage[1].Epoch = 1 }, want: ErrBadTierStart},
		"corrupt snapshot":      {mutate: func(s *TierStart) { s.ProducerSnapshot = []byte("not a snapshot") }, want: ErrBadTierStart},
		"aborted past local":    {mutate: func(s *TierStart) { s.Aborted = []AbortedTxn{{ProducerID: 1, FirstOffset: 90, LastOffset: 100}} }, want: ErrBadTierStart},
	} {
		t.Run(name, func(t *testing.T) {
			var r *replica
			tweaks := []func(*Options){}
			if !tc.untiered {
				tweaks = append(tweaks, tieredTopic)
			}
			if tc.leader {
				r = newLeader(t, tweaks...)
			} else {
				r = newFollower(t, 1, tweaks...)
			}
			s := good
			s.Lineage = slices.Clone(good.Lineage)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			before := r.p.Offsets()
			if err := r.p.StartOverFromTier(s); !errors.Is(err, tc.want) {
				t.Fatalf("StartOverFromTier = %v, want %v", err, tc.want)
			}
			if after := r.p.Offsets(); after != before {
				t.Fatalf("offsets changed from %+v to %+v", before, after)
			}
		})
	}
}

// TestStartOverFromTierInterruptedStartsEmpty: a crash while the state is
// being installed (the intent file is there) reopens the partition empty
// at 0, with no epochs or producer snapshots, so that its fetcher rebuilds
// the state: a log claiming remote offsets without their state is never
// served.
func TestStartOverFromTierInterruptedStartsEmpty(t *testing.T) {
	l := newLeader(t, tieredTopic, smallSegments)
	for range 10 {
		mustAppend(t, l.p, batch(t, spec{pid: 7, seq: 0, records: 1}), AcksAll)
	}
	s := tierStartOf(t, l.p)
	f := newFollower(t, 1, tieredTopic, smallSegments)
	if err := f.p.StartOverFromTier(s); err != nil {
		t.Fatal(err)
	}
	// As if the crash came between the truncation and the intent file's
	// removal: the intent file is back.
	if err := os.WriteFile(filepath.Join(f.e.dir, tierStartName), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := f.e.crashCopy(t)
	p := openAt(t, opts)
	off := p.Offsets()
	if off.LogStart != 0 || off.LogEnd != 0 || off.LocalStart != 0 {
		t.Fatalf("offsets after an interrupted start over: %+v, want an empty log at 0", off)
	}
	// Open makes it a leader in its options' epoch, from 0.
	if got, want := p.Lineage(), []base.EpochStart{{Epoch: opts.LeaderEpoch, Start: 0}}; !slices.Equal(got, want) {
		t.Fatalf("lineage %v after recovery, want %v", got, want)
	}
	snaps, err := listSnapshots(opts.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) > 0 {
		t.Fatalf("producer snapshots %v survived", snaps)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, tierStartName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the intent file survived recovery (%v)", err)
	}
}

// The remote tier's aborted transactions whose marker is below the new log
// start are outside the log and are not listed, as the list never holds
// them (pruneAbortedLocked); the rest are, across a restart too.
func TestStartOverFromTierDropsAbortsBelowTheLogStart(t *testing.T) {
	f := newFollower(t, 3, tieredTopic)
	below := AbortedTxn{ProducerID: 9, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}
	kept := AbortedTxn{ProducerID: 9, FirstOffset: 5, LastOffset: 7, LastStableOffset: 8}
	s := TierStart{LocalStart: 10, LogStart: 4, Lineage: []base.EpochStart{{Epoch: 1, Start: 4}},
		Aborted: []AbortedTxn{below, kept}}
	if err := f.p.StartOverFromTier(s); err != nil {
		t.Fatal(err)
	}
	if got := f.p.AbortedTxns(0, 10); !slices.Equal(got, []AbortedTxn{kept}) {
		t.Fatalf("aborted %v, want only %v, at or above the log start 4", got, kept)
	}
	f.restart(t, 3)
	if got := f.p.AbortedTxns(0, 10); !slices.Equal(got, []AbortedTxn{kept}) {
		t.Fatalf("reopened: aborted %v, want only %v", got, kept)
	}
}
