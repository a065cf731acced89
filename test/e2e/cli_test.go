package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// runCLI runs the strata binary and returns its combined output and exit code.
func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runCommand(t, exec.Command(strataBin, args...))
}

// runCommand runs cmd (strata, or a command that runs it) for at most 30 s
// and returns its combined output and exit code.
func runCommand(t *testing.T, cmd *exec.Cmd) (string, int) {
	t.Helper()
	cmd.Env = append(os.Environ(), "STRATA_BIN=")
	done := make(chan struct{})
	timer := time.AfterFunc(30*time.Second, func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return string(out), 0
}

// requireOneClearLine checks that a failing command printed exactly one
// line, naming what is wrong.
func requireOneClearLine(t *testing.T, out string, code int, mentions ...string) {
	t.Helper()
	if code == 0 {
		t.Fatalf("want a non-zero exit, got 0; output:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line of output, got %d:\n%s", len(lines), out)
	}
	for _, m := range mentions {
		if !strings.Contains(lines[0], m) {
			t.Fatalf("the error line %q does not mention %q", lines[0], m)
		}
	}
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		args     []string
		mentions []string
	}{
		{"unknown flag", []string{"serve", "--no-such-flag"}, []string{"--no-such-flag"}},
		{"data dir is a file", []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(file, "sub")}, []string{"data dir", file}},
		{"unknown config key", []string{"serve", "--data-dir", t.TempDir(), "--override", "no.such.key=1"}, []string{"no.such.key"}},
		{"bad config value", []string{"serve", "--data-dir", t.TempDir(), "--override", "num.partitions=many"}, []string{"num.partitions", "many"}},
		{"override without =", []string{"serve", "--data-dir", t.TempDir(), "--override", "num.partitions"}, []string{"key=value"}},
		{"missing segment file", []string{"inspect", "segment", filepath.Join(t.TempDir(), "00000000000000000000.log")}, []string{"00000000000000000000.log"}},
		{"unknown command", []string{"frobnicate"}, []string{"frobnicate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := runCLI(t, c.args...)
			requireOneClearLine(t, out, code, c.mentions...)
		})
	}
}

func TestCLIVersion(t *testing.T) {
	t.Parallel()
	out, code := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "strata ") {
		t.Fatalf("strata version: exit %d, output %q", code, out)
	}
}

// TestInspectSegment dumps a segment the broker wrote and checks that a
// corrupted copy is reported as such.
func TestInspectSegment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir)
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic("inspected"), kgo.AllowAutoTopicCreation())
	for i := range 3 {
		produceSync(t, cl, &kgo.Record{Key: []byte("k"), Value: []byte(value("v", i))})
	}
	cl.Close()
	b.Stop()

	seg := filepath.Join(dir, "inspected-0", "00000000000000000000.log")
	out, code := runCLI(t, "inspect", "segment", seg, "--records")
	if code != 0 {
		t.Fatalf("inspect failed (exit %d):\n%s", code, out)
	}
	for _, want := range []string{"baseOffset: 0", "baseOffset: 2", "isvalid: true", "| offset: 1 ", "3 batches, all valid"} {
		if !strings.Contains(out, want) {
			t.Fatalf("inspect output lacks %q:\n%s", want, out)
		}
	}

	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// A live broker's active segment has zeros after its data.
	padded := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(padded, append(append([]byte(nil), data...), make([]byte, 4096)...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "inspect", "segment", padded)
	if code != 0 || !strings.Contains(out, "4096 zero bytes after the data") || !strings.Contains(out, "3 batches, all valid") {
		t.Fatalf("a zero-filled tail is not damage; exit %d:\n%s", code, out)
	}
	data[len(data)-1] ^= 0xff // flip a bit in the last record
	bad := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "inspect", "segment", bad)
	if code == 0 || !strings.Contains(out, "fails its CRC") {
		t.Fatalf("a corrupt segment must fail with a CRC error; exit %d:\n%s", code, out)
	}
}

// TestCLISecurityConfigErrors: a TLS or SASL listener that cannot work is
// one clear line at startup, naming the config to fix.
func TestCLISecurityConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-keystore.pem")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	pki := newTestPKI(t, dir)
	encryptedKey, err := pki.EncryptedServerKeyPEM("pw")
	if err != nil {
		t.Fatal(err)
	}
	encrypted := filepath.Join(dir, "encrypted.pem")
	writeFile(t, encrypted, append(append([]byte{}, pki.ServerCertPEM...), encryptedKey...))
	cases := []struct {
		name     string
		args     []string
		mentions []string
	}{
		{"ssl without keystore", []string{"--override", "listeners=SSL://127.0.0.1:0"}, []string{"ssl.keystore"}},
		{"keystore missing", []string{"--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.location=" + missing},
			[]string{"ssl.keystore.location", missing}},
		{"keystore garbage", []string{"--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.location=" + garbage},
			[]string{"ssl.keystore.location", garbage}},
		{"jks keystore without its password", []string{"--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.type=JKS",
			"--override", "ssl.keystore.location=" + garbage}, []string{"ssl.keystore.password", "must be set", garbage}},
		{"jks keystore that is not one", []string{"--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.type=JKS",
			"--override", "ssl.keystore.location=" + garbage, "--override", "ssl.keystore.password=x"}, []string{"ssl.keystore.location", garbage, "is neither a JKS nor a PKCS12 store"}},
		{"jceks keystore", []string{"--override", "ssl.keystore.type=JCEKS"}, []string{"ssl.keystore.type", "PEM, PKCS12, JKS"}},
		{"gssapi", []string{"--override", "sasl.enabled.mechanisms=GSSAPI"}, []string{"sasl.enabled.mechanisms", "GSSAPI"}},
		{"plain without users", []string{"--override", "listeners=SASL_PLAINTEXT://127.0.0.1:0", "--override", "sasl.enabled.mechanisms=PLAIN"},
			[]string{"listener.name.sasl_plaintext.plain.sasl.jaas.config"}},
		{"encrypted PEM key without its password", []string{"--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.location=" + encrypted},
			[]string{"ssl.keystore.location", encrypted, "the private key is encrypted: set ssl.key.password"}},
		{"encrypted PEM key with a wrong password", []string{"--override", "listeners=SSL://127.0.0.1:0", "--override", "ssl.keystore.location=" + encrypted,
			"--override", "ssl.key.password=nope"}, []string{"ssl.keystore.location", "the password is wrong"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"serve", "--data-dir", filepath.Join(t.TempDir(), "data")}, c.args...)
			out, code := runCLI(t, args...)
			requireOneClearLine(t, out, code, c.mentions...)
		})
	}
}

// TestInspectIndex dumps the indexes of a segment the broker wrote: every
// entry agrees with the .log; an index whose entry was moved is reported,
// with what to do.
func TestInspectIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir)
	const topic = "indexed"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, map[string]*string{"index.interval.bytes": kmsg.StringPtr("1")})
	cl := newClient(t, b.Addr, kgo.DefaultProduceTopic(topic))
	for i := range 5 {
		produceSync(t, cl, &kgo.Record{Value: []byte(value("v", i))})
	}
	cl.Close()
	b.Stop() // the active segment's indexes are written at close

	segDir := filepath.Join(dir, topic+"-0")
	for _, tc := range []struct{ file, entry string }{
		{"00000000000000000000.index", "offset: 4 position: "},
		{"00000000000000000000.timeindex", "timestamp: "},
	} {
		out, code := runCLI(t, "inspect", "index", filepath.Join(segDir, tc.file))
		if code != 0 || !strings.Contains(out, tc.entry) || !strings.Contains(out, "all consistent with the 5 batches") {
			t.Fatalf("inspect index %s: exit %d:\n%s", tc.file, code, out)
		}
	}

	moved := t.TempDir()
	data, err := os.ReadFile(filepath.Join(segDir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(segDir, "00000000000000000000.index"))
	if err != nil {
		t.Fatal(err)
	}
	idx[7]++ // the first entry's position, one byte on
	for name, b := range map[string][]byte{"00000000000000000000.log": data, "00000000000000000000.index": idx} {
		if err := os.WriteFile(filepath.Join(moved, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code := runCLI(t, "inspect", "index", filepath.Join(moved, "00000000000000000000.index"))
	if code == 0 || !strings.Contains(out, "is not the start of a batch") || !strings.Contains(out, "delete the index file") {
		t.Fatalf("a moved index entry must fail the check and say what to do; exit %d:\n%s", code, out)
	}
}
