package api

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

func TestErrorCode(t *testing.T) {
	cases := []struct {
		err  error
		want int16
	}{
		{nil, 0},
		{fmt.Errorf("read: %w", partition.ErrOffsetOutOfRange), kerr.OffsetOutOfRange.Code},
		{partition.ErrClosed, kerr.NotLeaderForPartition.Code},
		{fmt.Errorf("append: %w", partition.ErrNotLeader), kerr.NotLeaderForPartition.Code},
		{broker.ErrNotReplica, kerr.NotLeaderForPartition.Code},
		{broker.ErrStaleBrokerEpoch, kerr.NotLeaderForPartition.Code},
		{broker.ErrNotEnoughReplicasAfterAppend, kerr.NotEnoughReplicasAfterAppend.Code},
		{partition.ErrNotEnoughReplicas, kerr.NotEnoughReplicas.Code},
		{fmt.Errorf("marker: %w", partition.ErrReplicationTimeout), kerr.RequestTimedOut.Code},
		{metadata.ErrUnknownTopic, kerr.UnknownTopicOrPartition.Code},
		{fmt.Errorf("tier: get x: %w", context.DeadlineExceeded), kerr.RequestTimedOut.Code},
		{errors.New("tier: get x: connection refused"), kerr.KafkaStorageError.Code},
	}
	for _, tc := range cases {
		if got, _ := errorCode(tc.err); got != tc.want {
			t.Errorf("errorCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
