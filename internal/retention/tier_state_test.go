package retention

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// Tiered's fields count only as far as its state vouches for them: with the
// metadata not loaded (Known false) Any, Next and Remote say nothing, and
// with nothing tiered (Any false) Next says nothing. A plan must not change
// with them. A fresh leader holding a stale Any/Next must not expire the
// tier or the local copies before it has read the metadata (reference 000),
// and a leftover Next must neither make untiered local data look tiered to
// local retention nor hide it from size retention.
func TestPlanIgnoresTierFieldsTheStateDoesNotVouchFor(t *testing.T) {
	all := Policy{RetentionBytes: LimitOf(0), RetentionMs: LimitOf(0), LocalRetentionBytes: LimitOf(0), LocalRetentionMs: LimitOf(0)}
	unknown := tieredLog()
	unknown.Remote[0] = seg(50, 100, 500, 10) // stale: starts above the log start
	nothing := localOnly()
	for _, tc := range []struct {
		name          string
		s             Snapshot
		stale, honest Tiered
		policy        Policy
		w             want
	}{
		{"unknown, with a stale tieredNext and remote tier", unknown,
			Tiered{Any: true, Next: 200}, TieredUnknown(), all, want{}},
		{"nothing tiered, with a leftover tieredNext", nothing,
			Tiered{Known: true, Next: 30}, NothingTiered(), Policy{RetentionBytes: LimitOf(200), LocalRetentionBytes: LimitOf(0)},
			want{newStart: 20, localBefore: 20, kinds: []string{KindRetentionBytes, KindRetentionBytes}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.Tiered = tc.honest
			honest := Plan(s, tc.policy, 10_000)
			checkDecision(t, s, honest, tc.w)
			s.Tiered = tc.stale
			if got := Plan(s, tc.policy, 10_000); !reflect.DeepEqual(got, honest) {
				t.Errorf("with %+v: %+v\nwith %+v: %+v", tc.stale, got, tc.honest, honest)
			}
		})
	}
}

// The same over random snapshots and policies.
func TestPlanIgnoresTierFieldsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, p := genSnapshot(t), genPolicy(t)
		nowMs := rapid.Int64Range(0, 250).Draw(t, "nowMs")
		if s.Tiered.Known && s.Tiered.Any {
			t.Skip("every field is vouched for")
		}
		want := Plan(s, p, nowMs)
		stale := s
		stale.Tiered.Next = base.Offset(rapid.Int64Range(0, int64(s.HighWatermark)).Draw(t, "staleNext"))
		if !s.Tiered.Known {
			stale.Tiered.Any = true
			if len(stale.Remote) == 0 && rapid.Bool().Draw(t, "staleRemote") {
				// A stale tier above the log start.
				stale.Remote = []Segment{seg(s.LogStart+1, s.LogStart+2, 10, 0)}
			}
		}
		if got := Plan(stale, p, nowMs); !reflect.DeepEqual(got, want) {
			t.Fatalf("with %+v: %+v\nwith %+v: %+v", stale.Tiered, got, s.Tiered, want)
		}
	})
}
