package e2e

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// strataBin is the broker binary under test, set once by TestMain.
var strataBin string

const (
	brokerReadyTimeout = 20 * time.Second
	brokerStopTimeout  = 10 * time.Second
	// stackDumpTimeout bounds the wait for a broker that did not stop to
	// print its goroutines after SIGQUIT; then it is killed.
	stackDumpTimeout = 5 * time.Second
	// bindRetries bounds how often a start is retried when the chosen port
	// was taken between picking it and the broker binding it.
	bindRetries = 10
)

// readyLine is the one line the broker prints on stdout once it serves:
// "listening on ADDR" for one listener, "ADDR (NAME), ADDR (NAME)" for
// several.
var readyLine = regexp.MustCompile(`^strata: listening on (.+), data in (.+)$`)

// listenerInReady is one "ADDR (NAME)" of a ready line with several listeners.
var listenerInReady = regexp.MustCompile(`^(127\.0\.0\.1:\d+) \(([A-Z_]+)\)$`)

// readyListeners parses the addresses of a ready line: name → address, or
// "" → address for a broker with one listener.
func readyListeners(s string) map[string]string {
	parts := strings.Split(s, ", ")
	if len(parts) == 1 && !strings.Contains(s, " (") {
		return map[string]string{"": s}
	}
	out := make(map[string]string, len(parts))
	for _, p := range parts {
		if m := listenerInReady.FindStringSubmatch(p); m != nil {
			out[m[2]] = m[1]
		}
	}
	return out
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if bin := os.Getenv("STRATA_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: STRATA_BIN: %v\n", err)
			return 1
		}
		strataBin = abs
	} else {
		dir, err := os.MkdirTemp("", "strata-e2e-bin-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		strataBin = filepath.Join(dir, "strata")
		if err := buildBroker(strataBin); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building the broker: %v\n", err)
			return 1
		}
	}
	code := m.Run()
	if code != 0 {
		return code
	}
	// The broker is another process; what can leak here are the harness's
	// own goroutines (pumps, proxies) and client goroutines left unclosed.
	if err := goleak.Find(
		// sarama registers go-metrics meters, whose arbiter ticks forever.
		goleak.IgnoreTopFunction("github.com/rcrowley/go-metrics.(*meterArbiter).tick"),
	); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: goroutine leak: %v\n", err)
		return 1
	}
	return 0
}

// buildBroker compiles ./cmd/strata of this module into out.
func buildBroker(out string) error {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", out, "./cmd/strata")
	cmd.Dir = root
	output, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, output)
	}
	return nil
}

// Broker is one strata process (and its restarts) owned by one test.
type Broker struct {
	// Addr is host:port of the listener; it stays the same across Restart.
	Addr string
	// Dir is the data directory; it stays the same across Restart.
	Dir string

	// Listeners maps each listener's name to its host:port when the broker
	// was started with named listeners (startBrokerListeners); Addr is then
	// the first one's.
	Listeners map[string]string

	t         *testing.T
	port      int
	overrides []string
	names     []string // listener names, in order; nil: one PLAINTEXT via --listen
	// config, if set, writes a properties file for this start and returns
	// its path, passed as --config (flags still override it).
	config func(*Broker) string
	output *syncBuffer
	// launcher, when set, is a command that starts the broker, the
	// broker's command line following it (prlimit --nofile=N:N --).
	launcher []string
	// readyTimeout bounds each start's wait for the ready line; zero is
	// brokerReadyTimeout. A cluster node waits for its quorum first.
	readyTimeout time.Duration

	mu struct {
		sync.Mutex
		cmd *exec.Cmd
		// exited is closed once the current process has been waited for.
		exited chan struct{}
		// stopping is set by Stop and Kill; an exit without it is a
		// crash the test did not ask for.
		stopping bool
	}
}

// startBroker starts a single-node broker on a free loopback port with its
// data in dir. Each override is "key=value". The broker is stopped with
// SIGTERM when the test ends, and its output is logged if the test failed.
func startBroker(t *testing.T, dir string, overrides ...string) *Broker {
	t.Helper()
	b := &Broker{Dir: dir, t: t, overrides: overrides, output: &syncBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("broker output (%s):\n%s", b.Addr, b.output.String())
		}
	})
	t.Cleanup(func() {
		if b.running() {
			b.Stop()
			return
		}
		if cmd, _ := b.current(); cmd != nil && !b.stopRequested() {
			t.Errorf("broker %s exited on its own during the test: %v%s", b.Addr, cmd.ProcessState, b.crashReport())
		}
	})
	for attempt := 0; ; attempt++ {
		b.port = freePort(t)
		b.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
		err := b.start()
		if err == nil {
			return b
		}
		if !errors.Is(err, errAddrInUse) || attempt >= bindRetries {
			t.Fatalf("starting broker: %v", err)
		}
	}
}

// Stop sends SIGTERM and waits up to brokerStopTimeout; the broker must exit
// with status 0.
func (b *Broker) Stop() {
	b.t.Helper()
	cmd, exited := b.current()
	if cmd == nil {
		b.t.Fatalf("Stop: broker %s is not running", b.Addr)
	}
	b.setStopping()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		b.t.Errorf("Stop: SIGTERM: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(brokerStopTimeout):
		// SIGQUIT makes the Go runtime print every goroutine's stack into
		// the broker's output: the log of the failure says where it hung.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(stackDumpTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
		b.t.Errorf("Stop: broker %s did not exit within %v of SIGTERM (its goroutines are in its output)", b.Addr, brokerStopTimeout)
		return
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		b.t.Errorf("Stop: broker %s exited with status %d after SIGTERM, want 0%s", b.Addr, code, b.crashReport())
	}
}

// crashReport is the panic or race report in the broker's output, on lines
// of its own after a colon; "" when it printed none.
func (b *Broker) crashReport() string {
	if excerpt := crashExcerpt(b.output.String()); excerpt != "" {
		return ":\n" + excerpt
	}
	return ""
}

// Kill crashes the broker with SIGKILL and waits for the process to be gone.
func (b *Broker) Kill() {
	b.t.Helper()
	cmd, exited := b.current()
	if cmd == nil {
		b.t.Fatalf("Kill: broker %s is not running", b.Addr)
	}
	b.setStopping()
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		b.t.Fatalf("Kill: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(brokerStopTimeout):
		b.t.Fatalf("Kill: broker %s still not reaped after %v", b.Addr, brokerStopTimeout)
	}
}

// Restart starts the broker again on the same port and data directory. The
// previous process must have been stopped or killed.
func (b *Broker) Restart() {
	b.t.Helper()
	if b.running() {
		b.t.Fatalf("Restart: broker %s is still running", b.Addr)
	}
	fmt.Fprintf(b.output, "---- restart ----\n")
	for attempt := 0; ; attempt++ {
		err := b.start()
		if err == nil {
			return
		}
		if !errors.Is(err, errAddrInUse) || attempt >= bindRetries {
			b.t.Fatalf("Restart: %v", err)
		}
		// Something else holds our port for a moment; it is ours to reuse.
		time.Sleep(200 * time.Millisecond)
	}
}

var errAddrInUse = errors.New("address already in use")

// start launches one process and waits for its ready line.
func (b *Broker) start() error {
	args := []string{"serve", "--listen", b.Addr, "--data-dir", b.Dir}
	if b.names != nil {
		args = []string{"serve", "--data-dir", b.Dir, "--override", "listeners=" + b.listenersConfig()}
	}
	if b.config != nil {
		args = append(args, "--config", b.config(b))
	}
	for _, o := range b.overrides {
		args = append(args, "--override", o)
	}
	readyTimeout := cmp.Or(b.readyTimeout, brokerReadyTimeout)
	argv := append(append(slices.Clone(b.launcher), strataBin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	outputStart := b.output.Len()
	ready := make(chan string, 1)
	cmd.Stdout = &lineWatcher{out: b.output, ready: ready}
	cmd.Stderr = b.output
	// Bounds Wait if a stray child keeps the output pipes open.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("exec %s: %w", strataBin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	b.mu.Lock()
	b.mu.cmd, b.mu.exited, b.mu.stopping = cmd, exited, false
	b.mu.Unlock()

	select {
	case line := <-ready:
		m := readyLine.FindStringSubmatch(line)
		if err := b.checkListening(readyListeners(m[1])); err != nil {
			b.Kill()
			return err
		}
		if m[2] != b.Dir {
			b.Kill()
			return fmt.Errorf("broker says its data is in %q, asked for %q", m[2], b.Dir)
		}
		return nil
	case <-exited:
		b.clear()
		if strings.Contains(b.output.Since(outputStart), "address already in use") {
			return fmt.Errorf("broker on %s exited before ready: %w", b.Addr, errAddrInUse)
		}
		return fmt.Errorf("broker on %s exited before ready: %v", b.Addr, cmd.ProcessState)
	case <-time.After(readyTimeout):
		b.Kill()
		return fmt.Errorf("broker on %s printed no ready line within %v", b.Addr, readyTimeout)
	}
}

// signal sends sig to the running process (SIGSTOP and SIGCONT pause and
// resume it); the broker must be running.
func (b *Broker) signal(sig syscall.Signal) {
	b.t.Helper()
	cmd, _ := b.current()
	if cmd == nil || !b.running() {
		b.t.Fatalf("signal %v: broker %s is not running", sig, b.Addr)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		b.t.Fatalf("signal %v to broker %s: %v", sig, b.Addr, err)
	}
}

// current returns the running process, or nil if it has exited.
func (b *Broker) current() (*exec.Cmd, chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.cmd, b.mu.exited
}

func (b *Broker) setStopping() {
	b.mu.Lock()
	b.mu.stopping = true
	b.mu.Unlock()
}

func (b *Broker) stopRequested() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.stopping
}

func (b *Broker) running() bool {
	_, exited := b.current()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

func (b *Broker) clear() {
	b.mu.Lock()
	b.mu.cmd, b.mu.exited = nil, nil
	b.mu.Unlock()
}

// freePort asks the kernel for a free loopback port, never one handed out
// before in this process, and releases it, so that the broker can bind it
// (and bind it again after a restart).
func freePort(t *testing.T) int {
	t.Helper()
	return freePorts(t, 1)[0]
}

// lineWatcher copies the broker's stdout into out and reports the first
// ready line on ready.
type lineWatcher struct {
	out     *syncBuffer
	ready   chan<- string
	partial []byte
	sent    bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.out.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(w.partial[:i]), "\r")
		w.partial = w.partial[i+1:]
		if !w.sent && readyLine.MatchString(line) {
			w.sent = true
			w.ready <- line
		}
	}
	return len(p), nil
}

// syncBuffer is a bytes.Buffer safe for the concurrent writers exec uses.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Len()
}

// Since returns what was written after the first n bytes.
func (s *syncBuffer) Since(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.buf.Bytes()[n:])
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
