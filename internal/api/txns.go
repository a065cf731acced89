package api

import (
	"strconv"

	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/sharestate"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/metadata"
)

// txnMax caps a transaction API at the version the coordinator implements.
func txnMax(key int16) int16 {
	v, ok := txn.MaxVersions[key]
	if !ok {
		panic("api: no transaction coordinator version for key " + strconv.Itoa(int(key)))
	}
	return v
}

// newTxnCoordinators is the transaction kind of coordinator, on
// __transaction_state created with the transaction.state.log.* settings.
func newTxnCoordinators(h *Handler) *coordinators {
	cfg := h.opts.Config
	return &coordinators{
		h:     h,
		topic: txn.TopicName,
		create: func() metadata.CreateTopic {
			return metadata.CreateTopic{
				Name:              txn.TopicName,
				Partitions:        cfg.TxnTopicNumPartitions,
				ReplicationFactor: cfg.TxnTopicReplicationFactor,
				Configs: map[string]string{
					"cleanup.policy":      "compact",
					"segment.bytes":       strconv.Itoa(int(cfg.TxnTopicSegmentBytes)),
					"min.insync.replicas": strconv.Itoa(int(cfg.TxnTopicMinISR)),
					"compression.type":    "uncompressed",
				},
			}
		},
		rt:            h.opts.Txns,
		errorResponse: txn.ErrorResponse,
	}
}

// isInternalTopic reports whether name is a coordinator's topic: only its
// coordinator writes there, and it cannot be deleted or grow partitions
// (keys are mapped to partitions by count).
func isInternalTopic(name string) bool {
	return name == offsets.TopicName || name == txn.TopicName || name == sharestate.TopicName
}

// coordinatorsOf is the kind of coordinator whose topic name is, nil for
// any other topic.
func (h *Handler) coordinatorsOf(name string) *coordinators {
	switch name {
	case h.groups.topic:
		return h.groups
	case h.txns.topic:
		return h.txns
	case h.shareStates.topic:
		return h.shareStates
	}
	return nil
}
