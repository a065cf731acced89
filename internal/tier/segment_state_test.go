package tier

import (
	"errors"
	"testing"
)

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
			if got, want := validTransition(from, to), allowed[[2]State{from, to}]; got != want {
				t.Errorf("validTransition(%v, %v) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestTransitionRefusesWithTypedError(t *testing.T) {
	s := rseg(1, 0, 10, 100, CopyFinished)
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

func TestRemoteSegmentValidate(t *testing.T) {
	ok := rseg(1, 10, 20, 100, CopyStarted, EpochStart{1, 10}, EpochStart{2, 15})
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid segment: %v", err)
	}
	for name, mut := range map[string]func(*RemoteSegment){
		"zero id":               func(s *RemoteSegment) { s.ID = SegmentID{} },
		"zero state":            func(s *RemoteSegment) { s.State = 0 },
		"empty range":           func(s *RemoteSegment) { s.Range.End = s.Range.Start },
		"negative size":         func(s *RemoteSegment) { s.SizeBytes = -1 },
		"no epochs":             func(s *RemoteSegment) { s.LeaderEpochs = nil },
		"epochs start late":     func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 11}} },
		"epoch past end":        func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 10}, {2, 20}} },
		"epochs not ascending":  func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{2, 10}, {1, 15}} },
		"epoch starts repeated": func(s *RemoteSegment) { s.LeaderEpochs = []EpochStart{{1, 10}, {2, 10}} },
	} {
		s := ok
		s.LeaderEpochs = append([]EpochStart(nil), ok.LeaderEpochs...)
		mut(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, s)
		}
	}
}
