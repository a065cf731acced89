package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKcat runs kcat_test.sh, which produces, consumes and lists with kcat
// (librdkafka). CI installs kcat; elsewhere the test skips without it.
func TestKcat(t *testing.T) {
	t.Parallel()
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not on PATH (CI installs it: apt-get install kcat)")
	}
	b := startBroker(t, t.TempDir())
	const topic = "kcat-e2e"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "kcat_test.sh", b.Addr, topic)
	cmd.Env = append(cmd.Environ(), "KCAT="+kcat)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat_test.sh: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kcat e2e: ok") {
		t.Fatalf("kcat_test.sh exited 0 without its closing line:\n%s", out)
	}
}

// runKcatScript runs kcat_test.sh (produce, consume, list) against addr
// with the librdkafka properties props.
func runKcatScript(t *testing.T, kcat, addr, topic string, props []string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "kcat.properties")
	if err := os.WriteFile(file, []byte(strings.Join(props, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "kcat_test.sh", addr, topic)
	cmd.Env = append(cmd.Environ(), "KCAT="+kcat, "KCAT_CONFIG="+file)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kcat e2e: ok") {
		t.Fatalf("kcat_test.sh over %s: %v\n%s", addr, err, out)
	}
}
