package partition

import (
	"errors"
	"log/slog"
	"syscall"
)

// logFailureAdvice is what the broker's log says when a partition's log
// fails on an I/O error: from then on the log refuses every write
// (producers get KAFKA_STORAGE_ERROR, which they retry until their delivery
// timeout) and still serves what it holds, until the broker restarts and
// recovers it, or, for a full disk on a single node, until the disk has
// room and the broker reopens the log (broker.Options.ReopenFailedLogs).
// Kafka takes the whole log directory offline instead; a single-directory
// Kafka broker halts.
func logFailureAdvice(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the partition's log failed: the disk is full. Its writes are refused (KAFKA_STORAGE_ERROR); reads go on. Free space under log.dirs (delete topics or other files, or grow the disk): a single node reopens the log by itself once a twentieth of the disk is free (at least 4 MiB, at most 1 GiB), a cluster node needs to be restarted"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "the partition's log failed: the broker has too many open files (each log segment and each connection holds one). Its writes are refused (KAFKA_STORAGE_ERROR); reads go on. Raise the broker's open-file limit (ulimit -n, or LimitNOFILE= under systemd; a running process's with prlimit --pid; fs.file-max for the whole system) or use larger segments (segment.bytes): a single node reopens the log by itself once it is a twentieth of its limit (at least 64 files) under it, a cluster node needs to be restarted"
	}
	return "the partition's log failed on an I/O error. Its writes are refused (KAFKA_STORAGE_ERROR) until the broker restarts; reads go on. Check the disk and the kernel log, then restart the broker: recovery keeps every record that was durable"
}

// logFailureReporter returns the Options.OnFail of a partition's log: it
// logs err with the advice, then tells then (Options.OnLogFailure) if set.
func logFailureReporter(logger *slog.Logger, then func(error)) func(error) {
	return func(err error) {
		logger.Error(logFailureAdvice(err), "err", err)
		if then != nil {
			then(err)
		}
	}
}

// LogFailed is the I/O error that made the partition's log fail-stop (it
// refuses writes until the broker restarts), or nil.
func (p *Partition) LogFailed() error { return p.log.Failed() }
