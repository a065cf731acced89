// Package invariants gates assertions that are too costly for release
// builds: they run only in builds with the `invariants` tag (the test
// suite), like Pebble's internal/invariants.
package invariants
