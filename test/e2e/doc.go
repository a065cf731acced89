// Package e2e runs the strata binary as a separate process and drives it with
// real Kafka clients (franz-go, sarama, kafka-go, kcat) and with raw bytes.
//
// The tests rely only on the command line contract of the binary, never on
// its packages:
//
//	strata serve --listen 127.0.0.1:PORT --data-dir DIR [--override key=value ...]
//
// Once ready the broker prints exactly one line on stdout,
//
//	strata: listening on 127.0.0.1:PORT, data in DIR
//
// and SIGTERM stops it cleanly with exit status 0. SIGKILL is the crash that
// the crash tests use; a restart reuses the same port and data directory.
//
// TestMain builds ./cmd/strata once per run; set STRATA_BIN to test a binary
// that was built elsewhere. Every test owns its data directory and its
// loopback port, so the tests run in parallel.
package e2e
