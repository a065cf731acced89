package remotemeta

import (
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func seg(n byte, start, end base.Offset, st State, epochs ...EpochStart) RemoteSegment {
	if len(epochs) == 0 {
		epochs = []EpochStart{{Epoch: 0, Start: start}}
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
	a := seg(1, 10, 20, CopyStarted, EpochStart{1, 10}, EpochStart{2, 15})
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
		"epochs":    func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 10}} },
	} {
		c := a
		mut(&c)
		if a.SameAttempt(c) {
			t.Errorf("%s changed, still the same attempt", name)
		}
	}
}

func TestRemoteSegmentValidate(t *testing.T) {
	ok := seg(1, 10, 20, CopyStarted, EpochStart{1, 10}, EpochStart{2, 15})
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
		"epochs start late":     func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 11}} },
		"epoch past end":        func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 10}, {2, 20}} },
		"epochs not ascending":  func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{2, 10}, {1, 15}} },
		"epoch starts repeated": func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 10}, {2, 10}} },
		"negative epoch":        func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{-1, 10}} },
	} {
		s := ok
		s.LeaderEpochs = append([]EpochStart(nil), ok.LeaderEpochs...)
		mut(&s)
		if err := s.Validate(); !errors.Is(err, ErrInvalidSegment) {
			t.Errorf("%s: Validate(%+v) = %v, want ErrInvalidSegment", name, s, err)
		}
	}
}
