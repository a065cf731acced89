package config

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestLeaderBalanceKeys(t *testing.T) {
	b := mustLoad(t, "", nil, nil)
	if !b.AutoLeaderRebalance || b.LeaderImbalanceCheckInterval != 300*time.Second || b.LeaderImbalancePercentage != 10 {
		t.Errorf("defaults: %v, %v, %d; want true, 5m, 10", b.AutoLeaderRebalance, b.LeaderImbalanceCheckInterval, b.LeaderImbalancePercentage)
	}
	b = mustLoad(t, "", nil, clusterFlags("2", map[string]string{"auto.leader.rebalance.enable": "false",
		"leader.imbalance.check.interval.seconds": "7", "leader.imbalance.per.broker.percentage": "0"}))
	if b.AutoLeaderRebalance || b.LeaderImbalanceCheckInterval != 7*time.Second || b.LeaderImbalancePercentage != 0 {
		t.Errorf("set: %v, %v, %d; want false, 7s, 0", b.AutoLeaderRebalance, b.LeaderImbalanceCheckInterval, b.LeaderImbalancePercentage)
	}
	b = mustLoad(t, "", nil, map[string]string{"leader.imbalance.check.interval.seconds": "9223372036854775807",
		"leader.imbalance.per.broker.percentage": "100"})
	if b.LeaderImbalanceCheckInterval != math.MaxInt64 || b.LeaderImbalancePercentage != 100 {
		t.Errorf("largest: %v, %d", b.LeaderImbalanceCheckInterval, b.LeaderImbalancePercentage)
	}
	for key, bad := range map[string]string{
		"auto.leader.rebalance.enable":            "sometimes",
		"leader.imbalance.check.interval.seconds": "0",
		"leader.imbalance.per.broker.percentage":  "101",
	} {
		_, err := LoadBroker("", nil, map[string]string{key: bad})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("%s=%s: %v, want an error naming the key", key, bad, err)
		}
	}
	if _, err := LoadBroker("", nil, map[string]string{"leader.imbalance.per.broker.percentage": "-1"}); err == nil {
		t.Error("a negative percentage was accepted")
	}
}
