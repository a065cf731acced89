package main

import (
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// Every group.consumer.migration.policy the config accepts reaches the
// coordinator as its policy.
func TestMigrationPolicyReachesTheCoordinator(t *testing.T) {
	for value, want := range map[string]group.MigrationPolicy{"disabled": group.MigrationDisabled, "UPGRADE": group.MigrationUpgrade,
		"downgrade": group.MigrationDowngrade, "bidirectional": group.MigrationBidirectional} {
		cfg, err := config.LoadBroker("", nil, map[string]string{"group.consumer.migration.policy": value})
		if err != nil {
			t.Fatal(err)
		}
		if got := groupOptions(cfg, nil).MigrationPolicy; got != want {
			t.Errorf("%s: policy %v, want %v", value, got, want)
		}
	}
}
