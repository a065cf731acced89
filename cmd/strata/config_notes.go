package main

import (
	"log/slog"
	"strings"

	"github.com/strata-broker/strata/internal/config"
)

// logConfigNotes tells the operator, once at start, what in the config
// Strata reads differently from Kafka: the keys it accepts and ignores, and
// a standalone quorum's controller listener, which it leaves closed.
func logConfigNotes(logger *slog.Logger, cfg *config.Broker) {
	if set := cfg.NoEffectSettings(); len(set) > 0 {
		logger.Info("Kafka settings accepted that change nothing here (see `strata serve --help`)",
			"settings", strings.Join(set, ","))
	}
	if l := cfg.StandaloneController; l.Name != "" {
		logger.Info("a single node is its own metadata quorum: the controller listener of controller.quorum.bootstrap.servers stays closed",
			"listener", l.String())
	}
}
