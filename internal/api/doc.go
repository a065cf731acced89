// Package api implements the Kafka APIs, one file per API key. Each file
// registers the versions it implements; ApiVersions is derived from the
// registrations, so Strata never advertises what it does not do.
//
// Contract: per-partition failures travel as Kafka error codes inside the
// response (mapped in one table, errors.go); a handler never returns a Go
// error for them. Wire sentinels (-1 latest, -2 earliest, …) are turned into
// named values here and go no deeper.
package api
