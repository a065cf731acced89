package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// KafkaJS (the Node.js client) is driven by test/node/check.js: npm installs
// the locked kafkajs and kafkajs-snappy into test/node/node_modules once per
// run, and each scenario runs in its own node process against its own
// broker.
const (
	nodeProjectDir = "../node"
	// nodeInstallTimeout covers a cold npm cache.
	nodeInstallTimeout = 3 * time.Minute
	// nodeScenarioTimeout is above check.js's own 55 s deadline, so that
	// its one-line verdict is what a slow broker produces.
	nodeScenarioTimeout = 90 * time.Second
)

// npmUnreachable matches npm's words for a registry it cannot reach at all.
var npmUnreachable = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|ETIMEDOUT`)

var nodeInstall struct {
	once sync.Once
	// skip says why the KafkaJS tests cannot run here; err why npm failed.
	skip string
	err  error
}

// kafkajsReady installs test/node's dependencies once per run, or skips the
// test when node, npm or the npm registry is missing. REQUIRE_NODE=1 turns
// those skips into failures.
func kafkajsReady(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			nodeSkip(t, fmt.Sprintf("%s is not on PATH (the KafkaJS test needs Node.js 18+ and npm)", tool))
		}
	}
	nodeInstall.once.Do(func() { nodeInstall.skip, nodeInstall.err = installNode() })
	if nodeInstall.skip != "" {
		nodeSkip(t, nodeInstall.skip)
	}
	if nodeInstall.err != nil {
		t.Fatalf("installing test/node: %v", nodeInstall.err)
	}
}

func nodeSkip(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("REQUIRE_NODE") == "1" {
		t.Fatalf("REQUIRE_NODE=1 but %s", why)
	}
	t.Skip(why)
}

// installNode runs `npm ci`, which installs exactly what package-lock.json
// locks.
func installNode() (skip string, err error) {
	dir, err := filepath.Abs(nodeProjectDir)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeInstallTimeout)
	defer cancel()
	started := time.Now()
	npm := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	npm.Dir = dir
	npm.WaitDelay = 5 * time.Second
	if out, err := npm.CombinedOutput(); err != nil {
		if why := npmUnreachable.Find(out); why != nil {
			return fmt.Sprintf("npm cannot reach its registry to install kafkajs (%s)", why), nil
		}
		return "", fmt.Errorf("npm ci: %w\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "e2e: installed test/node in %v\n", time.Since(started).Round(100*time.Millisecond))
	return "", nil
}

// TestKafkaJSClient runs each check.js scenario against a fresh broker:
// KafkaJS, unchanged, must produce (idempotent; gzip, snappy, none) and
// consume in a group, share a group between two members that rebalance,
// administer topics, configs, offsets and groups, read a topic the log
// cleaner compacted, and run transactions that commit (with group offsets)
// and abort.
func TestKafkaJSClient(t *testing.T) {
	t.Parallel()
	kafkajsReady(t)
	overrides := map[string][]string{"compacted": {"log.cleaner.backoff.ms=100"}}
	for _, scenario := range []string{"produce-consume", "group", "admin", "compacted", "transactions"} {
		t.Run(scenario, func(t *testing.T) {
			b := startBroker(t, t.TempDir(), overrides[scenario]...)
			runKafkaJSCheck(t, b.Addr, scenario)
		})
	}
}

// runKafkaJSCheck runs one scenario in node and fails the test with the
// scenario's verdict line and its whole output when it does not pass.
func runKafkaJSCheck(t *testing.T, addr, scenario string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeScenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "check.js", addr, scenario)
	cmd.Dir = nodeProjectDir
	cmd.Env = append(os.Environ(), "KAFKAJS_NO_PARTITIONER_WARNING=1")
	runCheckProgram(t, "check.js "+scenario, cmd)
}
