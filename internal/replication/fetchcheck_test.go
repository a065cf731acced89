package replication

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestCheckFetchTable(t *testing.T) {
	// The leader's log: epoch 2 on [10, 25), 4 on [25, 40), 7 on [40, 55).
	lineage := []base.EpochStart{{Epoch: 2, Start: 10}, {Epoch: 4, Start: 25}, {Epoch: 7, Start: 40}}
	const logStart, logEnd = 12, 55
	ok := FetchCheck{Verdict: FetchFromOffset}
	outOfRange := FetchCheck{Verdict: FetchOutOfRange}
	diverging := func(e base.Epoch, end base.Offset) FetchCheck {
		return FetchCheck{Verdict: FetchDiverging, Diverging: EpochEnd{Epoch: e, End: end}}
	}
	for _, tc := range []struct {
		name      string
		lastEpoch base.Epoch
		offset    base.Offset
		want      FetchCheck
	}{
		{"in the current epoch", 7, 50, ok},
		{"at the leader's end", 7, 55, ok},
		{"at the end of an older epoch", 4, 40, ok},
		{"inside an older epoch", 4, 30, ok},
		{"past the end of its epoch on the leader", 4, 41, diverging(4, 40)},
		{"an epoch the leader never had", 5, 40, diverging(4, 40)},
		{"an epoch the leader never had, offset below its end", 6, 30, diverging(4, 40)},
		{"an epoch above the leader's latest", 8, 55, outOfRange},
		{"below the log start, even if diverging", 5, 11, outOfRange},
		{"below the log start", 2, 11, outOfRange},
		// The data of epochs before the leader's first is gone: the follower
		// truncates to the first start, then finds it below the log start.
		{"an epoch below the leader's first", 1, 12, diverging(1, 10)},
		{"an epoch below the leader's first, at its start", 1, 10, outOfRange},
	} {
		if got := CheckFetch(lineage, logStart, logEnd, tc.lastEpoch, tc.offset); got != tc.want {
			t.Errorf("%s: CheckFetch(epoch %d, offset %d) = %+v, want %+v", tc.name, tc.lastEpoch, tc.offset, got, tc.want)
		}
	}
	if got := CheckFetch(nil, 0, 0, 1, 0); got != outOfRange {
		t.Errorf("empty lineage: %+v, want out of range", got)
	}
}

func TestFetchVerdictString(t *testing.T) {
	for v, want := range map[FetchVerdict]string{0: "invalid", FetchFromOffset: "fetch-from-offset", FetchDiverging: "diverging", FetchOutOfRange: "out-of-range"} {
		if v.String() != want {
			t.Errorf("%d: %q, want %q", v, v.String(), want)
		}
	}
}

// TestPropCheckFetchFollowerPrefix: a follower whose log is a prefix of the
// leader's, and whose latest epoch the leader knows, is served from its
// offset; one holding data the leader does not is told it diverges; no
// diverging follower is ever served.
func TestPropCheckFetchFollowerPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		leader, follower, d := genDiverged(t)
		latest, ok := LatestEpoch(follower.lineage)
		if !ok {
			return // no LastFetchedEpoch: nothing to check
		}
		got := CheckFetch(leader.lineage, 0, leader.end, latest, follower.end)
		leaderKnows := false
		for _, e := range leader.lineage {
			leaderKnows = leaderKnows || e.Epoch == latest
		}
		switch {
		case follower.end == d && leaderKnows && got.Verdict != FetchFromOffset:
			t.Fatalf("follower %+v is a prefix of leader %+v: %+v", follower, leader, got)
		case follower.end > d && got.Verdict != FetchDiverging:
			t.Fatalf("follower %+v diverges from leader %+v at %d: %+v", follower, leader, d, got)
		case got.Verdict == FetchOutOfRange:
			t.Fatalf("follower %+v, leader %+v: out of range", follower, leader)
		case got.Verdict == FetchDiverging && (got.Diverging.Epoch > latest || got.Diverging.End > leader.end):
			t.Fatalf("diverging epoch %+v past the asked epoch %d or the leader's end %d", got.Diverging, latest, leader.end)
		}
	})
}
