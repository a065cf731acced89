package api

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestCheckReplicationFactor: a replication factor from 1 to the number
// of live (unfenced) brokers is taken; 0, a negative one, and one past
// the live brokers are INVALID_REPLICATION_FACTOR.
func TestCheckReplicationFactor(t *testing.T) {
	rh := newReplicaHarness(t, nil) // brokers 1, 2 and 3
	check := func(live int, rf int16, ok bool) {
		t.Helper()
		err := rh.h.checkReplicationFactor("t", rf)
		var tce *topicCreateError
		switch {
		case ok && err != nil:
			t.Errorf("with %d live brokers, replication factor %d: %v", live, rf, err)
		case !ok && (!errors.As(err, &tce) || tce.code != kerr.InvalidReplicationFactor.Code):
			t.Errorf("with %d live brokers, replication factor %d: %v, want INVALID_REPLICATION_FACTOR", live, rf, err)
		}
	}
	for rf, ok := range map[int16]bool{-2: false, -1: false, 0: false, 1: true, 2: true, 3: true, 4: false} {
		check(3, rf, ok)
	}
	rh.fence(3)
	if got := rh.h.placeableBrokers(rh.meta.Image()); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("placeable brokers with 3 fenced: %v", got)
	}
	check(2, 2, true)
	check(2, 3, false)
	if err := rh.h.checkReplicationFactor("t", 3); err == nil || !strings.Contains(err.Error(), "and 2 are live; use at most 2") {
		t.Errorf("3 replicas on 2 live brokers: %v", err)
	}
	rh.fence(2)
	if err := rh.h.checkReplicationFactor("t", 2); err == nil || !strings.Contains(err.Error(), "needs 2 live brokers, and 1 is live; use at most 1") {
		t.Errorf("2 replicas on 1 live broker: %v", err)
	}
}
