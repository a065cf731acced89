package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestConsumerCommitCheck(t *testing.T) {
	empty := replayRecords(t, nil, cgMetadata(1))
	stable := stableGroup(t) // a and b at epoch 2
	for _, tc := range []struct {
		name          string
		cg            *consumerGroup
		member        string
		epoch         int32
		transactional bool
		version       int16
		want          int16
	}{
		{"an admin commit to an empty group", empty, "", -1, false, 2, 0},
		{"an admin commit to a group with members", stable, "", -1, false, 9, kerr.UnknownMemberID.Code},
		{"a member at its epoch", stable, "a", 2, false, 9, 0},
		{"a member at an older epoch", stable, "a", 1, false, 9, kerr.StaleMemberEpoch.Code},
		{"a member at a newer epoch", stable, "a", 3, false, 9, kerr.StaleMemberEpoch.Code},
		{"an unknown member", stable, "x", 2, false, 9, kerr.UnknownMemberID.Code},
		{"a member on OffsetCommit v8", stable, "a", 2, false, 8, kerr.UnsupportedVersion.Code},
		{"a transactional commit on an old version", stable, "a", 2, true, 3, 0},
		{"a transactional commit at an old epoch", stable, "a", 1, true, 4, kerr.StaleMemberEpoch.Code},
	} {
		if got := tc.cg.commitCheck(tc.member, tc.epoch, tc.transactional, tc.version); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestConsumerFetchCheck(t *testing.T) {
	stable := stableGroup(t)
	for _, tc := range []struct {
		name   string
		member *string
		epoch  int32
		want   int16
	}{
		{"an admin", nil, -1, 0},
		{"a member at its epoch", ptr("b"), 2, 0},
		{"a member at another epoch", ptr("b"), 1, kerr.StaleMemberEpoch.Code},
		{"an unknown member", ptr("x"), 2, kerr.UnknownMemberID.Code},
		{"no member, an epoch", nil, 2, kerr.UnknownMemberID.Code},
	} {
		if got := stable.fetchCheck(tc.member, tc.epoch); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
