package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTooManyOpenFilesAtStart: a broker whose partitions need more file
// descriptors than its limit allows refuses to start with one line that
// names the limit and the fix; under a limit it nearly reaches it starts
// with a warning, and serves every partition.
func TestTooManyOpenFilesAtStart(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	dir := t.TempDir()
	b := startBroker(t, dir)
	const topic, partitions = "many-files", 64
	createTopic(t, newAdmin(t, b.Addr), topic, partitions, nil)
	b.Stop()

	const limit = 48
	out, code := runCommand(t, exec.Command(prlimit, fmt.Sprintf("--nofile=%d:%d", limit, limit), "--",
		strataBin, "serve", "--listen", b.Addr, "--data-dir", dir))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if code == 0 || !strings.HasPrefix(last, "strata: too many open files") ||
		!strings.Contains(last, fmt.Sprintf("strata may open %d files at most", limit)) || !strings.Contains(last, "ulimit -n") {
		t.Fatalf("starting with an open-file limit of %d: exit %d, last line %q; want non-zero and one line naming the limit and the fix; output:\n%s",
			limit, code, last, out)
	}

	t.Logf("with an open-file limit of %d: %s", limit, last)

	b.launcher = []string{prlimit, "--nofile=120:120", "--"}
	b.Restart()
	// The warning is on stderr, the ready line on stdout: it may come in
	// a moment after.
	waitFor(t, 5*time.Second, "the warning that more than half the open-file limit is in use", func() bool {
		return strings.Contains(b.output.String(), "level=WARN msg=\"more than half the open-file limit is in use at start")
	})
	cl := manualPartitioner(t, b.Addr)
	for p := range int32(partitions) {
		r := &kgo.Record{Topic: topic, Partition: p, Value: []byte("under a higher limit")}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatalf("produce to partition %d under a limit of 120: %v", p, err)
		}
	}
}
