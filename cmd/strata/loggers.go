package main

// The broker's named loggers (logging.Registry), created at start so that
// the BROKER_LOGGER config resource lists each and can change its level
// (or "strata"'s, which they inherit); what logs through none of them
// logs through the root logger.
const (
	loggerAPI         = "strata.api"
	loggerBroker      = "strata.broker"
	loggerCluster     = "strata.cluster"
	loggerGroups      = "strata.coordinator.group"
	loggerShareStates = "strata.coordinator.share"
	loggerTxns        = "strata.coordinator.txn"
	loggerMetadata    = "strata.metadata"
	loggerReplication = "strata.replication"
	loggerServer      = "strata.server"
	loggerTier        = "strata.tier"
)

var namedLoggers = []string{
	loggerAPI, loggerBroker, loggerCluster, loggerGroups, loggerShareStates,
	loggerTxns, loggerMetadata, loggerReplication, loggerServer, loggerTier,
}
