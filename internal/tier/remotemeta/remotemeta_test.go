package remotemeta

import (
	"errors"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func seg(n byte, start, end base.Offset, st State, epochs ...base.EpochStart) RemoteSegment {
	if len(epochs) == 0 {
		epochs = []base.EpochStart{{Epoch: 0, Start: start}}
	}
	return RemoteSegment{
		ID: SegmentID{0: 0xAA, 15: n}, TopicID: base.TopicID{15: 1}, TP: base.TopicPartition{Topic: "t"},
		Range: base.Range{Start: start, End: end}, LeaderEpochs: epochs, SizeBytes: 100,
		MaxTimestampMs: int64(end), State: st,
	}
}

func TestValidTransitionTable(t *testing.T) {
	allowed := map[[2]State]bool{
		{CopyStarted, CopyFinished}:     true,
		{CopyStarted, Dangling}:         true,
		{CopyFinished, DeleteStarted}:   true,
		{Dangling, DeleteStarted}:       true,
		{DeleteStarted, DeleteFinished}: true,
		{DeleteStarted, Dangling}:       true,
	}
	all := []State{0, CopyStarted, CopyFinished, DeleteStarted, DeleteFinished, Dangling, Dangling + 1}
	for _, from := range all {
		for _, to := range all {
			if got, want := ValidTransition(from, to), allowed[[2]State{from, to}]; got != want {
				t.Errorf("ValidTransition(%v, %v) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestStateNamesRoundTrip(t *testing.T) {
	for s := CopyStarted; s <= Dangling; s++ {
		got, ok := ParseState(s.String())
		if !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, ok)
		}
	}
	for _, name := range []string{"", "State(0)", "copy_started", "NOPE"} {
		if s, ok := ParseState(name); ok {
			t.Errorf("ParseState(%q) = %v, want not ok", name, s)
		}
	}
	if got := State(0).String(); got != "State(0)" {
		t.Errorf("State(0).String() = %q", got)
	}
}

func TestTransitionRefusesWithTypedError(t *testing.T) {
	s := seg(1, 0, 10, CopyFinished)
	got, err := s.Transition(CopyStarted)
	var te *TransitionError
	if !errors.As(err, &te) || !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("Transition(COPY_FINISHED -> COPY_STARTED) error = %v, want a *TransitionError", err)
	}
	if te.From != CopyFinished || te.To != CopyStarted || te.ID != s.ID || got.State != CopyFinished {
		t.Errorf("error %+v, segment state %v", te, got.State)
	}
	if _, err := (RemoteSegment{}).Transition(CopyFinished); err == nil {
		t.Error("the zero state transitioned")
	}
	next, err := s.Transition(DeleteStarted)
	if err != nil || next.State != DeleteStarted || s.State != CopyFinished {
		t.Errorf("Transition(DELETE_STARTED) = %v, %v; the receiver must not change", next.State, err)
	}
}

func TestSameAttempt(t *testing.T) {
	a := seg(1, 10, 20, CopyStarted, base.EpochStart{Epoch: 1, Start: 10}, base.EpochStart{Epoch: 2, Start: 15})
	b := a
	b.State = CopyFinished
	if !a.SameAttempt(b) {
		t.Fatal("a state change is the same attempt")
	}
	for name, mut := range map[string]func(*RemoteSegment){
		"id":        func(s *RemoteSegment) { s.ID[1] = 1 },
		"topic id":  func(s *RemoteSegment) { s.TopicID[0] = 1 },
		"partition": func(s *RemoteSegment) { s.TP.Partition = 1 },
		"range":     func(s *RemoteSegment) { s.Range.End++ },
		"size":      func(s *RemoteSegment) { s.SizeBytes++ },
		"timestamp": func(s *RemoteSegment) { s.MaxTimestampMs++ },
		"epochs":    func(s *RemoteSegment) { s.LeaderEpochs = lin(1, 10) },
	} {
		c := a
		mut(&c)
		if a.SameAttempt(c) {
			t.Errorf("%s changed, still the same attempt", name)
		}
	}
}

func TestRemoteSegmentValidate(t *testing.T) {
	ok := seg(1, 10, 20, CopyStarted, base.EpochStart{Epoch: 1, Start: 10}, base.EpochStart{Epoch: 2, Start: 15})
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid segment: %v", err)
	}
	for name, mut := range map[string]func(*RemoteSegment){
		"zero id":               func(s *RemoteSegment) { s.ID = SegmentID{} },
		"zero state":            func(s *RemoteSegment) { s.State = 0 },
		"empty range":           func(s *RemoteSegment) { s.Range.End = s.Range.Start },
		"negative start":        func(s *RemoteSegment) { s.Range.Start = -1 },
		"negative size":         func(s *RemoteSegment) { s.SizeBytes = -1 },
		"no epochs":             func(s *RemoteSegment) { s.LeaderEpochs = nil },
		"epochs start late":     func(s *RemoteSegment) { s.LeaderEpochs = lin(1, 11) },
		"epoch past end":        func(s *RemoteSegment) { s.LeaderEpochs = lin(1, 10, 2, 20) },
		"epochs not ascending":  func(s *RemoteSegment) { s.LeaderEpochs = lin(2, 10, 1, 15) },
		"epoch starts repeated": func(s *RemoteSegment) { s.LeaderEpochs = lin(1, 10, 2, 10) },
		"negative epoch":        func(s *RemoteSegment) { s.LeaderEpochs = lin(-1, 10) },
	} {
		s := ok
		s.LeaderEpochs = append([]base.EpochStart(nil), ok.LeaderEpochs...)
		mut(&s)
		if err := s.Validate(); !errors.Is(err, ErrInvalidSegment) {
			t.Errorf("%s: Validate(%+v) = %v, want ErrInvalidSegment", name, s, err)
		}
	}
}

func TestEpochsFor(t *testing.T) {
	l := lin(1, 10, 3, 20, 4, 30)
	for _, tc := range []struct {
		r    base.Range
		want []base.EpochStart
		ok   bool
	}{
		{base.Range{Start: 10, End: 15}, lin(1, 10), true},
		{base.Range{Start: 10, End: 20}, lin(1, 10), true}, // epoch 3 starts at End: not in [10, 20)
		{base.Range{Start: 12, End: 25}, lin(1, 12, 3, 20), true},
		{base.Range{Start: 20, End: 40}, lin(3, 20, 4, 30), true},
		{base.Range{Start: 35, End: 36}, lin(4, 35), true},
		{base.Range{Start: 9, End: 15}, nil, false},
	} {
		got, ok := EpochsFor(l, tc.r)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("EpochsFor(%v, %v) = %v, %v; want %v, %v", l, tc.r, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := EpochsFor(nil, base.Range{Start: 0, End: 1}); ok {
		t.Error("EpochsFor of an empty lineage is ok")
	}
}

func TestConflictsWith(t *testing.T) {
	fin := seg(1, 0, 10, CopyFinished, base.EpochStart{Epoch: 0, Start: 0}, base.EpochStart{Epoch: 1, Start: 5})
	for _, tc := range []struct {
		name     string
		segs     []RemoteSegment
		s        RemoteSegment
		conflict bool
	}{
		{"none", nil, seg(2, 0, 10, CopyStarted), false},
		{"adjacent", []RemoteSegment{fin}, seg(2, 10, 20, CopyStarted, base.EpochStart{Epoch: 1, Start: 10}), false},
		{"same history on the shared offsets", []RemoteSegment{fin}, seg(2, 5, 15, CopyStarted, base.EpochStart{Epoch: 1, Start: 5}), true},
		{"same offsets", []RemoteSegment{fin}, seg(2, 0, 10, CopyStarted, base.EpochStart{Epoch: 0, Start: 0}, base.EpochStart{Epoch: 1, Start: 5}), true},
		{"inside", []RemoteSegment{fin}, seg(2, 6, 8, CopyStarted, base.EpochStart{Epoch: 1, Start: 6}), true},
		{"another epoch on the shared offsets", []RemoteSegment{fin}, seg(2, 5, 15, CopyStarted, base.EpochStart{Epoch: 2, Start: 5}), false},
		{"epoch boundary elsewhere", []RemoteSegment{fin}, seg(2, 0, 10, CopyStarted, base.EpochStart{Epoch: 0, Start: 0}, base.EpochStart{Epoch: 1, Start: 6}), false},
		{"the other is not finished", []RemoteSegment{seg(1, 0, 10, Dangling)}, seg(2, 0, 10, CopyStarted), false},
		{"itself", []RemoteSegment{fin}, fin, false},
	} {
		err := ConflictsWith(tc.segs, tc.s)
		if got := err != nil; got != tc.conflict {
			t.Errorf("%s: ConflictsWith = %v, want a conflict: %v", tc.name, err, tc.conflict)
			continue
		}
		var oe *OverlapError
		if err != nil && (!errors.Is(err, ErrOverlap) || !errors.As(err, &oe) || oe.ID != tc.s.ID || oe.Other != fin.ID) {
			t.Errorf("%s: error %v (%+v), want an *OverlapError of %v and %v", tc.name, err, oe, tc.s.ID, fin.ID)
		}
	}
}

// lin is the lineage of the (epoch, start) pairs given.
func lin(pairs ...int64) []base.EpochStart {
	var out []base.EpochStart
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, base.EpochStart{Epoch: base.Epoch(pairs[i]), Start: base.Offset(pairs[i+1])})
	}
	return out
}
