package partition

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"syscall"
	"testing"
)

func TestLogFailureAdvice(t *testing.T) {
	full := &fs.PathError{Op: "write", Path: "/data/t-0/00000000000000000000.log", Err: syscall.ENOSPC}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"disk full", fmt.Errorf("log: append: %w", full), []string{"disk is full", "Free space under log.dirs", "reopens the log by itself", "KAFKA_STORAGE_ERROR"}},
		{"I/O error", fmt.Errorf("log: fdatasync: %w", &fs.PathError{Op: "fdatasync", Path: "/data/x.log", Err: syscall.EIO}), []string{"I/O error", "Check the disk", "restart the broker", "KAFKA_STORAGE_ERROR"}},
		{"too many open files", fmt.Errorf("log: roll: %w", &fs.PathError{Op: "open", Path: "/data/t-0/00000000000000000100.log", Err: syscall.EMFILE}), []string{"too many open files", "ulimit -n", "prlimit --pid", "reopens the log by itself", "KAFKA_STORAGE_ERROR"}},
		{"anything else", errors.New("log: rename: boom"), []string{"I/O error", "restart the broker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := logFailureAdvice(tt.err)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("logFailureAdvice(%v) = %q, want it to say %q", tt.err, got, w)
				}
			}
		})
	}
}

func TestLogFailureReporterLogsAnError(t *testing.T) {
	var buf bytes.Buffer
	var heard []error
	report := logFailureReporter(slog.New(slog.NewTextHandler(&buf, nil)).With("partition", "t-0"),
		func(err error) { heard = append(heard, err) })
	failure := fmt.Errorf("log: append: %w", &fs.PathError{Op: "write", Path: "/d/t-0/0.log", Err: syscall.ENOSPC})
	report(failure)
	if len(heard) != 1 || heard[0] != failure {
		t.Errorf("OnLogFailure heard %v, want %v once", heard, failure)
	}
	line := buf.String()
	for _, w := range []string{"level=ERROR", "partition=t-0", "disk is full", `err="log: append: write /d/t-0/0.log: no space left on device"`} {
		if !strings.Contains(line, w) {
			t.Errorf("logged %q, want %q in it", line, w)
		}
	}
}
