package main

import (
	"log/slog"
	"strings"

	"github.com/strata-broker/strata/internal/config"
)

// logConfigNotes tells the operator, once at start, what in the config
// Strata reads differently from Kafka: the keys it accepts and ignores, and
// what it makes of a standalone quorum.
func logConfigNotes(logger *slog.Logger, cfg *config.Broker) {
	if set := cfg.NoEffectSettings(); len(set) > 0 {
		logger.Info("Kafka settings accepted that change nothing here (see `strata serve --help`)",
			"settings", strings.Join(set, ","))
	}
	if cfg.StandaloneQuorum {
		logger.Info("controller.quorum.bootstrap.servers names this node alone (Kafka's standalone quorum): it is the first voter of a quorum that other nodes join through its controller listener",
			"controller", cfg.QuorumVoters[cfg.NodeID])
	}
}
