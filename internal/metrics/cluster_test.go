package metrics

import (
	"maps"
	"testing"
)

func TestClusterGauges(t *testing.T) {
	v := ClusterValues{Leaders: 7, UnderReplicated: 2, AtMinISR: 1, UnderMinISR: 1, ActiveController: true, OfflinePartitions: 3, FencedBrokers: 1, VoteWithheld: true, UncleanElections: 4}
	c := NewClusterGauges(func() ClusterValues { return v })
	want := map[string]float64{
		"strata_leader_partitions{}": 7, "strata_under_replicated_partitions{}": 2,
		"strata_at_min_isr_partitions{}": 1, "strata_under_min_isr_partitions{}": 1,
		"strata_active_controller{}": 1, "strata_offline_partitions{}": 3, "strata_fenced_brokers{}": 1,
		"strata_metadata_vote_withheld{}": 1, "strata_unclean_leader_elections_total{}": 4,
	}
	if got := samples(t, c); !maps.Equal(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
	v = ClusterValues{}
	if got := samples(t, c); got["strata_active_controller{}"] != 0 || got["strata_leader_partitions{}"] != 0 || got["strata_metadata_vote_withheld{}"] != 0 {
		t.Fatalf("after a change: %v", got)
	}
	lint(t, c)
}
