package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Java client (org.apache.kafka:kafka-clients, the reference client) is
// driven by test/java/src/main/java/StrataCheck.java: Maven resolves its
// dependencies into ~/.m2 and writes their class path, javac compiles the one
// class, and each scenario runs in its own JVM against its own broker.
const (
	javaProjectDir = "../java"
	// javaDependencyPlugin is named in full: resolving a plugin prefix needs
	// the registry's group metadata, which a partial mirror may not serve.
	javaDependencyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath"
	// javaBuildTimeout covers a cold ~/.m2: kafka-clients, its compression
	// libraries and the dependency plugin are downloaded once.
	javaBuildTimeout = 8 * time.Minute
	// javaScenarioTimeout is above StrataCheck's own 55 s deadline, so that
	// its one-line verdict is what a slow broker produces.
	javaScenarioTimeout = 90 * time.Second
)

// registryUnreachable matches Maven's words for a registry it cannot reach at
// all, as opposed to a pom or a version that is wrong.
var registryUnreachable = regexp.MustCompile(`Unknown host [^\s:]+|UnknownHostException: [^\s:]+|Network is unreachable|Connection refused|Connect timed out|No route to host`)

var javaBuild struct {
	once      sync.Once
	classpath string
	// skip says why the Java tests cannot run here; err why the build failed.
	skip string
	err  error
}

// javaClasspath builds the Java project once per run and returns the class
// path of StrataCheck, or skips the test when Java, Maven or the Maven
// registry is missing. REQUIRE_JAVA=1 turns those skips into failures.
func javaClasspath(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"java", "javac", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			javaSkip(t, fmt.Sprintf("%s is not on PATH (the Java client test needs a JDK 17+ and Maven)", tool))
		}
	}
	javaBuild.once.Do(func() {
		javaBuild.classpath, javaBuild.skip, javaBuild.err = buildJava()
	})
	if javaBuild.skip != "" {
		javaSkip(t, javaBuild.skip)
	}
	if javaBuild.err != nil {
		t.Fatalf("building test/java: %v", javaBuild.err)
	}
	return javaBuild.classpath
}

func javaSkip(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("REQUIRE_JAVA") == "1" {
		t.Fatalf("REQUIRE_JAVA=1 but %s", why)
	}
	t.Skip(why)
}

// buildJava resolves the dependencies with Maven and compiles StrataCheck
// into test/java/target (ignored by git).
func buildJava() (classpath, skip string, err error) {
	dir, err := filepath.Abs(javaProjectDir)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), javaBuildTimeout)
	defer cancel()
	started := time.Now()
	cpFile := filepath.Join(dir, "target", "classpath.txt")
	mvn := exec.CommandContext(ctx, "mvn", "-B", "-q", "-Dstyle.color=never", javaDependencyPlugin, "-Dmdep.outputFile="+cpFile)
	mvn.Dir = dir
	mvn.WaitDelay = 5 * time.Second
	if out, err := mvn.CombinedOutput(); err != nil {
		if why := registryUnreachable.Find(out); why != nil {
			return "", fmt.Sprintf("Maven cannot reach its registry to resolve kafka-clients (%s)", why), nil
		}
		return "", "", fmt.Errorf("mvn %s: %w\n%s", javaDependencyPlugin, err, out)
	}
	deps, err := os.ReadFile(cpFile)
	if err != nil {
		return "", "", err
	}
	if !strings.Contains(string(deps), "kafka-clients") {
		return "", "", fmt.Errorf("%s lacks kafka-clients: %s", cpFile, deps)
	}
	classes := filepath.Join(dir, "target", "classes")
	javac := exec.CommandContext(ctx, "javac", "--release", "17", "-nowarn", "-d", classes,
		"-cp", strings.TrimSpace(string(deps)), filepath.Join(dir, "src", "main", "java", "StrataCheck.java"))
	if out, err := javac.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("javac: %w\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "e2e: built test/java in %v\n", time.Since(started).Round(100*time.Millisecond))
	return classes + string(os.PathListSeparator) + strings.TrimSpace(string(deps)), "", nil
}

// TestJavaClient runs each StrataCheck scenario against a fresh broker: the
// Java client, unchanged, must produce (idempotent, every codec), consume,
// share a classic consumer group and a consumer-protocol one (KIP-848),
// administer topics, configs and groups, and read a topic the log cleaner
// compacted.
func TestJavaClient(t *testing.T) {
	t.Parallel()
	classpath := javaClasspath(t)
	overrides := map[string][]string{
		"compacted":               {"log.cleaner.backoff.ms=100"},
		"consumer-protocol-group": {"group.consumer.min.heartbeat.interval.ms=100", "group.consumer.heartbeat.interval.ms=500"},
	}
	for _, scenario := range []string{"produce-consume", "group", "consumer-protocol-group", "admin", "compacted", "transactions"} {
		t.Run(scenario, func(t *testing.T) {
			b := startBroker(t, t.TempDir(), overrides[scenario]...)
			runStrataCheck(t, classpath, b.Addr, scenario)
		})
	}
}

// runStrataCheck runs one scenario in a JVM and fails the test with the
// scenario's verdict line and its whole output when it does not pass.
func runStrataCheck(t *testing.T, classpath, addr, scenario string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), javaScenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java",
		// A short-lived client: start fast rather than peak fast.
		"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", classpath, "StrataCheck", addr, scenario)
	runCheckProgram(t, "StrataCheck "+scenario, cmd)
}

// runCheckProgram runs cmd, a client's check program (StrataCheck,
// check.js) whose last line starting "OK " or "FAIL " is its verdict, and
// fails the test with that line and the whole output unless it exited 0
// with an OK line.
func runCheckProgram(t *testing.T, what string, cmd *exec.Cmd) {
	t.Helper()
	cmd.WaitDelay = 5 * time.Second
	started := time.Now()
	out, err := cmd.CombinedOutput()
	verdict := lastLinePrefixed(out, "OK ", "FAIL ")
	var exit *exec.ExitError
	switch {
	case err == nil && strings.HasPrefix(verdict, "OK "):
		t.Logf("%s (%v)", verdict, time.Since(started).Round(100*time.Millisecond))
	case err == nil:
		t.Fatalf("%s exited 0 without an OK line:\n%s", what, out)
	case errors.As(err, &exit) && verdict != "":
		t.Fatalf("%s\n--- %s output ---\n%s", verdict, what, out)
	default:
		t.Fatalf("%s: %v\n--- output ---\n%s", what, err, out)
	}
}

func lastLinePrefixed(out []byte, prefixes ...string) string {
	lines := strings.Split(string(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, p := range prefixes {
			if strings.HasPrefix(lines[i], p) {
				return strings.TrimSpace(lines[i])
			}
		}
	}
	return ""
}
