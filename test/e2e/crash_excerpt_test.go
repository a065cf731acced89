package e2e

import (
	"strings"
	"testing"
)

// crashExcerptLines bounds the excerpt a failed stop quotes: enough for a
// panic's message and the stacks of the goroutine that raised it.
const crashExcerptLines = 60

// crashExcerpt returns the part of a broker's output that says why it died:
// from the first panic, fatal error or race report, at most
// crashExcerptLines lines; "" when there is none. A test failure quotes it
// next to the exit status, so that it survives a log that is cut short
// (a cluster test prints every node's whole output after it).
func crashExcerpt(output string) string {
	start := -1
	for _, marker := range []string{"panic: ", "fatal error: ", "WARNING: DATA RACE"} {
		i := strings.Index(output, marker)
		if i < 0 {
			continue
		}
		if lineStart := strings.LastIndexByte(output[:i], '\n') + 1; start < 0 || lineStart < start {
			start = lineStart
		}
	}
	if start < 0 {
		return ""
	}
	lines := strings.SplitN(output[start:], "\n", crashExcerptLines+1)
	if len(lines) > crashExcerptLines {
		lines = lines[:crashExcerptLines]
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

func TestCrashExcerpt(t *testing.T) {
	long := "panic: boom\n" + strings.Repeat("frame\n", 2*crashExcerptLines)
	for _, tc := range []struct {
		name, output, want string
	}{
		{"clean exit", "time=... level=INFO msg=\"shutting down\"\n", ""},
		{"panic", "INFO one\npanic: close of closed channel\n\ngoroutine 7 [running]:\nmain.f()\n", "panic: close of closed channel\n\ngoroutine 7 [running]:\nmain.f()"},
		{"fatal error", "INFO\nfatal error: concurrent map writes\ngoroutine 1:\n", "fatal error: concurrent map writes\ngoroutine 1:"},
		{"race before panic", "==================\nWARNING: DATA RACE\nWrite at\npanic: x\n", "WARNING: DATA RACE\nWrite at\npanic: x"},
		{"marker inside a line", "level=ERROR msg=x err=\"panic: y\"\nnext\n", "level=ERROR msg=x err=\"panic: y\"\nnext"},
		{"cut to the bound", long, strings.TrimRight(strings.Join(strings.Split(long, "\n")[:crashExcerptLines], "\n"), "\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := crashExcerpt(tc.output); got != tc.want {
				t.Errorf("crashExcerpt =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
