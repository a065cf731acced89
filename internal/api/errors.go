package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clientmetrics"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// errorCode maps an error from below to the Kafka error code a client gets,
// and the message to send where the response has room for one. This is the
// one table of such mappings. An error nobody classified is a server bug,
// reported as KAFKA_STORAGE_ERROR when it came from the log (retriable) —
// never UNKNOWN_SERVER_ERROR for something a client should retry.
func errorCode(err error) (int16, string) {
	if err == nil {
		return 0, ""
	}
	var (
		recErr  *record.Error
		prodErr *producers.CodeError
		cfgErr  *config.Error
		static  *config.NotDynamicError
		scope   *config.PerBrokerOnlyError
		cmErr   *clientmetrics.ConfigError
	)
	switch {
	case errors.As(err, &recErr):
		return recErr.Code, recErr.Msg
	case errors.As(err, &prodErr):
		return prodErr.Code, prodErr.Msg
	case errors.As(err, &cfgErr):
		return kerr.InvalidConfig.Code, cfgErr.Error()
	case errors.As(err, &static):
		return kerr.InvalidRequest.Code, static.Error()
	case errors.As(err, &scope):
		return kerr.InvalidRequest.Code, scope.Error()
	case errors.As(err, &cmErr):
		return cmErr.Code, cmErr.Msg
	case errors.Is(err, partition.ErrOffsetOutOfRange),
		errors.Is(err, partition.ErrDeleteBeyondHighWatermark):
		return kerr.OffsetOutOfRange.Code, err.Error()
	case errors.Is(err, partition.ErrRecordsKept):
		return kerr.PolicyViolation.Code, err.Error()
	case errors.Is(err, partition.ErrNotEnoughReplicas):
		return kerr.NotEnoughReplicas.Code, err.Error()
	case errors.Is(err, partition.ErrReplicationTimeout):
		// A marker durable here that the ISR did not take in time: its
		// writer retries, as for a produce's REQUEST_TIMED_OUT.
		return kerr.RequestTimedOut.Code, err.Error()
	case errors.Is(err, broker.ErrNotEnoughReplicasAfterAppend):
		return kerr.NotEnoughReplicasAfterAppend.Code, err.Error()
	case errors.Is(err, partition.ErrNotLeader),
		errors.Is(err, broker.ErrNotReplica),
		// Kafka fences a fetch from an earlier incarnation of a broker
		// with NOT_LEADER_OR_FOLLOWER (Replica.updateFetchStateOrThrow).
		errors.Is(err, broker.ErrStaleBrokerEpoch):
		return kerr.NotLeaderForPartition.Code, err.Error()
	case errors.Is(err, partition.ErrClosed):
		return kerr.NotLeaderForPartition.Code, "the partition is moving or its topic was deleted"
	case errors.Is(err, metadata.ErrTopicExists):
		return kerr.TopicAlreadyExists.Code, err.Error()
	case errors.Is(err, metadata.ErrUnknownTopic):
		return kerr.UnknownTopicOrPartition.Code, err.Error()
	case errors.Is(err, metadata.ErrInvalidPartitions):
		return kerr.InvalidPartitions.Code, err.Error()
	case errors.Is(err, metadata.ErrInvalidAcl):
		return kerr.InvalidRequest.Code, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		// A remote tier search or read that ran out of time
		// (remote.list.offsets.request.timeout.ms): retriable, as in Kafka.
		return kerr.RequestTimedOut.Code, err.Error()
	}
	return kerr.KafkaStorageError.Code, err.Error()
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return new(s) // not &s: that moves s to the heap even when it is ""
}
