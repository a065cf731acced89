// Package config is Strata's broker and topic configuration, with Kafka's
// names, types, defaults and validation (Kafka 3.9, the last line that still
// has message.timestamp.difference.max.ms and message.downconversion.enable).
//
// The definition tables (defs_topic.go, defs_broker.go) are the one place a
// key is declared. Everything else is derived from them: validation, the
// STRATA_* environment variable names, DescribeConfigs entries and synonyms.
//
// Where values come from, lowest precedence first:
//
//	broker: default < properties file < STRATA_* environment < flags
//	topic:  topic default < broker synonym (its chain) < topic override
//
// A broker key may take its value from a chain of other keys when it is not
// set, in Kafka's order: log.retention.ms < .minutes < .hours, log.roll.ms <
// .hours, log.roll.jitter.ms < .hours, log.flush.interval.ms <
// log.flush.scheduler.interval.ms, node.id < broker.id, log.dirs < log.dir.
//
// Invariants:
//   - Validate at the gateway: LoadBroker and ValidateTopicOverrides (and
//     ResolveTopic, which calls it) check every value; Broker.Raw and the
//     typed fields hold only validated values, so interior parsing panics on
//     failure (a programmer error).
//   - No sentinels leave this package in the typed structs: Kafka's -1
//     ("unlimited") becomes an unset TimeLimit or BytesLimit, -2 ("same as the
//     total", local retention) is resolved to the total, and millisecond
//     values beyond what time.Duration holds (Long.MaxValue, "never") become
//     unlimited. Described values (Entry) stay in Kafka's form, since they go
//     on the wire.
//   - Enum-like values (CleanupPolicy, Compression, TimestampType) have an
//     invalid zero value.
//   - Errors a user can cause are one line naming the key, the value, where
//     it was set, and what is allowed; they wrap an *Error, which the api
//     layer answers as INVALID_CONFIG.
//
// Strata differs from Kafka on purpose in: node.id defaults to 1, listeners to
// PLAINTEXT://127.0.0.1:9092, log.dir to ./strata-data, replication factors to
// 1, remote.log.storage.system.enable to true, and segment.bytes may be as
// small as 1024 bytes so tests can roll small segments. Strata has no dynamic
// broker configs: every broker entry is read-only and STATIC or DEFAULT.
package config
