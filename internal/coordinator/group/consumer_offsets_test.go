package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/coordinator/reconcile"
)

func TestConsumerCommitCheck(t *testing.T) {
	empty := replayRecords(t, nil, cgMetadata(1))
	stable := stableGroup(t) // a and b at epoch 2
	// a got t1 0-3 at epoch 1 and kept 0-1 at epoch 2; b got 2-3 at 2.
	moved := replayRecords(t, nil, cgMember("a", nil, "t1"), cgMember("b", nil, "t1"), cgMetadata(2),
		cgCurrent("a", 1, 0, reconcile.Stable, tps(cgT1, 0, 1, 2, 3), noParts),
		cgCurrent("a", 2, 1, reconcile.Stable, tps(cgT1, 0, 1), noParts),
		cgCurrent("b", 2, 0, reconcile.Stable, tps(cgT1, 2, 3), noParts))
	view := func() TopicsView { return viewOf(map[string]int32{"t1": 4}) }
	for _, tc := range []struct {
		name          string
		cg            *consumerGroup
		member        string
		instance      *string
		epoch         int32
		transactional bool
		version       int16
		topic         string
		partition     int32
		want          int16
	}{
		{"an admin commit to an empty group", empty, "", nil, -1, false, 2, "t1", 0, 0},
		{"an admin commit to a group with members", stable, "", nil, -1, false, 9, "t1", 0, kerr.UnknownMemberID.Code},
		{"a member at its epoch", stable, "a", nil, 2, false, 9, "t1", 0, 0},
		{"a member at an older epoch, before it held the partition", stable, "a", nil, 1, false, 9, "t1", 0, kerr.StaleMemberEpoch.Code},
		{"a member at a newer epoch", stable, "a", nil, 3, false, 9, "t1", 0, kerr.StaleMemberEpoch.Code},
		{"an unknown member", stable, "x", nil, 2, false, 9, "t1", 0, kerr.UnknownMemberID.Code},
		{"a member on OffsetCommit v8", stable, "a", nil, 2, false, 8, "t1", 0, kerr.UnsupportedVersion.Code},
		{"a transactional commit on an old version", stable, "a", nil, 2, true, 3, "t1", 0, 0},
		{"a transactional commit at a newer epoch", stable, "a", nil, 3, true, 4, "t1", 0, kerr.IllegalGeneration.Code},
		{"a transactional commit naming no member", stable, "", nil, -1, true, 4, "t1", 0, 0},
		{"a transactional commit naming only an instance", stable, "", ptr("i-b"), -1, true, 4, "t1", 0, kerr.UnknownMemberID.Code},
		// KIP-1251: an older epoch commits the partitions held since then.
		{"an older epoch, a partition held since then", moved, "a", nil, 1, false, 9, "t1", 1, 0},
		{"an older epoch, a partition given away since", moved, "a", nil, 1, false, 9, "t1", 2, kerr.StaleMemberEpoch.Code},
		{"an older epoch, a partition got later", moved, "b", nil, 1, false, 9, "t1", 2, kerr.StaleMemberEpoch.Code},
		{"an older epoch, transactional", moved, "a", nil, 1, true, 4, "t1", 2, kerr.IllegalGeneration.Code},
		{"an older epoch, a topic that does not exist", moved, "a", nil, 1, false, 9, "t9", 0, kerr.StaleMemberEpoch.Code},
	} {
		v := tc.cg.commitCheck(tc.member, tc.instance, tc.epoch, tc.transactional, tc.version)
		if got := v.partition(view, tc.topic, tc.partition); got != tc.want {
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
