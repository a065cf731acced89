// Package logging names the broker's loggers and lets their levels change
// while it runs, as Kafka's BROKER_LOGGER config resource does with log4j's
// loggers (KIP-412).
//
// Loggers are named with dots ("strata.tier", "strata.coordinator.group").
// Each has a level of its own or none; one without logs at the level of
// its nearest ancestor that has one, up to the root logger ("root"),
// which always has one. Setting or unsetting a level changes, at once,
// what every logger it governs lets through; nothing is persisted (a
// restart starts from the root level it is given, as Kafka's brokers start
// from log4j's file).
//
// Levels are Kafka's names: TRACE, DEBUG, INFO, WARN, ERROR and FATAL,
// mapped to slog's (TRACE below Debug, FATAL above Error: nothing the
// broker logs reaches it, so FATAL silences a logger).
package logging
